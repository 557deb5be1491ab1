package dev.nepenthe.bench.hnsw;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Timed passes over all queries: on the calling thread (the single-thread sweep), or with T threads
 * of a fixed pool that take queries from one shared counter until none are left (the scaling
 * table). A pass's QPS is the query count over its wall time. The results' lengths are summed and
 * checked so the JIT cannot drop the searches.
 */
final class Throughput {
    private Throughput() {}

    /** The queries' answers at beam {@code ef}, on the calling thread (recall pass and warm-up). */
    static int[][] answers(AnnEngine e, float[][] queries, int k, int ef) throws Exception {
        int[][] got = new int[queries.length][];
        for (int q = 0; q < queries.length; q++) {
            got[q] = e.search(queries[q], k, ef);
        }
        return got;
    }

    /** QPS of one pass on the calling thread. */
    static double pass(AnnEngine e, float[][] queries, int k, int ef) throws Exception {
        long sink = 0;
        long start = System.nanoTime();
        for (float[] q : queries) {
            sink += e.search(q, k, ef).length;
        }
        return qps(queries.length, start, sink);
    }

    /** QPS of one pass with {@code threads} tasks on {@code pool} (which has that many threads). */
    static double pass(
            ExecutorService pool, int threads, AnnEngine e, float[][] queries, int k, int ef)
            throws Exception {
        AtomicInteger next = new AtomicInteger();
        List<Callable<Long>> tasks = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            tasks.add(
                    () -> {
                        long sink = 0;
                        for (int q = next.getAndIncrement();
                                q < queries.length;
                                q = next.getAndIncrement()) {
                            sink += e.search(queries[q], k, ef).length;
                        }
                        return sink;
                    });
        }
        long start = System.nanoTime();
        long sink = 0;
        for (Future<Long> f : pool.invokeAll(tasks)) {
            sink += f.get();
        }
        return qps(queries.length, start, sink);
    }

    private static double qps(int queries, long startNanos, long sink) {
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        if (sink <= 0) {
            throw new AssertionError("no results: the searches returned nothing");
        }
        return queries / seconds;
    }

    static double median(double[] values) {
        double[] c = values.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
