package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/**
 * Removal with repair against a fresh build over the same survivors, the exact index being the
 * oracle for both.
 */
class HnswDeleteRepairTest {

    static final int N = 12_000;
    static final int DIM = 128;

    /** efSearch at which repaired and rebuilt graphs are compared (see HnswRecallTest). */
    static final int EF = 64;

    @Test
    void recallAfterRemoving10And50PercentStaysWithinOnePointOfARebuild() {
        float[][] all = Datasets.clustered(7, N + 200, DIM, 100, 0.3);
        float[][] data = Arrays.copyOf(all, N);
        float[][] queries = Arrays.copyOfRange(all, N, N + 200);
        HnswParams p = HnswParams.of(16, 100);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, p);
        int[] order = shuffled(N, 3);
        RoaringBitmap survivors = new RoaringBitmap();
        survivors.add(0L, N);

        int removed = 0;
        for (double fraction : new double[] {0.10, 0.50}) {
            int target = (int) (N * fraction);
            // One at a time for the first stage, in batches of 100 for the second: both paths
            // repair.
            while (removed < target) {
                if (fraction < 0.2) {
                    assertTrue(index.remove(order[removed]));
                    survivors.remove(order[removed]);
                    removed++;
                } else {
                    int[] batch =
                            Arrays.copyOfRange(order, removed, Math.min(target, removed + 100));
                    assertEquals(batch.length, index.removeAll(batch));
                    for (int o : batch) {
                        survivors.remove(o);
                    }
                    removed += batch.length;
                }
            }
            IntegrityReport report = index.verifyIntegrity();
            assertTrue(report.isClean(), report::toString);
            assertEquals(0, report.violations(HnswIntegrityChecker.UNREACHABLE));
            assertEquals(0, report.violations(HnswIntegrityChecker.REMOVED_IN_LIST));
            assertEquals(N - target, index.size());

            HnswIndex fresh = new HnswIndex(DIM, Metric.L2, p);
            survivors.forEach((int o) -> fresh.add(o, data[o]));
            ExactIndex exact = HnswFixtures.exact(data, Metric.L2, survivors);
            double repaired = HnswFixtures.recall(index, exact, queries, 10, EF);
            double rebuilt = HnswFixtures.recall(fresh, exact, queries, 10, EF);
            assertTrue(
                    repaired >= rebuilt - 0.01,
                    "after removing "
                            + fraction
                            + ": repaired recall "
                            + repaired
                            + " vs rebuilt "
                            + rebuilt);
        }
        // No removed ordinal is ever returned, at any beam width.
        for (float[] q : queries) {
            for (int o :
                    index.search(q, 50, Accept.ALL, SearchParams.of("efSearch", 200)).ordinals()) {
                assertTrue(survivors.contains(o), "removed ordinal " + o + " returned");
            }
        }
    }

    /**
     * Batches of neighbouring removals: many lists link to several removed nodes at once and are
     * re-selected from the union of their pools. Against a rebuild of the survivors (oracle for
     * what a healthy graph of this size looks like): the layer-0 degree must not erode (a repair
     * that only dropped edges loses about 40% of them here) and recall at a narrow beam, where a
     * damaged graph shows first, must stay close.
     */
    @Test
    void batchRepairKeepsDegreesAndRecallOfARebuild() {
        int n = 6_000;
        float[][] all = Datasets.clustered(11, n + 200, 48, 30, 0.3);
        float[][] data = Arrays.copyOf(all, n);
        float[][] queries = Arrays.copyOfRange(all, n, n + 200);
        HnswParams p = HnswParams.of(12, 80);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, p);
        // Remove 40% in batches of consecutive ordinals near one another in vector space: the
        // queries' clusters lose most of their members in few batches.
        float[] probe = queries[0];
        Integer[] byDistance = new Integer[n];
        for (int i = 0; i < n; i++) {
            byDistance[i] = i;
        }
        Arrays.sort(
                byDistance,
                (x, y) ->
                        Float.compare(
                                Metric.L2.score(Kernels.get(), probe, data[y], 0, 48),
                                Metric.L2.score(Kernels.get(), probe, data[x], 0, 48)));
        RoaringBitmap survivors = new RoaringBitmap();
        survivors.add(0L, n);
        int removedCount = 0;
        for (int b = 0; b < 48; b++) {
            int[] batch = new int[50];
            for (int i = 0; i < 50; i++) {
                batch[i] = byDistance[removedCount++];
                survivors.remove(batch[i]);
            }
            assertEquals(50, index.removeAll(batch));
        }
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);

        HnswIndex fresh = new HnswIndex(48, Metric.L2, p);
        survivors.forEach((int o) -> fresh.add(o, data[o]));
        double repairedDegree = meanLayer0Degree(index.graph());
        double rebuiltDegree = meanLayer0Degree(fresh.graph());
        assertTrue(
                repairedDegree >= 0.9 * rebuiltDegree,
                "mean layer-0 degree "
                        + repairedDegree
                        + " after repair vs "
                        + rebuiltDegree
                        + " rebuilt");
        ExactIndex exact = HnswFixtures.exact(data, Metric.L2, survivors);
        double repaired = HnswFixtures.recall(index, exact, queries, 10, 16);
        double rebuilt = HnswFixtures.recall(fresh, exact, queries, 10, 16);
        assertTrue(
                repaired >= rebuilt - 0.02,
                "recall@10 at ef 16: repaired " + repaired + " vs rebuilt " + rebuilt);
    }

    static double meanLayer0Degree(HnswGraph g) {
        long sum = 0;
        int live = 0;
        for (int s = 0; s < g.highWater(); s++) {
            if (g.isLive(s)) {
                sum += g.degree(s, 0);
                live++;
            }
        }
        return sum / (double) live;
    }

    @Test
    void removalZeroesTheVectorRecyclesTheSlotAndMovesTheEntryPoint() {
        float[][] data = Datasets.clustered(5, 2_000, 32, 20, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 60));
        int entry = index.entryOrdinal();
        int entrySlot = index.slotOf(entry);
        assertTrue(index.remove(entry));
        assertFalse(index.remove(entry), "second removal of the same ordinal");
        assertFalse(index.contains(entry));
        assertNull(index.vector(entry));
        assertTrue(index.entryOrdinal() != entry && index.contains(index.entryOrdinal()));
        // The slot's bytes are zero: a byte scan of the layout, not a flag.
        java.lang.foreign.MemorySegment vectors = index.graph().store().vectors();
        long off = index.graph().store().vectorOffset(entrySlot);
        for (int i = 0; i < 32; i++) {
            assertEquals(0, vectors.getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, off + i));
        }
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);
        assertEquals(1, report.checked().get("free-slots"));
        // The ordinal may be reused, and the freed slot is recycled for it.
        index.add(entry, data[entry]);
        assertEquals(entrySlot, index.slotOf(entry));
        assertTrue(index.verifyIntegrity().isClean());
        assertEquals(entry, index.search(data[entry], 1).ordinals()[0]);
    }

    @Test
    void removingEverythingLeavesAnEmptyCleanGraph() {
        float[][] data = Datasets.clustered(6, 500, 16, 5, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.COSINE, HnswParams.of(6, 40));
        int[] all = shuffled(500, 9);
        assertEquals(250, index.removeAll(Arrays.copyOf(all, 250)));
        assertTrue(index.verifyIntegrity().isClean());
        for (int o : Arrays.copyOfRange(all, 250, 500)) {
            assertTrue(index.remove(o));
        }
        assertEquals(0, index.size());
        assertEquals(-1, index.entryOrdinal());
        assertEquals(0, index.search(data[0], 5).size());
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);
        assertEquals(500, report.checked().get("free-slots"));
    }

    /**
     * Removals prove reachability from the nodes they touched, not by walking the graph: after the
     * build's one walk, 300 single removals and 30 batches of 10 (600 records) walk only when the
     * entry point itself is removed (or, at most twice, when a node is left with no in-link), and
     * the integrity checker (which walks layer 0 from the entry point on its own) finds every live
     * node reachable after each round.
     */
    @Test
    void removalsCertifyReachabilityWithoutWalkingTheGraph() {
        long seed = dev.nepenthe.testing.Seeds.draw("HnswDeleteRepairTest.certify");
        int n = 12_000;
        float[][] data = Datasets.clustered(seed, n, 16, 40, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 40));
        index.afterBulkLoad();
        long walksBefore = index.fullWalks();
        int[] order = shuffled(n, seed);
        int at = 0;
        int entryRemovals = 0;
        for (int round = 0; round < 30; round++) {
            for (int i = 0; i < 10; i++, at++) {
                entryRemovals += index.entryOrdinal() == order[at] ? 1 : 0;
                index.remove(order[at]);
            }
            int[] batch = Arrays.copyOfRange(order, at, at + 10);
            for (int o : batch) {
                entryRemovals += index.entryOrdinal() == o ? 1 : 0;
            }
            index.removeAll(batch);
            at += 10;
            IntegrityReport report = index.verifyIntegrity();
            int r = round;
            assertTrue(
                    report.isClean(),
                    () -> "round " + r + ": " + report + dev.nepenthe.testing.Seeds.replay(seed));
        }
        long walks = index.fullWalks() - walksBefore;
        System.out.println(
                "full walks for 600 removals: "
                        + walks
                        + " (entry point removed "
                        + entryRemovals
                        + " times)");
        assertTrue(
                walks <= entryRemovals + 2,
                walks
                        + " full walks for 600 removals ("
                        + entryRemovals
                        + " of the entry point)"
                        + dev.nepenthe.testing.Seeds.replay(seed));
        assertEquals(n - 600, index.size());
    }

    /**
     * A forget removes a subject's records in one batch. In a graph of 60,000 nodes labelled by a
     * walk, five such batches of 100 (random nodes, and nodes near one another) must each be
     * certified from the nodes they touched, without a walk over the graph. (At 1M nodes the
     * certificate's budget, then sized by the pending nodes alone, ran out and every forget walked;
     * this size cannot show that, and the test guards the local proof it relies on.)
     */
    @Test
    void batchRemovalsCertifyWithoutWalkingTheGraph() {
        long seed = dev.nepenthe.testing.Seeds.draw("HnswDeleteRepairTest.batches");
        int n = 60_000;
        float[][] data = Datasets.clustered(seed, n, 16, 50, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(16, 40));
        index.afterBulkLoad();
        int[] order = shuffled(n, seed);
        int at = 0;
        long walks = 0;
        long raised = 0;
        for (int batch = 0; batch < 5; batch++) {
            int[] removed;
            if (batch % 2 == 0) {
                removed = Arrays.copyOfRange(order, at, at + 100);
                at += 100;
            } else {
                removed = Arrays.stream(index.search(data[order[at++]], 100).ordinals()).toArray();
            }
            if (Arrays.stream(removed).anyMatch(o -> o == index.entryOrdinal())) {
                continue; // a new entry point relabels the graph by a walk, rightly
            }
            long before = index.fullWalks();
            long raisedBefore = index.relabelled();
            index.removeAll(removed);
            walks += index.fullWalks() - before;
            raised += index.relabelled() - raisedBefore;
        }
        System.out.println(
                "five batches of 100 removals: "
                        + walks
                        + " full walks, "
                        + raised
                        + " labels raised");
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), () -> report + dev.nepenthe.testing.Seeds.replay(seed));
        assertEquals(
                0,
                walks,
                "full walks for five batches of 100 removals"
                        + dev.nepenthe.testing.Seeds.replay(seed));
    }

    /**
     * Removing the first nodes inserted, hubs near the entry point (as a forget of a store's oldest
     * subject does), takes many nodes' one in-neighbour a depth above them. A walk spaces the
     * depths' labels ({@link ReachabilityCertifier#LABEL_STEP}), so a node raised above a neighbour
     * of its own depth stays below the next depth and the nodes there that leaned on it need no
     * raise. At 60,000 nodes, five batches of 100 such removals raised 8,000 to 20,000 labels with
     * spaced depths and 98,000 to 117,000 with depths one apart (seeds 1 to 3). Over 51 seeds,
     * spaced depths raised 6,600 to 16,300, and one seed 36,553 (2588024398980570721, which failed
     * a fresh-clone CI run against a bound of half the graph); the bound here, the graph's size,
     * still sits below every figure with depths one apart.
     */
    @Test
    void removingHubsNearTheEntryPointRaisesFewLabels() {
        long seed = dev.nepenthe.testing.Seeds.draw("HnswDeleteRepairTest.hubs");
        int n = 60_000;
        float[][] data = Datasets.lowRank(seed, n, 32, 50, 8, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.COSINE, HnswParams.of(16, 40));
        index.afterBulkLoad();
        long raised = 0;
        long walks = 0;
        for (int batch = 0; batch < 5; batch++) {
            int from = batch * 100;
            int[] removed =
                    java.util.stream.IntStream.range(from, from + 100)
                            .filter(o -> o != index.entryOrdinal())
                            .toArray();
            long raisedBefore = index.relabelled();
            long walksBefore = index.fullWalks();
            index.removeAll(removed);
            raised += index.relabelled() - raisedBefore;
            walks += index.fullWalks() - walksBefore;
        }
        System.out.println(
                "five batches of the first 100 inserted: "
                        + raised
                        + " labels raised, "
                        + walks
                        + " full walks");
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), () -> report + dev.nepenthe.testing.Seeds.replay(seed));
        assertTrue(
                raised < n,
                raised
                        + " labels raised for 500 removals in a graph of "
                        + n
                        + dev.nepenthe.testing.Seeds.replay(seed));
    }

    /**
     * The certificate catches a group cut off together: two nodes that link to each other but that
     * nothing else reaches on layer 0 still have an in-link each, so only the labels can tell. The
     * next removal anywhere must notice (their labels keep raising each other), fall back to the
     * full walk and link them back.
     */
    @Test
    void aRemovalElsewhereNoticesTwoNodesCutOffTogether() {
        int n = 2_000;
        float[][] data = Datasets.clustered(77, n, 8, 20, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 40));
        index.afterBulkLoad();
        HnswGraph g = index.graph();
        int a = 100;
        int b = 101; // slots; the build hands them out in ordinal order
        for (int[] pair : new int[][] {{a, b}, {b, a}}) {
            int x = pair[0];
            int other = pair[1];
            for (int u : g.reverseNeighbors(x, 0)) {
                if (u != other) {
                    int[] list = g.neighbors(u, 0);
                    int[] without = Arrays.stream(list).filter(v -> v != x).toArray();
                    g.replaceList(u, 0, without, without.length, null);
                }
            }
            int[] own = g.neighbors(x, 0);
            if (Arrays.stream(own).noneMatch(v -> v == other)) {
                int[] with = Arrays.copyOf(own, Math.min(own.length + 1, g.maxDegree(0)));
                with[with.length - 1] = other;
                g.replaceList(x, 0, with, with.length, null);
            }
        }
        assertEquals(
                2,
                index.verifyIntegrity().violations(HnswIntegrityChecker.UNREACHABLE),
                "control: the two nodes are cut off from the entry point");
        long walks = index.fullWalks();
        index.remove(1_500);
        assertTrue(index.fullWalks() > walks, "the removal fell back to a full walk");
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);
    }

    static int[] shuffled(int n, long seed) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        return a;
    }
}
