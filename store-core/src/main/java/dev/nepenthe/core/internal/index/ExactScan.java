package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.PrimitiveIterator;

/**
 * Brute-force scoring over a {@link SwapRemoveVectors} block: the exact index's whole search, and
 * what IVF-PQ answers with while it is untrained or when a filter is more selective than its
 * probes. One copy, so the oracle and the fallback rank the same way.
 *
 * <p>Not thread-safe: the caller holds its index's read lock.
 */
public final class ExactScan {
    /** Vectors scored per batch call: large enough to amortise the call, small enough for L1/L2. */
    private static final int BATCH = 256;

    private final SwapRemoveVectors store;
    private final Metric metric;
    private final VectorKernels kernels;
    private final int dim;

    public ExactScan(SwapRemoveVectors store, Metric metric, VectorKernels kernels, int dim) {
        this.store = store;
        this.metric = metric;
        this.kernels = kernels;
        this.dim = dim;
    }

    /**
     * The k best accepted vectors, scoring the whole block in batches. Cost: one pass over every
     * live vector.
     *
     * @param q the query, prepared for the metric
     */
    public SearchResult all(float[] q, int k, Accept accept) {
        TopK top = new TopK(k);
        float[] block = store.block();
        int size = store.size();
        boolean every = accept.isAll();
        float[] scores = new float[BATCH];
        long visited = 0;
        for (int start = 0; start < size; start += BATCH) {
            int n = Math.min(BATCH, size - start);
            metric.scoreBatch(kernels, q, block, store.offset(start), n, dim, scores);
            visited += n;
            for (int i = 0; i < n; i++) {
                int ord = store.ordinalAt(start + i);
                if (every || accept.accepts(ord)) {
                    top.offer(ord, scores[i]);
                }
            }
        }
        return top.drain(visited);
    }

    /**
     * The k best of the accepted ordinals, scoring only those that are live. Cost: one score per
     * accepted ordinal; for a filter that accepts few.
     *
     * @param q the query, prepared for the metric
     * @param accept an accept that enumerates its ordinals (cardinality not -1)
     */
    public SearchResult accepted(float[] q, int k, Accept accept) {
        TopK top = new TopK(k);
        float[] block = store.block();
        long visited = 0;
        PrimitiveIterator.OfInt it = accept.ordinals();
        while (it.hasNext()) {
            int ord = it.nextInt();
            int slot = store.slotOf(ord);
            if (slot >= 0) {
                top.offer(ord, metric.score(kernels, q, block, store.offset(slot), dim));
                visited++;
            }
        }
        return top.drain(visited);
    }

    /** The exact score of a live ordinal's stored vector (a re-rank). */
    public float score(float[] q, int ordinal) {
        return metric.score(kernels, q, store.block(), store.offset(store.slotOf(ordinal)), dim);
    }
}
