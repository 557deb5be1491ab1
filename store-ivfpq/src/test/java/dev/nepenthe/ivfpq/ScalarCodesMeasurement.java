package dev.nepenthe.ivfpq;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A measurement, not a test: recall@10 of a flat scan over scalar codes followed by an exact
 * re-rank of the top 64, against exact search, with the bytes per vector, at 1, 4 and 7 bits, on
 * 20k x 384 clustered synthetic vectors (64 Gaussian blobs, spread 0.3), 200 queries from the same
 * blobs. Codes are relative either to one centre (the global mean) or to the exact means of 64
 * k-means lists (every list scanned, so no routing loss: what IVF with {@code nprobe = nlist} would
 * see). Prints a table; asserts nothing about the figures. Timings are printed as a rough guide
 * only (a shared machine; no warm-up beyond the runs themselves).
 *
 * <p>Opt-in, as it takes a minute or two: {@code mvn -o -q test -pl store-ivfpq -am
 * -Dtest=ScalarCodesMeasurement -Dnepenthe.measure=true -Dsurefire.failIfNoSpecifiedTests=false
 * -Dmaven.javadoc.skip}.
 */
@EnabledIfSystemProperty(named = "nepenthe.measure", matches = "true")
class ScalarCodesMeasurement {
    static final int N = 20_000;
    static final int QUERIES = 200;
    static final int DIM = 384;
    static final int K = 10;
    static final int RERANK = 64;

    @Test
    void recallAndBytesPerVector() {
        long seed = Long.getLong("nepenthe.seed", 20_384L);
        float[][] raw = Datasets.clustered(seed, N + QUERIES, DIM, 64, 0.3);
        System.out.println(
                "[measure] "
                        + N
                        + " x "
                        + DIM
                        + " clustered (64 blobs, spread 0.3), "
                        + QUERIES
                        + " queries, seed "
                        + seed
                        + ", kernels "
                        + Kernels.get().name());
        System.out.println(
                "[measure] metric  centres   bits qbits bytes/vec  recall@10(codes) "
                        + " recall@10(rerank 64)  encode us/vec  list prep us  scan ns/vec");
        for (Metric metric : Metric.values()) {
            float[][] base = new float[N][];
            float[][] queries = new float[QUERIES][];
            for (int i = 0; i < N; i++) {
                base[i] = metric.prepare(raw[i]);
            }
            for (int i = 0; i < QUERIES; i++) {
                queries[i] = metric.prepare(raw[N + i]);
            }
            float[] block = new float[N * DIM];
            for (int i = 0; i < N; i++) {
                System.arraycopy(base[i], 0, block, i * DIM, DIM);
            }
            int[][] truth = new int[QUERIES][];
            for (int q = 0; q < QUERIES; q++) {
                truth[q] = exactTop(metric, queries[q], base, K);
            }
            for (int nlist : new int[] {1, 64}) {
                int[] listOf =
                        nlist == 1
                                ? new int[N]
                                : KMeans.assign(
                                        Kernels.get(),
                                        block,
                                        N,
                                        DIM,
                                        KMeans.train(
                                                Kernels.get(),
                                                block,
                                                N,
                                                DIM,
                                                nlist,
                                                10,
                                                new SplittableRandom(seed)),
                                        nlist);
                int[][] members = members(listOf, nlist);
                for (int bits : new int[] {1, 4, 7}) {
                    measure(metric, nlist, bits, base, block, queries, truth, members);
                }
            }
        }
    }

