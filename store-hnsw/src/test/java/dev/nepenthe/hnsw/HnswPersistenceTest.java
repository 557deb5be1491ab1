package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.index.VectorIndexes;
import dev.nepenthe.testing.Datasets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HnswPersistenceTest {

    @TempDir Path dir;

    /**
     * Where the vectors live is chosen at each open: a graph saved from either loads into either.
     */
    @ParameterizedTest(name = "saved from {0}, loaded into {1}")
    @CsvSource({"heap, heap", "heap, offheap", "offheap, heap", "offheap, offheap"})
    void saveAndLoadGiveAnIdenticalGraph(String savedFrom, String loadedInto) throws Exception {
        float[][] data = Datasets.clustered(31, 3_000, 24, 15, 0.3);
        HnswIndex index =
                HnswFixtures.build(
                        data,
                        Metric.COSINE,
                        HnswParams.of(8, 50)
                                .withStorage(HnswParams.VectorStorage.fromParam(savedFrom)));
        // Removals leave free slots and a free list: those must round-trip too.
        index.removeAll(Arrays.copyOf(HnswDeleteRepairTest.shuffled(3_000, 4), 300));
        Path file = dir.resolve("graph.hnsw");
        index.save(file);

        HnswIndex loaded =
                (HnswIndex)
                        VectorIndexes.factory("hnsw")
                                .load(
                                        new IndexConfig(
                                                24,
                                                Metric.COSINE,
                                                Map.of(HnswParams.VECTORS, loadedInto),
                                                0),
                                        file);
        assertEquals(index.size(), loaded.size());
        assertEquals(loadedInto.equals("offheap"), loaded.graph().store().vectorsOffHeap());
        assertEquals(
                index.params().withStorage(HnswParams.VectorStorage.fromParam(loadedInto)),
                loaded.params());
        assertEquals(index.entryOrdinal(), loaded.entryOrdinal());
        for (int ord = 0; ord < 3_000; ord++) {
            assertEquals(index.contains(ord), loaded.contains(ord));
            if (!index.contains(ord)) {
                continue;
            }
            assertEquals(index.slotOf(ord), loaded.slotOf(ord));
            assertArrayEquals(index.vector(ord), loaded.vector(ord));
            assertEquals(index.levelOf(ord), loaded.levelOf(ord));
            for (int l = 0; l <= index.levelOf(ord); l++) {
                assertArrayEquals(
                        index.neighborOrdinals(ord, l),
                        loaded.neighborOrdinals(ord, l),
                        "ordinal " + ord);
            }
        }
        assertTrue(loaded.verifyIntegrity().isClean(), () -> loaded.verifyIntegrity().toString());
        for (int i = 0; i < 50; i++) {
            SearchResult a = index.search(data[i], 10, Accept.ALL, SearchParams.of("efSearch", 40));
            SearchResult b =
                    loaded.search(data[i], 10, Accept.ALL, SearchParams.of("efSearch", 40));
            assertArrayEquals(a.ordinals(), b.ordinals());
            assertArrayEquals(a.scores(), b.scores());
        }
        // The loaded index keeps working: recycled slots are handed out in the same order.
        int reused = HnswDeleteRepairTest.shuffled(3_000, 4)[0];
        index.add(reused, data[reused]);
        loaded.add(reused, data[reused]);
        assertEquals(index.slotOf(reused), loaded.slotOf(reused));
        assertArrayEquals(index.neighborOrdinals(reused, 0), loaded.neighborOrdinals(reused, 0));
        // Saving the loaded copy gives the same bytes apart from the 16-byte file id and the
        // checksum.
        Path again = dir.resolve("again.hnsw");
        index.save(file);
        loaded.save(again);
        byte[] x = Files.readAllBytes(file);
        byte[] y = Files.readAllBytes(again);
        assertEquals(x.length, y.length);
        int headerIdEnd = 4 + 2 + "nepenthe-hnsw".length() + 4 + 16;
        assertArrayEquals(
                Arrays.copyOfRange(x, headerIdEnd, x.length - 12),
                Arrays.copyOfRange(y, headerIdEnd, y.length - 12));
    }

    @Test
    void aFlippedByteFailsWithAClearError() throws Exception {
        float[][] data = Datasets.clustered(32, 500, 8, 5, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(6, 30));
        Path file = dir.resolve("graph.hnsw");
        index.save(file);
        byte[] bytes = Files.readAllBytes(file);
        for (int pos : new int[] {10, bytes.length / 2, bytes.length - 13}) {
            byte[] copy = bytes.clone();
            copy[pos] ^= 0x10;
            Path bad = dir.resolve("bad-" + pos + ".hnsw");
            Files.write(bad, copy);
            CorruptFileException e =
                    assertThrows(
                            CorruptFileException.class,
                            () -> HnswIndex.load(new IndexConfig(8, Metric.L2), bad));
            assertTrue(e.getMessage().contains("checksum"), e.getMessage());
            assertTrue(e.getMessage().contains(bad.getFileName().toString()), e.getMessage());
        }
        Path truncated = dir.resolve("truncated.hnsw");
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 100));
        assertThrows(
                CorruptFileException.class,
                () -> HnswIndex.load(new IndexConfig(8, Metric.L2), truncated));
    }

    @Test
    void loadRefusesAnotherDimensionOrMetric() throws Exception {
        float[][] data = Datasets.clustered(33, 100, 8, 3, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(6, 30));
        Path file = dir.resolve("graph.hnsw");
        index.save(file);
        Exception e =
                assertThrows(
                        Exception.class, () -> HnswIndex.load(new IndexConfig(9, Metric.L2), file));
        assertTrue(e.getMessage().contains("dimension 8"), e.getMessage());
        e =
                assertThrows(
                        Exception.class,
                        () -> HnswIndex.load(new IndexConfig(8, Metric.DOT), file));
        assertTrue(e.getMessage().contains("metric"), e.getMessage());
    }

    @Test
    void factoryParsesAndRejectsParameters() {
        VectorIndex idx =
                VectorIndexes.factory("hnsw")
                        .create(
                                new IndexConfig(
                                        16,
                                        Metric.DOT,
                                        Map.of(
                                                "M",
                                                "12",
                                                "efConstruction",
                                                "90",
                                                "efSearch",
                                                "33",
                                                "repairEf",
                                                "20",
                                                "levelMultiplier",
                                                "0.4"),
                                        5));
        HnswParams p = ((HnswIndex) idx).params();
        assertEquals(new HnswParams(12, 90, 33, 0.4, 20, 5), p);
        IllegalArgumentException unknown =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                VectorIndexes.factory("hnsw")
                                        .create(
                                                new IndexConfig(
                                                        16, Metric.DOT, Map.of("nprobe", "3"), 1)));
        assertTrue(
                unknown.getMessage().contains("nprobe")
                        && unknown.getMessage().contains("efConstruction"),
                unknown.getMessage());
        IllegalArgumentException range =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                VectorIndexes.factory("hnsw")
                                        .create(
                                                new IndexConfig(
                                                        16, Metric.DOT, Map.of("M", "1"), 1)));
        assertTrue(
                range.getMessage().contains("'M'") && range.getMessage().contains("got 1"),
                range.getMessage());
        HnswIndex index = new HnswIndex(3, Metric.L2, HnswParams.of(4, 10));
        index.add(1, new float[] {1, 2, 3});
        IllegalArgumentException dup =
                assertThrows(
                        IllegalArgumentException.class, () -> index.add(1, new float[] {1, 2, 3}));
        assertTrue(dup.getMessage().contains("already live"), dup.getMessage());
        IllegalArgumentException dim =
                assertThrows(
                        IllegalArgumentException.class, () -> index.add(2, new float[] {1, 2}));
        assertTrue(dim.getMessage().contains("expected dimension 3, got 2"), dim.getMessage());
        assertThrows(IllegalArgumentException.class, () -> index.search(new float[] {1, 2, 3}, 0));
    }

    // ---- crafted files: a loaded graph is checked before it serves ----------------------------

    /**
     * Body offsets of the fields the crafted files change (see HnswIndex.save's layout, version 4).
     */
    private static final int CAPACITY = 42, ENTRY_SLOT = 50, ENTRY_LEVEL = 54, FIRST_SLOT = 58;

    private static final int DIM = 4;

    /** A small saved graph: the file's bytes, and the offset where its body starts. */
    private byte[] savedGraph(Path file) throws Exception {
        float[][] data = Datasets.clustered(5, 40, DIM, 3, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(4, 20));
        index.save(file);
        return Files.readAllBytes(file);
    }

    private static int bodyStart() {
        return 4 + 2 + HnswIndex.FORMAT.length() + 4 + 16;
    }

    /** Writes the bytes with a correct checksum: only the structure can give the file away. */
    private static void writeWithFreshChecksum(Path file, byte[] bytes) throws Exception {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes, 0, bytes.length - 12);
        java.nio.ByteBuffer.wrap(bytes, bytes.length - 8, 8).putLong(crc.getValue());
        Files.write(file, bytes);
    }

    private static void putInt(byte[] bytes, int bodyOffset, int value) {
        java.nio.ByteBuffer.wrap(bytes, bodyStart() + bodyOffset, 4).putInt(value);
    }

    private static int getInt(byte[] bytes, int bodyOffset) {
        return java.nio.ByteBuffer.wrap(bytes, bodyStart() + bodyOffset, 4).getInt();
    }

    private void assertRefused(Path file, String expected) {
        CorruptFileException e =
                assertThrows(
                        CorruptFileException.class,
                        () -> HnswIndex.load(new IndexConfig(DIM, Metric.L2), file));
        assertTrue(e.getMessage().contains(file.getFileName().toString()), e.getMessage());
        assertTrue(
                e.getMessage().contains(expected),
                "expected '" + expected + "' in: " + e.getMessage());
    }

    @Test
    void anEntryPointThatIsNoLiveNodeIsRefused() throws Exception {
        Path file = dir.resolve("entry.hnsw");
        byte[] bytes = savedGraph(file);
        putInt(bytes, ENTRY_SLOT, 39 + 1_000);
        writeWithFreshChecksum(file, bytes);
        assertRefused(file, "is not a live node");
    }

    @Test
    void anEntryPointBelowTheTopLayerIsRefused() throws Exception {
        Path file = dir.resolve("level.hnsw");
        byte[] bytes = savedGraph(file);
        putInt(bytes, ENTRY_LEVEL, getInt(bytes, ENTRY_LEVEL) + 1);
        writeWithFreshChecksum(file, bytes);
        assertRefused(file, "entry point");
    }

    @Test
    void aLinkToItselfIsRefused() throws Exception {
        Path file = dir.resolve("self.hnsw");
        byte[] bytes = savedGraph(file);
        // Slot 0: state (1), ordinal (4), level (1), vector (4 * DIM), then layer 0's degree and
        // links.
        int degree = FIRST_SLOT + 1 + 4 + 1 + 4 * DIM;
        assertTrue(getInt(bytes, degree) > 0, "slot 0 has links on layer 0");
        putInt(bytes, degree + 4, 0);
        writeWithFreshChecksum(file, bytes);
        assertRefused(file, "links to itself");
    }

    @Test
    void aListNamingOneSlotTwiceIsRefused() throws Exception {
        Path file = dir.resolve("twice.hnsw");
        byte[] bytes = savedGraph(file);
        int degree = FIRST_SLOT + 1 + 4 + 1 + 4 * DIM;
        assertTrue(getInt(bytes, degree) >= 2, "slot 0 has two links on layer 0");
        putInt(bytes, degree + 8, getInt(bytes, degree + 4));
        writeWithFreshChecksum(file, bytes);
        assertRefused(file, "lists slot " + getInt(bytes, degree + 4) + " twice");
    }

    @Test
    void aLinkToAFreedSlotIsRefused() throws Exception {
        // A graph with one node removed: its slot lies inside the high-water mark, free. The
        // loader learns that only after reading every slot, so this is the check made at the end.
        Path file = dir.resolve("freed.hnsw");
        float[][] data = Datasets.clustered(5, 40, DIM, 3, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(4, 20));
        int removed = index.entryOrdinal() == 20 ? 21 : 20;
        assertTrue(index.remove(removed));
        int freed = -1;
        for (int s = 0; s < index.graph().highWater(); s++) {
            if (index.graph().state(s) == HnswGraph.FREE) {
                freed = s;
            }
        }
        assertTrue(freed > 0, "control: the removal freed a slot other than slot 0");
        index.save(file);
        assertEquals(
                39,
                HnswIndex.load(new IndexConfig(DIM, Metric.L2), file).size(),
                "control: the file loads");
        byte[] bytes = Files.readAllBytes(file);
        int degree = FIRST_SLOT + 1 + 4 + 1 + 4 * DIM;
        assertTrue(getInt(bytes, degree) >= 1, "slot 0 has a link on layer 0");
        putInt(bytes, degree + 4, freed);
        writeWithFreshChecksum(file, bytes);
        assertRefused(file, "links to slot " + freed + ", which holds no node");
    }

    @Test
    void aCraftedCapacityAllocatesNothingAndStillLoads() throws Exception {
        Path file = dir.resolve("capacity.hnsw");
        byte[] bytes = savedGraph(file);
        putInt(bytes, CAPACITY, Integer.MAX_VALUE);
        writeWithFreshChecksum(file, bytes);
        HnswIndex loaded = HnswIndex.load(new IndexConfig(DIM, Metric.L2), file);
        assertEquals(40, loaded.size());
        assertTrue(loaded.verifyIntegrity().isClean(), loaded.verifyIntegrity().toString());
    }

    // ---- reachability labels: stored, so the first removal after a load does not walk ----------

    /** A graph of 2,000 nodes built by inserts alone (never labelled), saved; its file's bytes. */
    private byte[] savedUnlabelledGraph(Path file) throws Exception {
        float[][] data = Datasets.clustered(41, 2_000, 8, 20, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 40));
        assertTrue(!index.graph().labelsValid(), "control: inserts alone do not label the graph");
        index.save(file);
        return Files.readAllBytes(file);
    }

    /** Where the labels flag sits: before one int per live node and the footer. */
    private static int labelsFlagAt(byte[] bytes, int live) {
        return bytes.length - 12 - 4 * live - 1;
    }

    /** Removes three nodes that are not the entry point; returns how many full walks that took. */
    private static long walksForThreeRemovals(HnswIndex index) {
        long before = index.fullWalks();
        int[] removed =
                java.util.stream.IntStream.range(0, 2_000)
                        .filter(o -> o != index.entryOrdinal())
                        .limit(300)
                        .filter(o -> o % 100 == 7)
                        .toArray();
        assertEquals(3, removed.length);
        index.removeAll(removed);
        assertTrue(index.verifyIntegrity().isClean(), () -> index.verifyIntegrity().toString());
        return index.fullWalks() - before;
    }

    @Test
    void aLoadedGraphKeepsItsLabelsSoItsFirstRemovalDoesNotWalk() throws Exception {
        Path file = dir.resolve("labelled.hnsw");
        byte[] bytes = savedUnlabelledGraph(file);
        assertEquals(
                1,
                bytes[labelsFlagAt(bytes, 2_000)],
                "the save labelled the graph and stored the labels");
        HnswIndex loaded = HnswIndex.load(new IndexConfig(8, Metric.L2), file);
        assertTrue(loaded.graph().labelsValid());
        assertEquals(0, walksForThreeRemovals(loaded));

        // Control: the same graph without its labels (a version 2 file loads so) walks once.
        int flag = labelsFlagAt(bytes, 2_000);
        byte[] bare = new byte[flag + 1 + 12];
        System.arraycopy(bytes, 0, bare, 0, flag);
        System.arraycopy(bytes, bytes.length - 12, bare, flag + 1, 12);
        Path unlabelled = dir.resolve("unlabelled.hnsw");
        writeWithFreshChecksum(unlabelled, bare);
        HnswIndex walked = HnswIndex.load(new IndexConfig(8, Metric.L2), unlabelled);
        assertTrue(!walked.graph().labelsValid());
        assertEquals(1, walksForThreeRemovals(walked));

        // A version 4 file's labels (depths one apart) still certify, but are dropped at load
        // so that a walk spaces them: the same bytes, but for the version, walk once.
        int versionAt = 4 + 2 + HnswIndex.FORMAT.length();
        assertEquals(HnswIndex.VERSION, java.nio.ByteBuffer.wrap(bytes, versionAt, 4).getInt());
        byte[] v4 = bytes.clone();
        java.nio.ByteBuffer.wrap(v4, versionAt, 4).putInt(4);
        Path older = dir.resolve("v4.hnsw");
        writeWithFreshChecksum(older, v4);
        HnswIndex relabelled = HnswIndex.load(new IndexConfig(8, Metric.L2), older);
        assertTrue(!relabelled.graph().labelsValid());
        assertEquals(1, walksForThreeRemovals(relabelled));
    }

    /**
     * Labels that do not certify reachability (a node with no in-neighbour labelled below it, a
     * negative label) are dropped at load, not trusted: the first removal walks the graph, and the
     * graph itself still loads and checks clean.
     */
    @ParameterizedTest(name = "label {0}")
    @CsvSource({"0", "-5"})
    void labelsThatCertifyNothingAreDroppedAtLoad(int label) throws Exception {
        Path file = dir.resolve("lying.hnsw");
        byte[] bytes = savedUnlabelledGraph(file);
        HnswIndex honest = HnswIndex.load(new IndexConfig(8, Metric.L2), file);
        int slot = (honest.slotOf(honest.entryOrdinal()) + 1) % 2_000; // slots follow ordinals here
        int at = labelsFlagAt(bytes, 2_000) + 1 + 4 * slot;
        assertTrue(
                java.nio.ByteBuffer.wrap(bytes, at, 4).getInt() > 0,
                "control: a node other than the entry point");
        java.nio.ByteBuffer.wrap(bytes, at, 4).putInt(label);
        writeWithFreshChecksum(file, bytes);
        HnswIndex loaded = HnswIndex.load(new IndexConfig(8, Metric.L2), file);
        assertTrue(!loaded.graph().labelsValid(), "the stored labels were trusted");
        assertEquals(1, walksForThreeRemovals(loaded));
    }

    @Test
    void anImplausibleOrdinalIsRefusedBeforeItIsAllocated() throws Exception {
        Path file = dir.resolve("ordinal.hnsw");
        byte[] bytes = savedGraph(file);
        putInt(bytes, FIRST_SLOT + 1, Integer.MAX_VALUE - 1);
        writeWithFreshChecksum(file, bytes);
        assertRefused(file, "expected an ordinal in");
    }
}
