package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.testing.Datasets;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Existing stores must open: files written by the format's writer before its code moved to {@link
 * HnswFile} (src/test/resources/.../golden, a float and an int8 graph of 200 nodes, 20 removed) are
 * read, and written again byte for byte.
 */
class HnswFileGoldenTest {

    private static final IndexConfig CONFIG = new IndexConfig(8, Metric.COSINE);

    @TempDir Path dir;

    /** The graph the golden files hold, built again: same data, parameters and removals. */
    private static HnswIndex build(String kind) {
        float[][] data = Datasets.clustered(48, 200, 8, 5, 0.3);
        HnswParams p = HnswParams.of(4, 20);
        if (kind.equals("int8")) {
            p = p.withQuantization(HnswParams.Quantization.INT8);
        }
        HnswIndex index = HnswFixtures.build(data, Metric.COSINE, p);
        index.removeAll(Arrays.copyOf(HnswDeleteRepairTest.shuffled(200, 5), 20));
        return index;
    }

    private static byte[] golden(String name) throws IOException {
        try (InputStream in = HnswFileGoldenTest.class.getResourceAsStream("golden/" + name)) {
            assertTrue(in != null, "missing golden file " + name);
            return in.readAllBytes();
        }
    }

    private static byte[] stream(HnswIndex index) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        index.writeTo(new DataOutputStream(b));
        return b.toByteArray();
    }

    @ParameterizedTest
    @ValueSource(strings = {"float", "int8"})
    void aSavedFileIsReadAndWrittenAgainByteForByte(String kind) throws Exception {
        byte[] old = golden(kind + "-v5.hnsw");
        Path file = dir.resolve("old.hnsw");
        Files.write(file, old);
        HnswIndex loaded = HnswIndex.load(CONFIG, file);
        assertEquals(180, loaded.size());
        assertTrue(loaded.verifyIntegrity().isClean(), () -> loaded.verifyIntegrity().toString());
        // The header holds a random file id: write again with the old one, then compare whole.
        int idAt = 4 + 2 + HnswIndex.FORMAT.length() + 4;
        byte[] fileId = Arrays.copyOfRange(old, idAt, idAt + 16);
        Path again = dir.resolve("again.hnsw");
        HnswFile.write(again, loaded, fileId);
        assertArrayEquals(old, Files.readAllBytes(again));
    }

    @ParameterizedTest
    @ValueSource(strings = {"float", "int8"})
    void aStreamedBodyIsReadAndWrittenAgainByteForByte(String kind) throws Exception {
        byte[] old = golden(kind + "-v5.stream");
        HnswIndex loaded =
                HnswIndex.readFrom(CONFIG, new DataInputStream(new ByteArrayInputStream(old)));
        assertEquals(180, loaded.size());
        assertArrayEquals(old, stream(loaded));
    }

    /**
     * The same graph built again writes the golden bytes: the writer, not only the reader, is
     * unchanged (builds repeat: levels are a seeded hash, every kernel scores bit for bit alike).
     */
    @ParameterizedTest
    @ValueSource(strings = {"float", "int8"})
    void aGraphBuiltAgainWritesTheGoldenBytes(String kind) throws Exception {
        HnswIndex index = build(kind);
        assertArrayEquals(golden(kind + "-v5.stream"), stream(index));
        byte[] old = golden(kind + "-v5.hnsw");
        int idAt = 4 + 2 + HnswIndex.FORMAT.length() + 4;
        Path file = dir.resolve("new.hnsw");
        HnswFile.write(file, index, Arrays.copyOfRange(old, idAt, idAt + 16));
        assertArrayEquals(old, Files.readAllBytes(file));
        HnswIndex loaded = HnswIndex.load(CONFIG, file);
        for (int ord = 0; ord < 200; ord++) {
            assertEquals(index.contains(ord), loaded.contains(ord), "ordinal " + ord);
            if (index.contains(ord)) {
                assertArrayEquals(index.vector(ord), loaded.vector(ord), "ordinal " + ord);
                assertArrayEquals(
                        index.neighborOrdinals(ord, 0),
                        loaded.neighborOrdinals(ord, 0),
                        "ordinal " + ord);
            }
        }
    }
}
