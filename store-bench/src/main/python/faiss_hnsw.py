#!/usr/bin/python3
"""FAISS's HNSW side of the HNSW comparison (dev.nepenthe.bench.hnsw.HnswCompareBench).

Reads base.fvecs, query.fvecs and gt.ivecs that the Java harness wrote and, for each of
--indexes, builds with the same M and efConstruction and measures as hnswlib_side.py does
(ann_sweep.py), printing 'faiss <what> engine=<name> key=value ...' lines:
  flat  faiss.IndexHNSWFlat(d, M, metric): float32 vectors; engine name 'faiss'
  sq8   faiss.IndexHNSWSQ(d, QT_8bit, M, metric): 8-bit scalar-quantized vectors (per-dimension
        ranges trained on the base vectors), graph built and searched on those codes, no
        rerank; engine name 'faiss-sq8'
Metric: METRIC_L2, or METRIC_INNER_PRODUCT for cosine (the vectors arrive unit length).
Builds run on one OpenMP thread; each search pass is one batched index.search call with
hnsw.efSearch = ef, on one thread for the sweep and omp_set_num_threads(T) for the scaling
table. Memory: the serialized index (faiss.serialize_index) over n.
Run with Debian's python3-faiss: /usr/bin/python3 faiss_hnsw.py --dir DIR ...
"""
import argparse
import os
import time

import faiss
import numpy as np

from ann_sweep import add_arguments, floats, ints, scale, sweep
from vecfiles import read_vecs


def make(kind, d, m, metric):
    if kind == "flat":
        return "faiss", faiss.IndexHNSWFlat(d, m, metric)
    if kind == "sq8":
        return "faiss-sq8", faiss.IndexHNSWSQ(d, faiss.ScalarQuantizer.QT_8bit, m, metric)
    raise SystemExit("--indexes: expected flat or sq8, got '%s'" % kind)


def main():
    ap = argparse.ArgumentParser()
    add_arguments(ap)
    ap.add_argument("--indexes", default="flat", help="comma-separated: flat, sq8")
    a = ap.parse_args()

    xb = read_vecs(os.path.join(a.dir, "base.fvecs"), np.float32)
    xq = read_vecs(os.path.join(a.dir, "query.fvecs"), np.float32)
    gt = read_vecs(os.path.join(a.dir, "gt.ivecs"), np.int32)
    n, d = xb.shape
    metric = faiss.METRIC_L2 if a.space == "l2" else faiss.METRIC_INNER_PRODUCT

    for kind in a.indexes.split(","):
        name, index = make(kind.strip(), d, a.m, metric)
        index.hnsw.efConstruction = a.efc
        faiss.omp_set_num_threads(1)
        t0 = time.perf_counter()
        if not index.is_trained:
            index.train(xb)
        index.add(xb)
        print("faiss build engine=%s s=%.3f threads=1" % (name, time.perf_counter() - t0), flush=True)
        print("faiss memory engine=%s part=serialized_index bytes=%d" % (name, faiss.serialize_index(index).size),
              flush=True)

        def set_ef(ef, index=index):
            index.hnsw.efSearch = ef

        def search(queries, t, index=index):
            faiss.omp_set_num_threads(t)
            return index.search(queries, a.k)[1]

        curve = sweep("faiss", name, set_ef, search, xq, gt, a.k, ints(a.efs), a.passes)
        scale("faiss", name, set_ef, search, xq, a.k, curve, floats(a.targets), ints(a.scale_threads), a.passes)
        faiss.omp_set_num_threads(1)
        del index


if __name__ == "__main__":
    main()
