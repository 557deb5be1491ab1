package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Pins what a seeded, single-threaded HNSW run produces, to the bit: the graph after a build, the
 * graph after removals, re-adds and a reconnect (with the repair counters), and the ordinals, raw
 * score bits and visit counts of plain, walked-filtered and exact-filtered searches. The kernels
 * agree bit for bit, so the values are the same in the panama and the scalar run and on every
 * machine, and the same with the vectors on or off the heap.
 *
 * <p>A refactoring of the graph code (such as routing every score through a scorer) must leave
 * these values alone. A change that alters the algorithm on purpose (a new heuristic, a new
 * summation order) changes them; then say so in the commit and replace the constants with the ones
 * the failure message prints.
 */
class HnswFingerprintTest {

    /** Per metric (COSINE, DOT, L2): {built graph, graph after removals and re-adds, searches}. */
    private static final long[][] EXPECTED = {
        {-6414513204620158789L, -8301490549839567183L, 3677197482977495103L},
        {724780480298152838L, -810668712864880748L, -2881136788815334696L},
        {-5955060634494004141L, -4783383118463136246L, -2593593445053660622L},
    };

    @ParameterizedTest(name = "vectors {0}")
    @EnumSource(HnswParams.VectorStorage.class)
    void seededRunsReproduceTheirGraphsAndScoresBitForBit(HnswParams.VectorStorage storage) {
        Metric[] metrics = {Metric.COSINE, Metric.DOT, Metric.L2};
        StringBuilder got = new StringBuilder();
        long[][] actual = new long[metrics.length][];
        for (int m = 0; m < metrics.length; m++) {
            actual[m] = run(metrics[m], 1000 + m, storage);
            got.append(
                    String.format(
                            "        {%dL, %dL, %dL}, // %s%n",
                            actual[m][0], actual[m][1], actual[m][2], metrics[m]));
        }
        for (int m = 0; m < metrics.length; m++) {
            assertEquals(
                    Arrays.toString(EXPECTED[m]),
                    Arrays.toString(actual[m]),
                    metrics[m]
                            + ": the seeded run no longer reproduces; if the algorithm changed on"
                            + " purpose, the new values (kernels "
                            + Kernels.get().name()
                            + ", vectors "
                            + storage
                            + ") are:\n"
                            + got);
        }
    }

    private static long[] run(Metric metric, long seed, HnswParams.VectorStorage storage) {
        // An odd dimension exercises the kernels' tails; a small initial capacity makes the
        // build grow (and publish new layouts) several times.
        int n = 1_500;
        int dim = 37;
        float[][] all = Datasets.clustered(seed, n + 40, dim, 10, 0.3);
        HnswIndex index =
                new HnswIndex(
                        dim,
                        metric,
                        HnswParams.of(6, 40).withSeed(seed).withStorage(storage),
                        Kernels.get(),
                        16);
        for (int i = 0; i < n; i++) {
            index.add(i, all[i]);
        }
        long built = graphPrint(index, n);

        // Removals: a batch, then singles including the entry point (a moved entry point and a
        // full walk), then re-adds into the freed slots and a reconnect pass.
        SplittableRandom rnd = new SplittableRandom(seed * 7 + 1);
        int[] order = HnswDeleteRepairTest.shuffled(n, seed);
        index.removeAll(Arrays.copyOf(order, 60));
        for (int i = 60; i < 90; i++) {
            index.remove(order[i]);
        }
        index.remove(index.entryOrdinal());
        for (int i = 0; i < 45; i++) {
            int ord = order[rnd.nextInt(90)];
            if (!index.contains(ord)) {
                index.add(ord, all[ord]);
            }
        }
        index.connectUnreachable();
        long repaired = graphPrint(index, n);
        for (long c : index.repairCounts()) {
            repaired = mix(repaired, c);
        }

        // Searches: unfiltered, a filter wide enough to walk (with a visit limit), and one small
        // enough for the exact filtered scan.
        long searches = 17;
        int[] wide = new int[n / 3];
        for (int i = 0; i < wide.length; i++) {
            wide[i] = rnd.nextInt(n);
        }
        int[] narrow = Arrays.copyOf(wide, 25);
        for (int q = n; q < n + 40; q++) {
            for (Accept accept : new Accept[] {Accept.ALL, Accept.of(wide), Accept.of(narrow)}) {
                SearchResult r = index.search(all[q], 10, accept, SearchParams.of("efSearch", 50));
                searches = mix(searches, r.visited());
                for (int i = 0; i < r.size(); i++) {
                    searches = mix(searches, r.ordinals()[i]);
                    searches = mix(searches, Float.floatToRawIntBits(r.scores()[i]));
                }
            }
        }
        return new long[] {built, repaired, searches};
    }

    /** Entry point, then per ordinal its level and its lists on every layer, in list order. */
    private static long graphPrint(HnswIndex index, int n) {
        long h = mix(1, index.entryOrdinal());
        h = mix(h, index.size());
        for (int ord = 0; ord < n; ord++) {
            int level = index.levelOf(ord);
            h = mix(h, level);
            for (int l = 0; l <= level; l++) {
                int[] nb = index.neighborOrdinals(ord, l);
                h = mix(h, nb.length);
                for (int o : nb) {
                    h = mix(h, o);
                }
            }
        }
        return h;
    }

    private static long mix(long h, long v) {
        long x = (h ^ v) * 0x9E3779B97F4A7C15L;
        return x ^ (x >>> 29);
    }
}
