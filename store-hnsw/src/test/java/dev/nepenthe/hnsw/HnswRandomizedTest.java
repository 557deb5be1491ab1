package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.index.Recall;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A seeded random interleaving of inserts (reusing freed ordinals), single and batch removals and
 * searches, mirrored in the exact index. The checker must be clean after every removal.
 */
class HnswRandomizedTest {

    @Test
    void interleavedInsertsRemovesAndSearchesKeepTheGraphClean() {
        // Two fixed seeds (one per metric) and a fresh one each run.
        for (long seed : new long[] {1, 2, dev.nepenthe.testing.Seeds.draw("HnswRandomizedTest")}) {
            run(seed, 5_000);
        }
    }

    private static void run(long seed, int steps) {
        int dim = 16;
        int pool = 3_000;
        float[][] vectors = Datasets.clustered(seed, pool, dim, 12, 0.35);
        SplittableRandom rnd = new SplittableRandom(seed * 31 + 7);
        Metric metric = Math.floorMod(seed, 2) == 0 ? Metric.COSINE : Metric.L2;
        HnswIndex index =
                new HnswIndex(
                        dim,
                        metric,
                        HnswParams.of(6, 40).withSeed(seed),
                        dev.nepenthe.core.vector.Kernels.get(),
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
                assertEquals(count, removed, "step " + step);
                IntegrityReport report = index.verifyIntegrity();
                checks++;
                int at = step;
                assertTrue(
                        report.isClean(),
                        () ->
                                "seed "
                                        + seed
                                        + " step "
                                        + at
                                        + ": "
                                        + report
                                        + dev.nepenthe.testing.Seeds.replay(seed));
                assertEquals(live.size(), report.checked().get("live-nodes"));
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
                                    "seed "
                                            + seed
                                            + " step "
                                            + at
                                            + " scoped check of "
                                            + java.util.Arrays.toString(asked)
                                            + ": "
                                            + scoped
                                            + dev.nepenthe.testing.Seeds.replay(seed));
                }
            } else if (!live.isEmpty()) {
                float[] q = vectors[rnd.nextInt(pool)];
                SearchResult got = index.search(q, 10, Accept.ALL, SearchParams.of("efSearch", 60));
                SearchResult truth = exact.search(q, 10);
                for (int o : got.ordinals()) {
                    assertTrue(
                            exact.contains(o),
                            "seed "
                                    + seed
                                    + " step "
                                    + step
                                    + ": search returned non-live ordinal "
                                    + o);
                }
                assertEquals(Math.min(10, live.size()), got.size(), "step " + step);
                recallSum += Recall.of(truth, got);
                searches++;
            }
            assertEquals(live.size(), index.size());
            maxLive = Math.max(maxLive, live.size());
        }
        assertTrue(checks > 500, "only " + checks + " removal batches were checked");
        assertTrue(maxLive > 500, "the graph never grew past " + maxLive + " live nodes");
        double recall = recallSum / searches;
        assertTrue(
                recall > 0.9,
                "seed " + seed + ": mean recall@10 " + recall + " over " + searches + " searches");
    }
}