    private static void measure(
            Metric metric,
            int nlist,
            int bits,
            float[][] base,
            float[] block,
            float[][] queries,
            int[][] truth,
            int[][] members) {
        ScalarCodes codes = new ScalarCodes(DIM, metric, bits, 7);
        int bpv = codes.bytesPerVector();
        ScalarCodes.Centre[] centres = new ScalarCodes.Centre[nlist];
        byte[][] entries = new byte[nlist][];
        ScalarEncoder encoder = codes.encoder();
        long t0 = System.nanoTime();
        for (int l = 0; l < nlist; l++) {
            int[] m = members[l];
            centres[l] = codes.centre(ScalarCodesOracle.mean(base, m, DIM), 0);
            int[] offsets = Arrays.stream(m).map(i -> i * DIM).toArray();
            entries[l] = new byte[m.length * bpv];
            encoder.encodeList(block, offsets, m.length, centres[l], entries[l], 0);
        }
        long encodeNs = System.nanoTime() - t0;
        ScalarQueryScorer scorer = codes.scorer();
        float[] est = new float[N];
        float[] out = new float[N];
        double recall = 0;
        double rerank = 0;
        long prepNs = 0;
        long scanNs = 0;
        boolean dot = metric == Metric.DOT;
        for (int q = 0; q < QUERIES; q++) {
            scorer.setQuery(queries[q]);
            for (int l = 0; l < nlist; l++) {
                int[] m = members[l];
                if (m.length == 0) {
                    continue;
                }
                long a = System.nanoTime();
                scorer.setList(centres[l]);
                long b = System.nanoTime();
                scorer.score(entries[l], 0, m.length, out, 0);
                scanNs += System.nanoTime() - b;
                prepNs += b - a;
                for (int i = 0; i < m.length; i++) {
                    est[m[i]] = out[i];
                }
            }
            Integer[] order = new Integer[N];
            for (int i = 0; i < N; i++) {
                order[i] = i;
            }
            Arrays.sort(
                    order,
                    (x, y) -> dot ? Float.compare(est[y], est[x]) : Float.compare(est[x], est[y]));
            Set<Integer> top = new HashSet<>();
            for (int o : truth[q]) {
                top.add(o);
            }
            int hit = 0;
            for (int i = 0; i < K; i++) {
                hit += top.contains(order[i]) ? 1 : 0;
            }
            recall += hit / (double) K;
            // Exact re-rank of the best 64 by estimate.
            float[][] candidates = new float[RERANK][];
            int[] candidateOrds = new int[RERANK];
            for (int i = 0; i < RERANK; i++) {
                candidateOrds[i] = order[i];
                candidates[i] = base[order[i]];
            }
            int[] reranked = exactTop(metric, queries[q], candidates, K);
            hit = 0;
            for (int i : reranked) {
                hit += top.contains(candidateOrds[i]) ? 1 : 0;
            }
            rerank += hit / (double) K;
        }
        assertEquals(QUERIES, truth.length);
        System.out.println(
                String.format(
                        Locale.ROOT,
                        "[measure] %-7s %-9s %4d %5d %9d  %16.3f  %20.3f  %13.1f  %12.2f  %11.1f",
                        metric,
                        nlist == 1 ? "1 (mean)" : nlist + " lists",
                        bits,
                        codes.queryBits(),
                        bpv,
                        recall / QUERIES,
                        rerank / QUERIES,
                        encodeNs / 1e3 / N,
                        prepNs / 1e3 / ((long) QUERIES * nlist),
                        scanNs / (double) ((long) QUERIES * N)));
    }

    private static int[][] members(int[] listOf, int nlist) {
        int[] counts = new int[nlist];
        for (int l : listOf) {
            counts[l]++;
        }
        int[][] members = new int[nlist][];
        for (int l = 0; l < nlist; l++) {
            members[l] = new int[counts[l]];
        }
        int[] fill = new int[nlist];
        for (int i = 0; i < listOf.length; i++) {
            members[listOf[i]][fill[listOf[i]]++] = i;
        }
        return members;
    }

    /** Positions in {@code vectors} of the k nearest to {@code q}, by exact values in double. */
    private static int[] exactTop(Metric metric, float[] q, float[][] vectors, int k) {
        boolean dot = metric == Metric.DOT;
        double[] v = new double[vectors.length];
        Integer[] order = new Integer[vectors.length];
        for (int i = 0; i < vectors.length; i++) {
            v[i] = ScalarCodesOracle.exact(metric, q, vectors[i]);
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> dot ? Double.compare(v[y], v[x]) : Double.compare(v[x], v[y]));
        int[] top = new int[k];
        for (int i = 0; i < k; i++) {
            top[i] = order[i];
        }
        return top;
    }
}
