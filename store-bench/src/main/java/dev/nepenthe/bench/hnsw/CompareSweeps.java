package dev.nepenthe.bench.hnsw;

import static dev.nepenthe.bench.hnsw.HnswCompareBench.SCALING_TARGETS;

import dev.nepenthe.bench.hnsw.HnswCompareBench.Point;
import dev.nepenthe.bench.hnsw.HnswCompareBench.Result;
import dev.nepenthe.bench.hnsw.HnswCompareBench.Scaling;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The HNSW comparison's measurements of the Java engines: the single-thread sweep of recall and QPS
 * over efSearch, passes round-robin over the engines, and QPS with several searching threads at the
 * ef where each engine first reaches a recall target.
 */
final class CompareSweeps {

    private CompareSweeps() {}

    static void sweep(
            List<AnnEngine> engines,
            List<Result> results,
            float[][] queries,
            int[][] truth,
            int k,
            int[] efs,
            int rounds)
            throws Exception {
        for (AnnEngine e : engines) {
            for (int ef : efs) {
                Throughput.answers(e, queries, k, ef);
            }
        }
        double[][] recalls = new double[efs.length][engines.size()];
        for (int e = 0; e < efs.length; e++) {
            for (int i = 0; i < engines.size(); i++) {
                recalls[e][i] =
                        BenchData.recall(
                                truth, Throughput.answers(engines.get(i), queries, k, efs[e]));
            }
        }
        // Round after round over every efSearch, rather than every round of one efSearch before the
        // next: a slow stretch of the machine (or the JIT still settling) then costs one pass of
        // each efSearch, which the median drops, instead of all the passes of the first one.
        double[][][] passes = new double[efs.length][engines.size()][rounds];
        for (int p = 0; p < rounds; p++) {
            for (int e = 0; e < efs.length; e++) {
                for (int i = 0; i < engines.size(); i++) {
                    passes[e][i][p] = Throughput.pass(engines.get(i), queries, k, efs[e]);
                }
            }
            System.err.printf(Locale.ROOT, "round %d of %d done%n", p + 1, rounds);
        }
        for (int e = 0; e < efs.length; e++) {
            for (int i = 0; i < engines.size(); i++) {
                results.get(i)
                        .curve
                        .add(new Point(efs[e], recalls[e][i], Throughput.median(passes[e][i])));
            }
        }
    }

    static void scale(
            List<AnnEngine> engines,
            List<Result> results,
            float[][] queries,
            int k,
            int[] threads,
            int rounds)
            throws Exception {
        for (double target : SCALING_TARGETS) {
            for (Result r : results) {
                Point at = r.first(target);
                r.scaling.put(
                        target, Scaling.unmeasured(at == null ? -1 : at.ef(), threads.length));
            }
        }
        for (int t = 0; t < threads.length; t++) {
            int count = threads[t];
            ExecutorService pool = Executors.newFixedThreadPool(count);
            try {
                for (double target : SCALING_TARGETS) {
                    List<Integer> measured = new ArrayList<>();
                    for (int i = 0; i < engines.size(); i++) {
                        if (results.get(i).scaling.get(target).ef() >= 0
                                && (count == 1 || engines.get(i).concurrentSearch())) {
                            measured.add(i);
                        }
                    }
                    double[][] passes = new double[engines.size()][rounds];
                    for (int i : measured) { // untimed: warms the pool and the engine
                        scaledPass(pool, count, engines.get(i), queries, k, results.get(i), target);
                    }
                    for (int p = 0; p < rounds; p++) {
                        for (int i : measured) {
                            passes[i][p] =
                                    scaledPass(
                                            pool,
                                            count,
                                            engines.get(i),
                                            queries,
                                            k,
                                            results.get(i),
                                            target);
                        }
                    }
                    for (int i : measured) {
                        results.get(i).scaling.get(target).qps()[t] = Throughput.median(passes[i]);
                    }
                }
            } finally {
                pool.shutdown();
            }
            System.err.printf(Locale.ROOT, "%d threads done%n", count);
        }
    }

    /**
     * /** One pass of {@code count} threads at the ef where {@code r} first reached {@code target}.
     */
    private static double scaledPass(
            ExecutorService pool,
            int count,
            AnnEngine engine,
            float[][] queries,
            int k,
            Result r,
            double target)
            throws Exception {
        return Throughput.pass(pool, count, engine, queries, k, r.scaling.get(target).ef());
    }
}
