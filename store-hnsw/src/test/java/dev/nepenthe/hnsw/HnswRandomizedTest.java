package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.Seeds;
import dev.nepenthe.testing.index.Recall;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A seeded random interleaving of inserts (reusing freed ordinals), single and batch removals and
 * searches, mirrored in the exact index. The checker must be clean after every removal.
 *
 * <p>The seed also draws the graph's shape (dimension, M, efConstruction) within bounds that keep a
 * run to seconds, so successive runs cover shapes no fixed test names; the drawn shape is printed
 * and named in every failure, and {@code -Dnepenthe.seed=N} replays it ({@link Seeds}).
 */
class HnswRandomizedTest {

    /** The graph a seed builds, drawn from it (so replaying the seed replays the shape). */
    record Shape(int dim, int m, int efConstruction, Metric metric) {

        static final int MIN_DIM = 4;
        static final int MAX_DIM = 48;
        static final int MIN_M = 4;
        static final int MAX_M = 16;
        static final int MAX_EF_CONSTRUCTION = 96;

        /**
         * Dimension 4 to 48, M 4 to 16, efConstruction from max(2M, 16) to 96: small enough that
         * 5,000 steps with a checker run per removal take seconds, wide enough to cover a sparse
         * graph (M 4) and a dense one, tiny vectors and ones where clusters overlap less.
         */
        static Shape of(long seed) {
            SplittableRandom r = new SplittableRandom(seed ^ 0x5DEECE66DL);
            int dim = r.nextInt(MIN_DIM, MAX_DIM + 1);
            int m = r.nextInt(MIN_M, MAX_M + 1);
            int efConstruction = r.nextInt(Math.max(2 * m, 16), MAX_EF_CONSTRUCTION + 1);
            Metric metric = Math.floorMod(seed, 2) == 0 ? Metric.COSINE : Metric.L2;
            return new Shape(dim, m, efConstruction, metric);
        }

        @Override
        public String toString() {
            return "dim " + dim + ", M " + m + ", efConstruction " + efConstruction + ", " + metric;
        }
    }

    @Test
    void interleavedInsertsRemovesAndSearchesKeepTheGraphClean() {
        // Two fixed seeds (one per metric) on the shape this test always ran, and a fresh seed
        // each run on the shape it draws.
        run(1, new Shape(16, 6, 40, Metric.L2), 5_000);
        run(2, new Shape(16, 6, 40, Metric.COSINE), 5_000);
        long seed = Seeds.draw("HnswRandomizedTest");
        run(seed, Shape.of(seed), 5_000);
    }

    @Test
    void theShapeIsDrawnFromTheSeedWithinItsBounds() {
        Set<Shape> seen = new HashSet<>();
        for (long seed = 0; seed < 200; seed++) {
            Shape shape = Shape.of(seed);
            assertEquals(shape, Shape.of(seed), "the same seed draws the same shape");
            assertTrue(shape.dim() >= Shape.MIN_DIM && shape.dim() <= Shape.MAX_DIM, shape + "");
            assertTrue(shape.m() >= Shape.MIN_M && shape.m() <= Shape.MAX_M, shape + "");
            assertTrue(
                    shape.efConstruction() >= 2 * shape.m()
                            && shape.efConstruction() <= Shape.MAX_EF_CONSTRUCTION,
                    shape + "");
            seen.add(shape);
        }
        assertTrue(seen.size() > 150, "200 seeds drew only " + seen.size() + " shapes");
    }

    static void run(long seed, Shape shape, int steps) {
        System.out.println("[shape] HnswRandomizedTest seed " + seed + ": " + shape);
        String why = " (" + shape + ")" + Seeds.replay(seed);
        int dim = shape.dim();
        int pool = 3_000;
        float[][] vectors = Datasets.clustered(seed, pool, dim, 12, 0.35);
        SplittableRandom rnd = new SplittableRandom(seed * 31 + 7);
        Metric metric = shape.metric();
        HnswIndex index =
                new HnswIndex(
                        dim,
                        metric,
                        HnswParams.of(shape.m(), shape.efConstruction()).withSeed(seed),
                        Kernels.get(),
                        16);
        ExactIndex exact = new ExactIndex(dim, metric);
        List<Integer> live = new ArrayList<>();
        List<Integer> dead = new ArrayList<>();
        for (int i = 0; i < pool; i++) {
            dead.add(i);
        }
        double recallSum = 0;
        int searches = 0;
        int checks = 0;
        int maxLive = 0;
        for (int step = 0; step < steps; step++) {
            int action = rnd.nextInt(100);
            if (action < 60 && !dead.isEmpty()) {
                int ord = dead.remove(rnd.nextInt(dead.size()));
                index.add(ord, vectors[ord]);
                exact.add(ord, vectors[ord]);
                live.add(ord);
            } else if (action < 80 && !live.isEmpty()) {
                int count = rnd.nextInt(10) == 0 ? 1 + rnd.nextInt(Math.min(20, live.size())) : 1;
                int[] batch = new int[count];
                for (int i = 0; i < count; i++) {
                    int ord = live.remove(rnd.nextInt(live.size()));
                    batch[i] = ord;
                    dead.add(ord);
                    exact.remove(ord);
                }
                int removed =
                        count == 1 ? (index.remove(batch[0]) ? 1 : 0) : index.removeAll(batch);
                assertEquals(count, removed, "step " + step + why);
                IntegrityReport report = index.verifyIntegrity();
                checks++;
                int at = step;
                assertTrue(report.isClean(), () -> "step " + at + ": " + report + why);
                assertEquals(live.size(), report.checked().get("live-nodes"), "step " + at + why);
                // The scoped proof must agree, for this batch and for ordinals removed earlier
                // (re-added since, removed again, or with slots handed out again).
                int[] earlier =
                        live.isEmpty()
                                ? new int[] {dead.get(rnd.nextInt(dead.size()))}
                                : new int[] {
                                    live.get(rnd.nextInt(live.size())),
                                    dead.get(rnd.nextInt(dead.size()))
                                };
                for (int[] asked :
                        checks % 10 == 0 ? new int[][] {batch, earlier} : new int[][] {batch}) {
                    IntegrityReport scoped = index.verifyRemoval(asked);
                    assertTrue(
                            scoped.isClean(),
                            () ->
                                    "step "
                                            + at
                                            + " scoped check of "
                                            + Arrays.toString(asked)
                                            + ": "
                                            + scoped
                                            + why);
                }
            } else if (!live.isEmpty()) {
                float[] q = vectors[rnd.nextInt(pool)];
                SearchResult got = index.search(q, 10, Accept.ALL, SearchParams.of("efSearch", 60));
                SearchResult truth = exact.search(q, 10);
                for (int o : got.ordinals()) {
                    assertTrue(
                            exact.contains(o),
                            "step " + step + ": search returned non-live ordinal " + o + why);
                }
                assertEquals(Math.min(10, live.size()), got.size(), "step " + step + why);
                recallSum += Recall.of(truth, got);
                searches++;
            }
            assertEquals(live.size(), index.size(), why);
            maxLive = Math.max(maxLive, live.size());
        }
        assertTrue(checks > 500, "only " + checks + " removal batches were checked" + why);
        assertTrue(maxLive > 500, "the graph never grew past " + maxLive + " live nodes" + why);
        double recall = recallSum / searches;
        System.out.printf(
                "[recall] HnswRandomizedTest seed %d (%s): mean recall@10 %.4f over %d searches%n",
                seed, shape, recall, searches);
        assertTrue(
                recall > 0.9, "mean recall@10 " + recall + " over " + searches + " searches" + why);
    }
}
