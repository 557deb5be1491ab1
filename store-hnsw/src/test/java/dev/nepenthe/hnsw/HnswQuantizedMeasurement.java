package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A measurement, not a test: single-thread QPS and recall@10 of float search against int8 search
 * (re-ranking the whole beam, 20 and k = 10 of it) on the same graph, at several efSearch, on 20k x
 * 384 clustered synthetic vectors (64 Gaussian blobs, spread 0.3), 500 queries from the same blobs.
 * The two indexes are built serially with the same seed, so their graphs are identical (building
 * scores floats either way); only the search differs. Prints a table, asserts nothing about the
 * figures. QPS is queries per second of this thread's CPU time (so a process that takes the core
 * away does not count), runs are interleaved and the best of five passes is kept, as the machine is
 * shared; treat the figures as rough. Runs with the Vector API kernels only (the scalar surefire
 * execution skips it).
 *
 * <p>Opt-in, as it takes a minute or two: {@code mvn -o -q test -pl store-hnsw -am
 * -Dtest=HnswQuantizedMeasurement -Dnepenthe.measure=true -Dsurefire.failIfNoSpecifiedTests=false
 * -Dmaven.javadoc.skip} (add {@code -Dnepenthe.measure.metric=L2} for another metric, {@code
 * -Dnepenthe.measure.n=100000} for another size).
 */
@EnabledIfSystemProperty(named = "nepenthe.measure", matches = "true")
class HnswQuantizedMeasurement {
    static final int QUERIES = 500;
    static final int DIM = 384;
    static final int K = 10;
    static final int PASSES = 5;
    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    @Test
    void qpsAndRecallFloatAgainstInt8() {
        // The scalar surefire run would take many minutes and measure the fallback, not the mode.
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Kernels.get().name().equals("panama"), "panama kernels only");
        long seed = Long.getLong("nepenthe.seed", 20_384L);
        int n = Integer.getInteger("nepenthe.measure.n", 20_000);
        Metric metric = Metric.valueOf(System.getProperty("nepenthe.measure.metric", "COSINE"));
        float[][] all = Datasets.clustered(seed, n + QUERIES, DIM, 64, 0.3);
        float[][] data = Arrays.copyOf(all, n);
        float[][] queries = Arrays.copyOfRange(all, n, n + QUERIES);
        HnswParams base = HnswParams.of(16, 100);
        long t0 = System.nanoTime();
        HnswIndex flt = HnswFixtures.build(data, metric, base);
        long t1 = System.nanoTime();
        HnswIndex int8 =
                HnswFixtures.build(
                        data, metric, base.withQuantization(HnswParams.Quantization.INT8));
        long t2 = System.nanoTime();
        ExactIndex exact = HnswFixtures.exact(data, metric, null);
        int[][] truth = new int[QUERIES][];
        for (int q = 0; q < QUERIES; q++) {
            truth[q] = exact.search(queries[q], K).ordinals();
        }
        System.out.printf(
                Locale.ROOT,
                "[measure] %d x %d clustered (64 blobs, spread 0.3), %s, %d queries, seed %d,"
                        + " kernels %s; build float %.1f s, int8 %.1f s%n",
                n,
                DIM,
                metric,
                QUERIES,
                seed,
                Kernels.get().name(),
                (t1 - t0) / 1e9,
                (t2 - t1) / 1e9);
        System.out.println(
                "[measure]  ef | float recall    QPS | int8 rerank=ef recall    QPS    x | int8"
                        + " rerank=20 recall    QPS    x | int8 rerank=10 recall    QPS    x");
        for (int ef : new int[] {16, 24, 32, 48, 64, 96, 128}) {
            SearchParams full = SearchParams.of(HnswParams.EF_SEARCH, ef);
            SearchParams shallow = full.with(HnswParams.RERANK, 20);
            SearchParams k = full.with(HnswParams.RERANK, K);
            double[] best = {0, 0, 0, 0};
            double[] recall = new double[4];
            for (int pass = 0; pass < PASSES; pass++) {
                // The whole beam asked for explicitly: the default re-ranks 2k.
                Object[][] runs = {
                    {flt, full},
                    {int8, full.with(HnswParams.RERANK, ef)},
                    {int8, shallow},
                    {int8, k}
                };
                for (int r = 0; r < runs.length; r++) {
                    HnswIndex index = (HnswIndex) runs[r][0];
                    SearchParams sp = (SearchParams) runs[r][1];
                    long hits = 0;
                    // CPU time of this thread, not wall time: on a shared machine another process
                    // taking the core would otherwise count as search time.
                    long start = THREADS.getCurrentThreadCpuTime();
                    for (int q = 0; q < QUERIES; q++) {
                        SearchResult got = index.search(queries[q], K, Accept.ALL, sp);
                        hits += overlap(truth[q], got.ordinals());
                    }
                    double qps = QUERIES / ((THREADS.getCurrentThreadCpuTime() - start) / 1e9);
                    best[r] = Math.max(best[r], qps);
                    recall[r] = hits / (double) (QUERIES * K);
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "[measure] %3d |  %.4f %7.0f |            %.4f %7.0f %4.2f |           %.4f"
                            + " %7.0f %4.2f |           %.4f %7.0f %4.2f%n",
                    ef,
                    recall[0],
                    best[0],
                    recall[1],
                    best[1],
                    best[1] / best[0],
                    recall[2],
                    best[2],
                    best[2] / best[0],
                    recall[3],
                    best[3],
                    best[3] / best[0]);
        }
    }

    private static int overlap(int[] truth, int[] got) {
        int n = 0;
        for (int t : truth) {
            for (int g : got) {
                if (g == t) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }
}
