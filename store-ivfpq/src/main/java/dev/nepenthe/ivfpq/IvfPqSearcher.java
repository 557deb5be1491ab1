package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactScan;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.internal.index.TopK;
import dev.nepenthe.core.vector.VectorKernels;

/**
 * The query side of an {@link IvfPqIndex}: which lists to probe, how their entries are scored, and
 * when the answer is exact instead. Apart from the index so that the index keeps its life cycle and
 * this class the arithmetic of a search.
 *
 * <h2>Scoring</h2>
 *
 * L2 and cosine use asymmetric L2 distances (cosine vectors are unit length, so L2 ranks as cosine
 * does); the query-side table of each probed list comes from one per-query dot table plus a
 * precomputed per-list term ({@code ||c||^2 + 2<anchor, c>}), FAISS's precomputed-table trick. Dot
 * uses inner-product tables and probes the lists with the largest {@code <q, centroid>}. OSQ
 * entries are scored as {@link ScalarCodes} describes. Approximate scores are reported as the
 * metric's scores (cosine: {@code 1 - d/2}); with {@code rerank > 0} the best {@code max(k,
 * rerank)} candidates are re-scored exactly from the stored vectors.
 *
 * <p>Holds no state between searches; the caller holds the index's read lock.
 */
final class IvfPqSearcher {
    private final int dim;
    private final Metric metric;
    private final VectorKernels kernels;
    private final IvfPqParams params;
    private final SwapRemoveVectors store;
    private final ExactScan exact;

    IvfPqSearcher(
            int dim,
            Metric metric,
            VectorKernels kernels,
            IvfPqParams params,
            SwapRemoveVectors store) {
        this.dim = dim;
        this.metric = metric;
        this.kernels = kernels;
        this.params = params;
        this.store = store;
        this.exact = new ExactScan(store, metric, kernels, dim);
    }

    /**
     * The k best for a prepared query. While flat ({@code st} null) the search is exact; a filter
     * selecting fewer vectors than the probed lists would hold is answered exactly from the stored
     * vectors (cheaper and exact).
     */
    SearchResult search(TrainedState st, float[] q, int k, Accept accept, int nprobe, int rerank) {
        if (st == null) {
            return exact.all(q, k, accept);
        }
        int probes = Math.min(nprobe, params.nlist());
        long expectedScan = (long) store.size() * probes / params.nlist();
        long allowed = accept.cardinality();
        if (!accept.isAll() && allowed >= 0 && allowed <= expectedScan) {
            return exact.accepted(q, k, accept);
        }
        return ivfSearch(st, q, k, accept, probes, rerank);
    }

    private SearchResult ivfSearch(
            TrainedState st, float[] q, int k, Accept accept, int nprobe, int rerank) {
        InvertedList[] lists = st.lists;
        int nlist = params.nlist();
        // 1. Probe: the nprobe non-empty lists whose routing centroids are nearest to the query.
        float[] coarse = new float[nlist];
        boolean dot = metric == Metric.DOT;
        if (dot) {
            kernels.dotBatch(q, st.routing, 0, nlist, dim, coarse, 0);
        } else {
            kernels.squareDistanceBatch(q, st.routing, 0, nlist, dim, coarse, 0);
        }
        TopK probes = new TopK(nprobe);
        for (int i = 0; i < nlist; i++) {
            if (lists[i].size() > 0) {
                probes.offer(i, dot ? coarse[i] : -coarse[i]);
            }
        }
        int[] probed = probes.drain(0).ordinals();
        int depth = rerank > 0 ? Math.max(k, rerank) : k;
        TopK candidates = new TopK(depth);
        ListScan scan = st.osq == null ? pqScan(st, q) : osqScan(st, q);
        long visited = scanLists(st, probed, accept, candidates, scan);
        SearchResult approx = candidates.drain(visited);
        if (rerank == 0) {
            return approx;
        }
        // 4. Re-rank the best candidates exactly from the stored vectors.
        TopK top = new TopK(k);
        for (int ord : approx.ordinals()) {
            top.offer(ord, exact.score(q, ord));
        }
        return top.drain(visited + approx.size());
    }

    /**
     * OSQ: the query rotated once, then per probed list its residual to the list's centre quantized
     * once and every entry scored from its levels and corrections (see {@link ScalarCodes}).
     */
    private ListScan osqScan(TrainedState st, float[] q) {
        ScalarQueryScorer scorer = st.osq.scorer();
        scorer.setQuery(q);
        return (list, il, out) -> {
            scorer.setList(st.centres[list]);
            scorer.score(il.codes(), 0, il.size(), out, 0);
        };
    }

    /**
     * PQ: one per-query table of sub-vector dot products, then per probed list the list's table
     * (FAISS's precomputed-table trick for L2) and one batch scan of its codes.
     */
    private ListScan pqScan(TrainedState st, float[] q) {
        Codebooks cb = st.cb;
        int m = params.m();
        int ksub = params.ksub();
        int mk = m * ksub;
        boolean dot = metric == Metric.DOT;
        // 2. The per-query table: dot products of each query sub-vector with each sub-centroid.
        float[] qTable = new float[mk];
        kernels.pqDotTable(q, cb.pq.codebooks(), m, ksub, qTable);
        if (!dot) {
            for (int t = 0; t < mk; t++) {
                qTable[t] *= -2f;
            }
        }
        float[] listTable = dot ? qTable : new float[mk];
        return (list, il, out) -> {
            // 3. Scan the list's codes with its table; the list's own constant is added after.
            float base;
            if (dot) {
                base = kernels.dot(q, 0, cb.anchors, list * dim, dim);
            } else {
                base = kernels.squareDistance(q, 0, cb.anchors, list * dim, dim);
                int off = list * mk;
                float[] l2Terms = cb.l2Terms;
                for (int t = 0; t < mk; t++) {
                    listTable[t] = l2Terms[off + t] + qTable[t];
                }
            }
            int size = il.size();
            kernels.pqDistanceBatch(listTable, ksub, il.codes(), 0, size, m, out, 0);
            for (int i = 0; i < size; i++) {
                out[i] += base;
            }
        };
    }

    /** Scores one probed list's entries into {@code out[0, size)} as metric values. */
    @FunctionalInterface
    private interface ListScan {
        void score(int list, InvertedList il, float[] out);
    }

    /**
     * Runs {@code scan} over each probed list and offers its accepted entries to {@code
     * candidates}.
     *
     * @return entries scanned
     */
    private long scanLists(
            TrainedState st, int[] probed, Accept accept, TopK candidates, ListScan scan) {
        float[] out = new float[64];
        long visited = 0;
        for (int list : probed) {
            InvertedList il = st.lists[list];
            int size = il.size();
            if (out.length < size) {
                out = new float[Math.max(size, out.length * 2)];
            }
            scan.score(list, il, out);
            visited += size;
            offerAll(il, out, accept, candidates);
        }
        return visited;
    }

    /** Offers a scanned list's accepted entries, {@code out[i]} as the metric's score. */
    private void offerAll(InvertedList il, float[] out, Accept accept, TopK candidates) {
        boolean every = accept.isAll();
        for (int i = 0; i < il.size(); i++) {
            int ord = il.ordinalAt(i);
            if (every || accept.accepts(ord)) {
                candidates.offer(ord, approximateScore(out[i]));
            }
        }
    }

    /** A PQ value (inner product for dot, squared distance otherwise) as the metric's score. */
    private float approximateScore(float value) {
        return switch (metric) {
            case DOT -> value;
            case L2 -> -value;
            case COSINE -> 1f - value / 2f;
        };
    }
}
