"""What the peer scripts share: reading the .fvecs/.ivecs files the Java harnesses write, and
recall@k against the exact answers. Imported by faiss_ivfpq.py, faiss_hnsw.py, hnswlib_side.py
and ann_sweep.py (which run from this folder, so it is on their import path)."""
import numpy as np


def read_vecs(path, dtype):
    raw = np.fromfile(path, dtype=np.int32)
    dim = raw[0]
    rows = raw.reshape(-1, dim + 1)[:, 1:]
    return np.ascontiguousarray(rows.view(dtype) if dtype == np.float32 else rows)


def recall_at_k(found, truth, k):
    hits = 0
    for f, t in zip(found, truth):
        hits += len(set(f[:k].tolist()) & set(t[:k].tolist()))
    return hits / float(k * len(truth))
