#!/usr/bin/python3
"""hnswlib side of the HNSW benchmarks (dev.nepenthe.bench.hnsw.HnswCompareBench, HnswDeleteBench).

Reads base.fvecs, query.fvecs and gt.ivecs (exact top-k from Nepenthe's exact index) that the
Java harness wrote, builds an hnswlib index with the same M and ef_construction, and prints one
line per measurement as 'hnswlib <what> key=value ...' for the harness to parse.

--mode compare: single-threaded build, then for each ef a warm-up pass that measures recall and
  PASSES timed single-threaded passes over all queries (median kept), each one batched knn_query
  call; then, with --scale-threads, the same at the ef reaching each --targets recall with
  num_threads=T (ann_sweep.py).
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

from ann_sweep import add_arguments, floats, ints, scale, sweep
from vecfiles import read_vecs


def main():
    ap = argparse.ArgumentParser()
    add_arguments(ap)
    ap.add_argument("--mode", choices=["compare", "delete"], required=True)
    ap.add_argument("--threads", type=int, default=1, help="build threads in --mode delete")
    ap.add_argument("--build-threads", type=int, default=0,
                    help="--mode compare: afterwards, time one more build with this many threads")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()

    xb = read_vecs(os.path.join(a.dir, "base.fvecs"), np.float32)
    xq = read_vecs(os.path.join(a.dir, "query.fvecs"), np.float32)
    n, d = xb.shape
    efs = ints(a.efs)

    index = hnswlib.Index(space=a.space, dim=d)
    index.init_index(max_elements=n, M=a.m, ef_construction=a.efc, random_seed=a.seed)
    threads = 1 if a.mode == "compare" else a.threads
    index.set_num_threads(threads)
    t0 = time.perf_counter()
    index.add_items(xb, np.arange(n), num_threads=threads)
    print("hnswlib build engine=hnswlib s=%.3f threads=%d" % (time.perf_counter() - t0, threads), flush=True)
    index.set_num_threads(1)

    def search(queries, t):
        return index.knn_query(queries, k=a.k, num_threads=t)[0]

    if a.mode == "compare":
        gt = read_vecs(os.path.join(a.dir, "gt.ivecs"), np.int32)
        curve = sweep("hnswlib", "hnswlib", index.set_ef, search, xq, gt, a.k, efs, a.passes, " stage=-1")
        scale("hnswlib", "hnswlib", index.set_ef, search, xq, a.k, curve, floats(a.targets), ints(a.scale_threads),
              a.passes)
        if a.build_threads > 1:
            again = hnswlib.Index(space=a.space, dim=d)
            again.init_index(max_elements=n, M=a.m, ef_construction=a.efc, random_seed=a.seed)
            t0 = time.perf_counter()
            again.add_items(xb, np.arange(n), num_threads=a.build_threads)
            print("hnswlib buildThreads engine=hnswlib s=%.3f threads=%d" % (time.perf_counter() - t0, a.build_threads),
                  flush=True)
        return
    stage = 0
    while os.path.exists(os.path.join(a.dir, "remove_%d.ivecs" % stage)):
        ids = read_vecs(os.path.join(a.dir, "remove_%d.ivecs" % stage), np.int32).reshape(-1)
        s = time.perf_counter()
        for i in ids:
            index.mark_deleted(int(i))
        t = time.perf_counter() - s
        # What markDelete leaves: every marked node stays in the graph, traversed by searches.
        print("hnswlib delete stage=%d removed=%d mark_s=%.4f in_graph=%d" % (stage, len(ids), t,
                                                                            index.get_current_count()), flush=True)
        gt = read_vecs(os.path.join(a.dir, "gt_%d.ivecs" % stage), np.int32)
        sweep("hnswlib", "hnswlib", index.set_ef, search, xq, gt, a.k, efs, 0, " stage=%d" % stage)
        stage += 1


if __name__ == "__main__":
    main()
