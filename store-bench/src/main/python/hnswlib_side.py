#!/usr/bin/python3
"""hnswlib side of the HNSW benchmarks (dev.nepenthe.bench.hnsw.HnswCompareBench, HnswDeleteBench).

Reads base.fvecs, query.fvecs and gt.ivecs (exact top-k from Nepenthe's exact index) that the
Java harness wrote, builds an hnswlib index with the same M and ef_construction, and prints one
line per measurement as 'hnswlib <what> key=value ...' for the harness to parse.

--mode compare: single-threaded build, then for each ef a warm-up pass that measures recall and
  PASSES timed single-threaded passes over all queries (median kept).
--mode delete: build with --threads threads, then for every stage file remove_<i>.ivecs (the ids
  removed in that stage; stages are cumulative) markDelete them, and measure recall@k against
  gt_<i>.ivecs (exact top-k among the survivors). markDelete only sets a bit: the node stays in
  the graph and keeps routing searches, which skip it in results.
Run with Debian's python3-hnswlib: /usr/bin/python3 hnswlib_side.py --dir DIR ...
"""
import argparse
import os
import time

import hnswlib
import numpy as np

from vecfiles import read_vecs, recall_at_k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--mode", choices=["compare", "delete"], required=True)
    ap.add_argument("--space", choices=["l2", "ip"], default="l2")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--efs", default="16,32,64,128")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()

    xb = read_vecs(os.path.join(a.dir, "base.fvecs"), np.float32)
    xq = read_vecs(os.path.join(a.dir, "query.fvecs"), np.float32)
    n, d = xb.shape
    efs = [int(x) for x in a.efs.split(",")]

    index = hnswlib.Index(space=a.space, dim=d)
    index.init_index(max_elements=n, M=a.m, ef_construction=a.efc, random_seed=a.seed)
    threads = 1 if a.mode == "compare" else a.threads
    index.set_num_threads(threads)
    t0 = time.perf_counter()
    index.add_items(xb, np.arange(n), num_threads=threads)
    print("hnswlib build s=%.3f threads=%d" % (time.perf_counter() - t0, threads), flush=True)
    index.set_num_threads(1)

    def measure(truth, label, passes):
        for ef in efs:
            index.set_ef(max(ef, a.k))
            found, _ = index.knn_query(xq, k=a.k, num_threads=1)
            rec = recall_at_k(found, truth, a.k)
            walls = []
            for _ in range(passes):
                s = time.perf_counter()
                index.knn_query(xq, k=a.k, num_threads=1)
                walls.append(time.perf_counter() - s)
            qps = len(xq) / sorted(walls)[len(walls) // 2] if walls else 0.0
            print("hnswlib search %s ef=%d qps=%.1f recall=%.4f" % (label, ef, qps, rec), flush=True)

    if a.mode == "compare":
        measure(read_vecs(os.path.join(a.dir, "gt.ivecs"), np.int32), "stage=-1", a.passes)
        return
    stage = 0
    while os.path.exists(os.path.join(a.dir, "remove_%d.ivecs" % stage)):
        ids = read_vecs(os.path.join(a.dir, "remove_%d.ivecs" % stage), np.int32).reshape(-1)
        s = time.perf_counter()
        for i in ids:
            index.mark_deleted(int(i))
        t = time.perf_counter() - s
        print("hnswlib delete stage=%d removed=%d mark_s=%.4f" % (stage, len(ids), t), flush=True)
        measure(read_vecs(os.path.join(a.dir, "gt_%d.ivecs" % stage), np.int32), "stage=%d" % stage, 0)
        stage += 1


if __name__ == "__main__":
    main()
