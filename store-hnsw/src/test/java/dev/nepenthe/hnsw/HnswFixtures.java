package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.testing.index.Recall;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.roaringbitmap.RoaringBitmap;

/** Shared helpers: build both indexes over the same data and measure recall against the oracle. */
final class HnswFixtures {
    private HnswFixtures() {}

    static HnswIndex build(float[][] data, Metric metric, HnswParams p) {
        HnswIndex index =
                new HnswIndex(
                        data[0].length,
                        metric,
                        p,
                        dev.nepenthe.core.vector.Kernels.get(),
                        data.length);
        for (int i = 0; i < data.length; i++) {
            index.add(i, data[i]);
        }
        return index;
    }

    /** Inserts with {@code threads} threads, each taking every threads-th ordinal. */
    static HnswIndex buildConcurrently(float[][] data, Metric metric, HnswParams p, int threads)
            throws Exception {
        HnswIndex index =
                new HnswIndex(
                        data[0].length, metric, p, dev.nepenthe.core.vector.Kernels.get(), 16);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int start = t;
                fs.add(
                        pool.submit(
                                () -> {
                                    for (int i = start; i < data.length; i += threads) {
                                        index.add(i, data[i]);
                                    }
                                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        return index;
    }

    static ExactIndex exact(float[][] data, Metric metric, RoaringBitmap only) {
        ExactIndex exact = new ExactIndex(data[0].length, metric);
        for (int i = 0; i < data.length; i++) {
            if (only == null || only.contains(i)) {
                exact.add(i, data[i]);
            }
        }
        return exact;
    }

    /** Mean recall@k over the queries. */
    static double recall(VectorIndex approx, ExactIndex exact, float[][] queries, int k, int ef) {
        return recall(approx, exact, queries, k, SearchParams.of("efSearch", ef));
    }

    static double recall(
            VectorIndex approx, ExactIndex exact, float[][] queries, int k, SearchParams sp) {
        double sum = 0;
        for (float[] q : queries) {
            SearchResult truth = exact.search(q, k);
            SearchResult got = approx.search(q, k, Accept.ALL, sp);
            sum += Recall.of(truth, got);
        }
        return sum / queries.length;
    }
}
