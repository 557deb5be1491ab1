#!/usr/bin/python3
"""FAISS IndexIVFPQ side of the IVF-PQ benchmark (dev.nepenthe.bench.ivfpq.IvfPqBench).

Reads base.fvecs, query.fvecs and gt.ivecs (exact top-k) that the Java harness wrote, builds
IndexIVFPQ with the same nlist, m, nbits, training sample and k-means iterations, and prints one
line per measurement (wall-clock and process-CPU-time figures) as 'faiss <name> key=value ...' for the harness to parse. Single-threaded
(omp_set_num_threads(1); the harness also sets OMP/OPENBLAS_NUM_THREADS=1) so the QPS compare with the single-threaded Java search.

Forgetting: for every remove_<label>.ivecs file it removes those ids from a clone of the index
with remove_ids and reports how far each coarse centroid is from the mean of its surviving
members (FAISS never moves centroids, so after removal they keep the removed vectors' pull).
Run with Debian's python3-faiss: /usr/bin/python3 faiss_ivfpq.py --dir DIR ...
"""
import argparse
import glob
import os
import time

import faiss
import numpy as np

from vecfiles import read_vecs, recall_at_k


def centroid_deviation(ivf, xb):
    """Relative distance of each non-empty list's centroid from the mean of its members."""
    invlists = ivf.invlists
    centroids = ivf.quantizer.reconstruct_n(0, ivf.nlist)
    devs = []
    for l in range(ivf.nlist):
        size = invlists.list_size(l)
        if size == 0:
            continue
        ids = faiss.rev_swig_ptr(invlists.get_ids(l), size).copy()
        members = xb[ids].astype(np.float64)
        mean = members.mean(axis=0)
        scale = max(np.linalg.norm(mean), 1e-3 * np.linalg.norm(members, axis=1).mean())
        devs.append(np.linalg.norm(centroids[l] - mean) / scale)
    devs = np.array(devs)
    return float(devs.max()), float(np.median(devs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--nlist", type=int, required=True)
    ap.add_argument("--m", type=int, required=True)
    ap.add_argument("--nbits", type=int, default=8)
    ap.add_argument("--train", type=int, required=True, help="train on the first TRAIN base vectors")
    ap.add_argument("--niter", type=int, default=25)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--rerank", type=int, default=100)
    ap.add_argument("--nprobes", default="4,16,64")
    ap.add_argument("--passes", type=int, default=3, help="timed passes over the queries; the median is kept")
    ap.add_argument("--seeds", type=int, default=0, help="extra builds with k-means seeds 1..SEEDS (recall spread)")
    a = ap.parse_args()
    faiss.omp_set_num_threads(1)

    xb = read_vecs(os.path.join(a.dir, "base.fvecs"), np.float32)
    xq = read_vecs(os.path.join(a.dir, "query.fvecs"), np.float32)
    gt = read_vecs(os.path.join(a.dir, "gt.ivecs"), np.int32)
    d = xb.shape[1]

    quantizer = faiss.IndexFlatL2(d)
    ivf = faiss.IndexIVFPQ(quantizer, d, a.nlist, a.m, a.nbits)
    ivf.cp.niter = a.niter
    ivf.pq.cp.niter = a.niter
    ivf.cp.seed = 1234
    t0, c0 = time.perf_counter(), time.process_time()
    ivf.train(xb[: a.train])
    t1, c1 = time.perf_counter(), time.process_time()
    ivf.add(xb)
    t2, c2 = time.perf_counter(), time.process_time()
    print("faiss build train_s=%.3f add_s=%.3f total_s=%.3f train_cpu_s=%.3f total_cpu_s=%.3f"
          % (t1 - t0, t2 - t1, t2 - t0, c1 - c0, c2 - c0), flush=True)

    # Exact re-rank from a flat copy of the full vectors (what IndexRefineFlat holds).
    flat = faiss.IndexFlatL2(d)
    flat.add(xb)
    refine = faiss.IndexRefine(ivf, flat)
    code_bytes = ivf.pq.code_size + 8  # FAISS stores a 64-bit id per entry
    print("faiss memory code_bytes=%d id_bytes=8 per_vector=%d raw=%d" % (ivf.pq.code_size, code_bytes, 4 * d))

    # Passes go round-robin over the settings (as the Java harness does), so a slow stretch of a
    # shared machine lands on all settings alike rather than on the first one measured.
    settings = [(int(x), rerank) for x in a.nprobes.split(",") for rerank in (0, a.rerank)]

    def run(nprobe, rerank, queries):
        ivf.nprobe = nprobe
        if rerank > 0:
            refine.k_factor = rerank / float(a.k)
            return refine.search(queries, a.k)
        return ivf.search(queries, a.k)

    for nprobe, rerank in settings:
        run(nprobe, rerank, xq[: min(100, len(xq))])  # warm-up
    walls = {st: [] for st in settings}
    cpus = {st: [] for st in settings}
    found = {}
    for _ in range(a.passes):
        for st in settings:
            s, c = time.perf_counter(), time.process_time()
            _, found[st] = run(st[0], st[1], xq)
            cpus[st].append(time.process_time() - c)
            walls[st].append(time.perf_counter() - s)
    for st in settings:
        wall = sorted(walls[st])[len(walls[st]) // 2]
        cpu = sorted(cpus[st])[len(cpus[st]) // 2]
        print("faiss search nprobe=%d rerank=%d qps=%.1f cpu_qps=%.1f recall=%.4f"
              % (st[0], st[1], len(xq) / wall, len(xq) / cpu, recall_at_k(found[st], gt, a.k)), flush=True)

    for seed in range(1, a.seeds + 1):
        q2 = faiss.IndexFlatL2(d)
        other = faiss.IndexIVFPQ(q2, d, a.nlist, a.m, a.nbits)
        other.cp.niter = a.niter
        other.pq.cp.niter = a.niter
        other.cp.seed = seed
        other.pq.cp.seed = seed
        other.train(xb[: a.train])
        other.add(xb)
        other.nprobe = 16
        other_refine = faiss.IndexRefine(other, flat)
        for rerank in (0, a.rerank):
            idx = other
            if rerank > 0:
                idx = other_refine
                other_refine.k_factor = rerank / float(a.k)
            _, found = idx.search(xq, a.k)
            print("faiss seed seed=%d rerank=%d recall=%.4f" % (seed, rerank, recall_at_k(found, gt, a.k)), flush=True)

    dmax, dmed = centroid_deviation(ivf, xb)
    print("faiss centroid label=none max_dev=%.6g median_dev=%.6g" % (dmax, dmed), flush=True)
    for path in sorted(glob.glob(os.path.join(a.dir, "remove_*.ivecs"))):
        label = os.path.basename(path)[len("remove_"):-len(".ivecs")]
        ids = read_vecs(path, np.int32).reshape(-1).astype(np.int64)
        clone = faiss.clone_index(ivf)
        s = time.perf_counter()
        removed = clone.remove_ids(ids)
        t = time.perf_counter() - s
        dmax, dmed = centroid_deviation(clone, xb)
        print("faiss remove label=%s removed=%d remove_s=%.4f max_dev=%.6g median_dev=%.6g"
              % (label, removed, t, dmax, dmed), flush=True)


if __name__ == "__main__":
    main()
