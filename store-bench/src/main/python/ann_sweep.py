"""What the HNSW peer scripts share (hnswlib_side.py, faiss_hnsw.py): the efSearch sweep and the
thread-scaling measurement, printed as '<tag> <what> key=value ...' lines for the Java harness.

Each pass is one batched search call over all queries, as these libraries' users call them;
a pass's QPS is the query count over its wall time, and the median of PASSES passes is kept.
"""
import time

from vecfiles import recall_at_k


def median_qps(queries, run, passes):
    """Median QPS of PASSES timed calls of run()."""
    walls = []
    for _ in range(passes):
        s = time.perf_counter()
        run()
        walls.append(time.perf_counter() - s)
    return len(queries) / sorted(walls)[len(walls) // 2]


def sweep(tag, engine, set_ef, search, xq, truth, k, efs, passes, label=""):
    """For each ef: a pass that measures recall@k (and warms up), then PASSES timed
    single-threaded passes. search(queries, threads) returns the found ids. Returns
    [(ef, recall)] for scale()."""
    curve = []
    for ef in efs:
        set_ef(max(ef, k))
        rec = recall_at_k(search(xq, 1), truth, k)
        qps = median_qps(xq, lambda: search(xq, 1), passes) if passes > 0 else 0.0
        print("%s search engine=%s%s ef=%d qps=%.1f recall=%.4f" % (tag, engine, label, ef, qps, rec), flush=True)
        curve.append((ef, rec))
    return curve


def scale(tag, engine, set_ef, search, xq, k, curve, targets, threads, passes):
    """At the smallest swept ef whose recall reaches each target, the median QPS of one batched
    call with T threads for each T in THREADS (after one untimed call at that T)."""
    for target in targets:
        ef = next((e for e, rec in curve if rec >= target), None)
        if ef is None:
            print("%s scale engine=%s target=%.2f ef=-1" % (tag, engine, target), flush=True)
            continue
        set_ef(max(ef, k))
        for t in threads:
            search(xq, t)
            qps = median_qps(xq, lambda: search(xq, t), passes)
            print("%s scale engine=%s target=%.2f ef=%d threads=%d qps=%.1f" % (tag, engine, target, ef, t, qps),
                  flush=True)


def add_arguments(ap):
    """The arguments every HNSW peer script takes from PeerRunner."""
    ap.add_argument("--dir", required=True)
    ap.add_argument("--space", choices=["l2", "ip"], default="l2")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--efs", default="16,32,64,128")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--scale-threads", default="", help="thread counts for the scaling table, e.g. 1,2,4")
    ap.add_argument("--targets", default="0.95,0.99", help="recall targets whose ef the scaling table uses")


def ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


def floats(text):
    return [float(x) for x in text.split(",") if x.strip()]
