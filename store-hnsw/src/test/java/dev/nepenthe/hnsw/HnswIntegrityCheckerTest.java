package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Datasets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The checker must be able to fail: break one invariant at a time and see it counted. */
class HnswIntegrityCheckerTest {

    private static HnswIndex fresh() {
        float[][] data = Datasets.clustered(51, 400, 8, 4, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(6, 30));
        index.remove(7);
        assertTrue(index.verifyIntegrity().isClean());
        return index;
    }

    @Test
    void anEdgeToAFreedSlotIsCounted() {
        HnswIndex index = fresh();
        HnswGraph g = index.graph();
        int freed = g.freeSlot(0);
        int victim = index.slotOf(3);
        int[] list = g.neighbors(victim, 0);
        list[0] = freed;
        g.setNeighbors(victim, 0, list, list.length); // reverse lists deliberately not updated
        IntegrityReport r = index.verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.REMOVED_IN_LIST), r::toString);
        assertTrue(r.violations(HnswIntegrityChecker.REVERSE) >= 1, r::toString);
    }

    @Test
    void anEdgeRedirectedToAnotherLiveNodeWithoutItsReverseEntryIsNamed() {
        HnswIndex index = fresh();
        HnswGraph g = index.graph();
        int victim = index.slotOf(3);
        int[] list = g.neighbors(victim, 0);
        int other = -1;
        for (int s = 0; s < g.highWater() && other < 0; s++) {
            if (g.isLive(s) && s != victim && !HnswGraph.contains(list, list.length, s)) {
                other = s;
            }
        }
        list[0] = other; // same number of edges and reverse entries: only their content disagrees
        g.setNeighbors(victim, 0, list, list.length);
        IntegrityReport r = index.verifyIntegrity();
        assertEquals(2, r.violations(HnswIntegrityChecker.REVERSE), r::toString);
    }

    @ParameterizedTest(name = "vectors {0}")
    @EnumSource(HnswParams.VectorStorage.class)
    void leftoverVectorBytesInAFreedSlotAreCounted(HnswParams.VectorStorage storage) {
        float[][] data = Datasets.clustered(51, 400, 8, 4, 0.3);
        HnswIndex index =
                HnswFixtures.build(data, Metric.L2, HnswParams.of(6, 30).withStorage(storage));
        index.remove(7);
        assertTrue(index.verifyIntegrity().isClean());
        HnswGraph g = index.graph();
        assertEquals(storage == HnswParams.VectorStorage.OFF_HEAP, g.store().vectorsOffHeap());
        String where =
                storage == HnswParams.VectorStorage.OFF_HEAP
                        ? "vectorBytesOffHeap"
                        : "vectorBytesOnHeap";
        assertEquals(
                (long) g.capacity() * 8 * Float.BYTES,
                index.describe().stats().get(where).longValue(),
                index.describe().stats()::toString);
        g.store()
                .vectors()
                .setAtIndex(
                        java.lang.foreign.ValueLayout.JAVA_FLOAT,
                        g.store().vectorOffset(g.freeSlot(0)) + 3,
                        0.5f);
        IntegrityReport r = index.verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.NOT_ZEROED), r::toString);
    }

    @Test
    void aStrandedNodeIsCountedAndReconnected() {
        HnswIndex index = fresh();
        HnswGraph g = index.graph();
        int target = index.slotOf(11);
        // Remove every in-link of one node (keeping reverse lists in step): it becomes unreachable.
        for (int a : g.reverseNeighbors(target, 0)) {
            int[] list = g.neighbors(a, 0);
            int[] without = java.util.Arrays.stream(list).filter(v -> v != target).toArray();
            g.replaceList(a, 0, without, without.length, null);
        }
        IntegrityReport r = index.verifyIntegrity();
        assertTrue(r.violations(HnswIntegrityChecker.UNREACHABLE) >= 1, r::toString);
        assertEquals(
                r.checked().get("live-nodes") - r.violations(HnswIntegrityChecker.UNREACHABLE),
                r.checked().get("reachable-on-layer-0"));
        assertTrue(index.connectUnreachable() >= 1);
        IntegrityReport after = index.verifyIntegrity();
        assertTrue(after.isClean(), after::toString);
    }

    @Test
    void anOverfullListAndAWrongEntryPointAreCounted() {
        HnswIndex index = fresh();
        HnswGraph g = index.graph();
        long entry = g.entry();
        int low = -1;
        for (int s = 0; s < g.highWater(); s++) {
            if (g.isLive(s) && g.level(s) == 0) {
                low = s;
                break;
            }
        }
        g.setEntry(low, 0);
        IntegrityReport r = index.verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.ENTRY_NOT_TOP), r::toString);
        g.setEntry(HnswGraph.entrySlot(entry), HnswGraph.entryLevel(entry));
        int[] a = g.listArray(low, 0);
        int base = g.listBase(low, 0);
        a[base] = g.maxDegree0 + 1;
        r = index.verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.DEGREE), r::toString);
    }

    private static HnswIndex freshQuantized(HnswParams.VectorStorage storage) {
        float[][] data = Datasets.clustered(52, 400, 8, 4, 0.3);
        HnswIndex index =
                HnswFixtures.build(
                        data,
                        Metric.L2,
                        HnswParams.of(6, 30)
                                .withQuantization(HnswParams.Quantization.INT8)
                                .withStorage(storage));
        assertEquals(
                storage == HnswParams.VectorStorage.OFF_HEAP, index.graph().store().codesOffHeap());
        index.remove(7);
        IntegrityReport control = index.verifyIntegrity();
        assertTrue(control.isClean(), control::toString);
        assertEquals(399, control.checked().get("codes-recomputed").intValue());
        assertEquals(0, control.violations(HnswIntegrityChecker.CODE_MISMATCH));
        assertEquals(0, control.violations(HnswIntegrityChecker.CODE_NOT_ZEROED));
        return index;
    }

    @ParameterizedTest
    @EnumSource(HnswParams.VectorStorage.class)
    void aCodeThatIsNotItsVectorsCodeIsNamed(HnswParams.VectorStorage storage) {
        HnswIndex index = freshQuantized(storage);
        HnswGraph g = index.graph();
        int slot = index.slotOf(3);
        int at = Int8Codes.LEVELS_AT + 2;
        g.store()
                .setCodeByte(
                        slot,
                        at,
                        (byte) (g.store().codeByte(slot, at) ^ 1)); // one level off by one
        IntegrityReport r = index.verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.CODE_MISMATCH), r::toString);
        g.store().setCodeByte(slot, at, (byte) (g.store().codeByte(slot, at) ^ 1));
        assertTrue(index.verifyIntegrity().isClean());
        // A correction counts too: the stored norm's sign and exponent byte.
        g.store().setCodeByte(slot, 15, (byte) (g.store().codeByte(slot, 15) ^ 0x40));
        r = index.verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.CODE_MISMATCH), r::toString);
    }

    @ParameterizedTest
    @EnumSource(HnswParams.VectorStorage.class)
    void leftoverCodeBytesInAFreedSlotAreNamedByBothCheckers(HnswParams.VectorStorage storage) {
        HnswIndex index = freshQuantized(storage);
        HnswGraph g = index.graph();
        int freed = g.freeSlot(0);
        g.store().setCodeByte(freed, g.store().codec().stride() - 3, (byte) 5);
        IntegrityReport full = index.verifyIntegrity();
        assertEquals(1, full.violations(HnswIntegrityChecker.CODE_NOT_ZEROED), full::toString);
        assertEquals(
                0,
                full.violations(HnswIntegrityChecker.NOT_ZEROED),
                "the vector bytes are zero: " + full);
        IntegrityReport scoped = index.verifyRemoval(new int[] {7});
        assertEquals(1, scoped.violations(HnswIntegrityChecker.CODE_NOT_ZEROED), scoped::toString);
    }
}
