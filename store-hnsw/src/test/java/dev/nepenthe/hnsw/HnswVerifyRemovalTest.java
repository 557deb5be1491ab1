package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.Seeds;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The scoped removal check: it agrees with the full checker on a clean removal while looking at a
 * small part of the graph, and it fails when the removal's scope is broken.
 */
class HnswVerifyRemovalTest {

    private static final int N = 5_000;
    private static final int REMOVED = 20;

    /** A random graph with one batch of {@link #REMOVED} random ordinals removed. */
    private record Fixture(
            HnswIndex index, float[][] data, int[] removed, int[] oldSlots, long seed) {
        HnswGraph g() {
            return index.graph();
        }

        String replay() {
            return Seeds.replay(seed);
        }
    }

    private static Fixture removedBatch(String test) {
        long seed = Seeds.draw("HnswVerifyRemovalTest." + test);
        float[][] data = Datasets.clustered(seed, N, 16, 25, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 40));
        int[] removed = Arrays.copyOf(HnswDeleteRepairTest.shuffled(N, seed), REMOVED);
        int[] oldSlots = Arrays.stream(removed).map(index::slotOf).toArray();
        assertEquals(REMOVED, index.removeAll(removed));
        return new Fixture(index, data, removed, oldSlots, seed);
    }

    /**
     * A live node other than the entry point in the removal's scope (a neighbour of a removed node,
     * or one the repair changed).
     */
    private static int aTouchedLiveNode(Fixture f) {
        for (int s : touchedSlots(f)) {
            if (f.g().isLive(s) && s != HnswGraph.entrySlot(f.g().entry())) {
                return s;
            }
        }
        throw new AssertionError("no live touched node" + f.replay());
    }

    private static int[] touchedSlots(Fixture f) {
        return f.index().traceOf(f.removed()[0]).touched();
    }

    private static IntegrityReport scoped(Fixture f) {
        return f.index().verifyRemoval(f.removed());
    }

    private static void assertCleanBeforeTheBreak(Fixture f) {
        IntegrityReport control = scoped(f);
        assertTrue(control.isClean(), () -> "control: " + control + f.replay());
    }

    @Test
    void afterABatchTheScopedCheckIsCleanAgreesWithTheFullOneAndLooksAtATenthOfTheLists() {
        Fixture f = removedBatch("clean");
        IntegrityReport full = f.index().verifyIntegrity();
        IntegrityReport scoped = scoped(f);
        System.out.println("full:   " + full.checked());
        System.out.println("scoped: " + scoped.checked());
        assertTrue(full.isClean(), () -> full + f.replay());
        assertTrue(scoped.isClean(), () -> scoped + f.replay());
        assertEquals(REMOVED, scoped.checked().get("scoped-removed"));
        assertEquals(REMOVED, scoped.checked().get("scoped-freed-slots"));
        assertEquals(0L, scoped.checked().get("scoped-reachability-walks"), scoped::toString);
        long scopedLists = scoped.checked().get("scoped-lists");
        long fullLists = full.checked().get("lists");
        assertTrue(
                scopedLists > REMOVED, "the scope holds the removed nodes' neighbours: " + scoped);
        assertTrue(
                scopedLists * 10 < fullLists,
                "scoped check read "
                        + scopedLists
                        + " lists, the full one "
                        + fullLists
                        + f.replay());
        assertFalse(scoped.checked().containsKey("lists"), "no full check ran: " + scoped);
        // Traces stay after a clean check, so the same proof can be asked for again.
        assertEquals(scoped.checked(), scoped(f).checked());
    }

    @Test
    void theFreedSlotPutBackIntoATouchedListIsFound() {
        Fixture f = removedBatch("freedSlotInList");
        assertCleanBeforeTheBreak(f);
        int t = aTouchedLiveNode(f);
        int[] list = f.g().neighbors(t, 0);
        list[0] = f.oldSlots()[0];
        f.g().setNeighbors(t, 0, list, list.length); // a ghost edge, reverse lists not told
        IntegrityReport r = scoped(f);
        assertEquals(1, r.violations(HnswIntegrityChecker.REMOVED_IN_LIST), () -> r + f.replay());
    }

    @Test
    void aMissingReverseEntryOfATouchedNodeIsFound() {
        Fixture f = removedBatch("reverseEntry");
        assertCleanBeforeTheBreak(f);
        int t = aTouchedLiveNode(f);
        int n = f.g().neighbors(t, 0)[0];
        f.g().removeReverse(n, 0, t);
        IntegrityReport r = scoped(f);
        assertEquals(1, r.violations(HnswIntegrityChecker.REVERSE), () -> r + f.replay());
        assertTrue(r.samples().get(0).contains("edge " + t + " -> " + n), () -> r + f.replay());
    }

    @Test
    void aTouchedNodeWithoutASmallerLabelledInNeighbourBreaksTheCertificate() {
        Fixture f = removedBatch("certificate");
        assertCleanBeforeTheBreak(f);
        int t = aTouchedLiveNode(f);
        f.g().setLabel(t, 0); // no in-neighbour has a label below 0: the chain from t is broken
        IntegrityReport r = scoped(f);
        assertEquals(1, r.violations(HnswIntegrityChecker.CERTIFICATE), () -> r + f.replay());
    }

    @Test
    void aTouchedNodeCutOffFromEveryInNeighbourIsUnreachable() {
        Fixture f = removedBatch("cutOff");
        assertCleanBeforeTheBreak(f);
        HnswGraph g = f.g();
        int t = aTouchedLiveNode(f);
        for (int a : g.reverseNeighbors(t, 0)) {
            int[] without = Arrays.stream(g.neighbors(a, 0)).filter(v -> v != t).toArray();
            g.replaceList(a, 0, without, without.length, null); // reverse lists kept in step
        }
        IntegrityReport r = scoped(f);
        assertEquals(1, r.violations(HnswIntegrityChecker.UNREACHABLE), () -> r + f.replay());
        // The full checker agrees (and may count nodes reached only through t as well).
        assertTrue(f.index().verifyIntegrity().violations(HnswIntegrityChecker.UNREACHABLE) >= 1);
    }

    @Test
    void vectorBytesLeftInTheFreedSlotAreFound() {
        Fixture f = removedBatch("bytesLeft");
        assertCleanBeforeTheBreak(f);
        HnswGraph g = f.g();
        int freed = f.oldSlots()[REMOVED - 1];
        g.store()
                .vectors()
                .setAtIndex(
                        java.lang.foreign.ValueLayout.JAVA_FLOAT,
                        g.store().vectorOffset(freed) + 2,
                        0.25f);
        IntegrityReport r = scoped(f);
        assertEquals(1, r.violations(HnswIntegrityChecker.NOT_ZEROED), () -> r + f.replay());
    }

    @Test
    void anOrdinalWithoutATraceGetsTheFullCheck() {
        Fixture f = removedBatch("untraced");
        int neverRemoved = -1;
        for (int o = 0; neverRemoved < 0; o++) {
            int candidate = o;
            if (Arrays.stream(f.removed()).noneMatch(r -> r == candidate)) {
                neverRemoved = o;
            }
        }
        int[] asked = {f.removed()[0], neverRemoved};
        IntegrityReport r = f.index().verifyRemoval(asked);
        IntegrityReport full = f.index().verifyIntegrity();
        assertTrue(r.isClean(), r::toString);
        assertEquals(1L, r.checked().get("scoped-fallback-untraced-ordinals"), r::toString);
        assertEquals(full.checked().get("lists"), r.checked().get("lists"), r::toString);
        assertEquals(full.checked().get("live-nodes"), r.checked().get("live-nodes"), r::toString);
        assertFalse(r.checked().containsKey("scoped-lists"), r::toString);
    }

    @Test
    void aReAddedOrdinalIsCheckedAsALiveEntry() {
        Fixture f = removedBatch("reAdded");
        HnswGraph g = f.g();
        // A level-0 ordinal, so its return cannot move the entry point (which would invalidate
        // the labels and send the check to the full checker).
        int back =
                Arrays.stream(f.removed())
                        .filter(o -> f.index().levelFor(o) == 0)
                        .findFirst()
                        .orElseThrow();
        f.index().add(back, f.data()[back]);
        IntegrityReport r = f.index().verifyRemoval(f.removed());
        assertTrue(r.isClean(), () -> r + f.replay());
        assertEquals(1L, r.checked().get("scoped-live-again"), r::toString);
        assertFalse(r.checked().containsKey("lists"), "no full check ran: " + r);
        // Its entry is really checked: break its own list's reverse side.
        int s = f.index().slotOf(back);
        int n = g.neighbors(s, 0)[0];
        g.removeReverse(n, 0, s);
        IntegrityReport broken = f.index().verifyRemoval(new int[] {back});
        assertEquals(1, broken.violations(HnswIntegrityChecker.REVERSE), () -> broken + f.replay());
        // Removed again: both removals are covered, and the ordinal maps to nothing.
        g.addReverse(n, 0, s);
        assertEquals(1, f.index().removeAll(new int[] {back}));
        IntegrityReport again = f.index().verifyRemoval(new int[] {back});
        assertTrue(again.isClean(), () -> again + f.replay());
        assertEquals(2L, again.checked().get("scoped-removed"), again::toString);
    }
}
