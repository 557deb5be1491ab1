package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexes;
import dev.nepenthe.core.io.CorruptFileException;
import dev.nepenthe.core.testing.Datasets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HnswPersistenceTest {

    @TempDir
    Path dir;

    @Test
    void saveAndLoadGiveAnIdenticalGraph() throws Exception {
        float[][] data = Datasets.clustered(31, 3_000, 24, 15, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.COSINE, HnswParams.of(8, 50));
        // Removals leave free slots and a free list: those must round-trip too.
        index.removeAll(Arrays.copyOf(HnswDeleteRepairTest.shuffled(3_000, 4), 300));
        Path file = dir.resolve("graph.hnsw");
        index.save(file);

        HnswIndex loaded = (HnswIndex) VectorIndexes.factory("hnsw").load(new IndexConfig(24, Metric.COSINE), file);
        assertEquals(index.size(), loaded.size());
        assertEquals(index.params(), loaded.params());
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
                assertArrayEquals(index.neighborOrdinals(ord, l), loaded.neighborOrdinals(ord, l), "ordinal " + ord);
            }
        }
        assertTrue(loaded.verifyIntegrity().isClean(), () -> loaded.verifyIntegrity().toString());
        for (int i = 0; i < 50; i++) {
            SearchResult a = index.search(data[i], 10, null, SearchParams.of("efSearch", 40));
            SearchResult b = loaded.search(data[i], 10, null, SearchParams.of("efSearch", 40));
            assertArrayEquals(a.ordinals(), b.ordinals());
            assertArrayEquals(a.scores(), b.scores());
        }
        // The loaded index keeps working: recycled slots are handed out in the same order.
        int reused = HnswDeleteRepairTest.shuffled(3_000, 4)[0];
        index.add(reused, data[reused]);
        loaded.add(reused, data[reused]);
        assertEquals(index.slotOf(reused), loaded.slotOf(reused));
        assertArrayEquals(index.neighborOrdinals(reused, 0), loaded.neighborOrdinals(reused, 0));
        // Saving the loaded copy gives the same bytes apart from the 16-byte file id and the checksum.
        Path again = dir.resolve("again.hnsw");
        index.save(file);
        loaded.save(again);
        byte[] x = Files.readAllBytes(file);
        byte[] y = Files.readAllBytes(again);
        assertEquals(x.length, y.length);
        int headerIdEnd = 4 + 2 + "nepenthe-hnsw".length() + 4 + 16;
        assertArrayEquals(Arrays.copyOfRange(x, headerIdEnd, x.length - 12), Arrays.copyOfRange(y, headerIdEnd, y.length - 12));
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
            CorruptFileException e = assertThrows(CorruptFileException.class,
                    () -> HnswIndex.load(new IndexConfig(8, Metric.L2), bad));
            assertTrue(e.getMessage().contains("checksum"), e.getMessage());
            assertTrue(e.getMessage().contains(bad.getFileName().toString()), e.getMessage());
        }
        Path truncated = dir.resolve("truncated.hnsw");
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 100));
        assertThrows(CorruptFileException.class, () -> HnswIndex.load(new IndexConfig(8, Metric.L2), truncated));
    }

    @Test
    void loadRefusesAnotherDimensionOrMetric() throws Exception {
        float[][] data = Datasets.clustered(33, 100, 8, 3, 0.3);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(6, 30));
        Path file = dir.resolve("graph.hnsw");
        index.save(file);
        Exception e = assertThrows(Exception.class, () -> HnswIndex.load(new IndexConfig(9, Metric.L2), file));
        assertTrue(e.getMessage().contains("dimension 8"), e.getMessage());
        e = assertThrows(Exception.class, () -> HnswIndex.load(new IndexConfig(8, Metric.DOT), file));
        assertTrue(e.getMessage().contains("metric"), e.getMessage());
    }

    @Test
    void factoryParsesAndRejectsParameters() {
        VectorIndex idx = VectorIndexes.factory("hnsw").create(new IndexConfig(16, Metric.DOT,
                Map.of("M", "12", "efConstruction", "90", "efSearch", "33", "repairEf", "20", "levelMultiplier", "0.4"), 5));
        HnswParams p = ((HnswIndex) idx).params();
        assertEquals(new HnswParams(12, 90, 33, 0.4, 20, 5), p);
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> VectorIndexes.factory("hnsw").create(new IndexConfig(16, Metric.DOT, Map.of("nprobe", "3"), 1)));
        assertTrue(unknown.getMessage().contains("nprobe") && unknown.getMessage().contains("efConstruction"),
                unknown.getMessage());
        IllegalArgumentException range = assertThrows(IllegalArgumentException.class,
                () -> VectorIndexes.factory("hnsw").create(new IndexConfig(16, Metric.DOT, Map.of("M", "1"), 1)));
        assertTrue(range.getMessage().contains("'M'") && range.getMessage().contains("got 1"), range.getMessage());
        HnswIndex index = new HnswIndex(3, Metric.L2, HnswParams.of(4, 10));
        index.add(1, new float[] {1, 2, 3});
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class, () -> index.add(1, new float[] {1, 2, 3}));
        assertTrue(dup.getMessage().contains("already live"), dup.getMessage());
        IllegalArgumentException dim = assertThrows(IllegalArgumentException.class, () -> index.add(2, new float[] {1, 2}));
        assertTrue(dim.getMessage().contains("expected dimension 3, got 2"), dim.getMessage());
        assertThrows(IllegalArgumentException.class, () -> index.search(new float[] {1, 2, 3}, 0));
    }
}
