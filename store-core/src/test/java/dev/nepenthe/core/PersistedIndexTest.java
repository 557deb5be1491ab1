package dev.nepenthe.core;

import static dev.nepenthe.testing.TestFiles.copyTree;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.testing.Datasets;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persisted, encrypted index generations (docs/STORAGE.md, "Persisted indexes"), on the exact
 * index (store-core's own; the graph and IVF kinds are covered in store-server's
 * PersistedEveryIndexTest): a clean open loads instead of rebuilding, a crash image catches up with
 * the writes after the generation, any removal destroys the generation's key before the index
 * changes (so a copy of the old file is ciphertext without a key), and a damaged file is named and
 * the index rebuilt from the records.
 */
class PersistedIndexTest {

    static final int DIM = 16;

    @TempDir Path tmp;

    /**
     * Clustered data puts survivors near a subject's vectors: only near-copies count as residue
     * here.
     */
    private StoreOptions options() {
        return StoreOptions.defaults()
                .withKeystore(tmp.resolve("keys"))
                .withProbePolicy(new dev.nepenthe.core.forget.ProbePolicy(0.9999, 0.5));
    }

    private static CollectionSpec spec() {
        return new CollectionSpec("c", DIM, Metric.L2, IndexSpec.of("exact", java.util.Map.of()));
    }

    private static List<VectorRecord> records(float[][] data, int from, int to) {
        List<VectorRecord> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(VectorRecord.builder("r" + i).subject("s" + (i % 10)).vector(data[i]).build());
        }
        return out;
    }

    private static List<String> ids(List<SearchHit> hits) {
        return hits.stream().map(h -> h.record().id() + "@" + h.score()).toList();
    }

    /** Whether the generation files are all gone within 30 seconds. */
    private boolean awaitNoGenerationFiles(Path data) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!generationFiles(data).isEmpty()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    private List<Path> generationFiles(Path data) throws Exception {
        Path dir = data.resolve("collections");
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".idx")).sorted().toList();
        }
    }

    /** The vector's bytes as an index body writes them (big-endian floats), whole. */
    private static byte[] bigEndian(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    @Test
    void aCleanReopenLoadsTheIndexAndAnswersAsBefore() throws Exception {
        float[][] data = Datasets.clustered(3, 600, DIM, 12, 0.3);
        List<List<String>> before = new ArrayList<>();
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(spec());
            assertFalse(c.openReport().index().loaded(), "a new collection has nothing to load");
            c.upsertAll(records(data, 0, 500));
            for (int q = 500; q < 520; q++) {
                before.add(ids(c.search(SearchRequest.of(data[q], 10))));
            }
        }
        assertEquals(1, generationFiles(tmp.resolve("data")).size(), "close wrote one generation");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertTrue(r.loaded(), r.toString());
            assertEquals(0, r.added());
            assertEquals(0, r.removed());
            assertNull(r.rebuiltBecause());
            assertEquals(500, c.size());
            for (int q = 500; q < 520; q++) {
                assertEquals(
                        before.get(q - 500),
                        ids(c.search(SearchRequest.of(data[q], 10))),
                        "query " + q);
            }
            assertTrue(
                    c.verifyIntegrity().values().stream()
                            .allMatch(dev.nepenthe.core.index.IntegrityReport::isClean));
        }
        // Nothing changed: the next close keeps the generation it loaded.
        assertEquals(1, generationFiles(tmp.resolve("data")).size());
    }

    /**
     * The index file is read on its own thread while the records load: an open that fails on a
     * damaged record file is named after that file, and leaves the index file to the next open,
     * which loads it once the file is whole again.
     */
    @Test
    void anOpenThatFailsOnARecordFileLeavesTheIndexFileToTheNextOpen() throws Exception {
        float[][] data = Datasets.clustered(9, 400, DIM, 12, 0.3);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            store.createCollection(spec()).upsertAll(records(data, 0, 300));
        }
        Path segment;
        try (Stream<Path> s = Files.walk(tmp.resolve("data"))) {
            segment =
                    s.filter(p -> p.getFileName().toString().endsWith(".seg"))
                            .sorted()
                            .findFirst()
                            .orElseThrow();
        }
        byte[] whole = Files.readAllBytes(segment);
        byte[] damaged = whole.clone();
        damaged[damaged.length / 2] ^= 0x40;
        Files.write(segment, damaged);
        CorruptFileException e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        CorruptFileException.class,
                        () -> Nepenthe.open(tmp.resolve("data"), options()).close());
        assertTrue(e.getMessage().contains(segment.getFileName().toString()), e.getMessage());
        assertEquals(
                1,
                generationFiles(tmp.resolve("data")).size(),
                "the failed open kept the index file");

        Files.write(segment, whole);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertTrue(r.loaded() && r.added() == 0 && r.removed() == 0, r.toString());
            assertEquals(300, c.size());
            assertEquals("r7", c.search(SearchRequest.of(data[7], 1)).get(0).record().id());
        }
    }

    /**
     * A crash image taken after writes that followed the generation: the open loads the generation
     * and adds exactly those writes (replacing one record also counts: the old version's vector
     * left the index, so its generation was destroyed and the image rebuilds).
     */
    @Test
    void aCrashImageCatchesUpWithWritesAfterTheGeneration() throws Exception {
        float[][] data = Datasets.clustered(5, 800, DIM, 12, 0.3);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            store.createCollection(spec()).upsertAll(records(data, 0, 500));
        }
        Path image = tmp.resolve("image");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("c");
            assertTrue(c.openReport().index().loaded());
            c.upsertAll(records(data, 500, 700));
            // Acknowledged (fsynced) writes, no close: what a killed process leaves.
            copyTree(tmp.resolve("data"), image.resolve("data"));
            copyTree(tmp.resolve("keys"), image.resolve("keys"));
        }
        try (Nepenthe store =
                Nepenthe.open(
                        image.resolve("data"),
                        StoreOptions.defaults().withKeystore(image.resolve("keys")))) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertTrue(r.loaded(), r.toString());
            assertEquals(200, r.added(), r.toString());
            assertEquals(0, r.removed());
            assertEquals(700, c.size());
            // Every record is found by its own vector: the caught-up index holds all of them.
            for (int i = 0; i < 700; i += 7) {
                assertEquals(
                        "r" + i,
                        c.search(SearchRequest.of(data[i], 1)).get(0).record().id(),
                        "record " + i);
            }
            assertTrue(
                    c.verifyIntegrity().values().stream()
                            .allMatch(dev.nepenthe.core.index.IntegrityReport::isClean));
        }
    }

    /**
     * The forensic check: a copy of the generation file taken before a delete holds the record's
     * vector once decrypted (the control), and nothing in the clear; after the delete the key is
     * gone, so the same copy decrypts to nothing, the live folder has no generation until the next
     * close, and that one does not hold the vector.
     */
    @Test
    void aDeleteDestroysTheGenerationKeySoACopyOfTheOldFileIsUnreadable() throws Exception {
        float[][] data = Datasets.clustered(7, 300, DIM, 12, 0.3);
        byte[] needle = bigEndian(data[42]);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            store.createCollection(spec()).upsertAll(records(data, 0, 300));
        }
        Path gen1 = generationFiles(tmp.resolve("data")).get(0);
        Path copy = tmp.resolve("backup").resolve(gen1.getFileName());
        Files.createDirectories(copy.getParent());
        Files.copy(gen1, copy);
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(List.of(copy), List.of(needle)),
                "the file holds no vector in the clear");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("c");
            byte[] plain = store.decryptIndexGeneration("c", copy);
            assertNotNull(plain, "before the delete the key exists");
            assertTrue(
                    ForensicScan.indexOf(plain, needle) >= 0,
                    "control: the decrypted copy holds r42's vector");
            assertTrue(c.delete(VectorRecord.DEFAULT_TENANT, "r42"));
            assertTrue(
                    store.decryptIndexGeneration("c", copy) == null,
                    "the generation's key was destroyed with the delete");
            // The file goes on a thread of its own once the key is gone; the close waits for it.
            assertTrue(
                    awaitNoGenerationFiles(tmp.resolve("data")),
                    "and its file deleted: " + generationFiles(tmp.resolve("data")));
        }
        List<Path> now = generationFiles(tmp.resolve("data"));
        assertEquals(1, now.size(), "close wrote the next generation");
        assertFalse(now.get(0).getFileName().equals(gen1.getFileName()));
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            byte[] plain = store.decryptIndexGeneration("c", now.get(0));
            assertNotNull(plain);
            assertEquals(
                    -1,
                    ForensicScan.indexOf(plain, needle),
                    "the new generation does not hold r42's vector");
            assertTrue(
                    ForensicScan.indexOf(plain, bigEndian(data[43])) >= 0,
                    "control: it holds r43's");
            assertTrue(store.collection("c").openReport().index().loaded());
            assertEquals(299, store.collection("c").size());
        }
    }

    /** A forget's cleanup destroys the generation before the operation seals. */
    @Test
    void aForgetDestroysTheGenerationBeforeItSeals() throws Exception {
        float[][] data = Datasets.clustered(9, 400, DIM, 12, 0.3);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            store.createCollection(spec()).upsertAll(records(data, 0, 400));
        }
        Path gen1 = generationFiles(tmp.resolve("data")).get(0);
        Path copy = tmp.resolve("backup").resolve(gen1.getFileName());
        Files.createDirectories(copy.getParent());
        Files.copy(gen1, copy);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            byte[] plain = store.decryptIndexGeneration("c", copy);
            assertTrue(
                    ForensicScan.indexOf(plain, bigEndian(data[3])) >= 0,
                    "control: s3's r3 is in the copy");
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    VectorRecord.DEFAULT_TENANT,
                                                    ForgetScope.subject("s3"),
                                                    "req-1",
                                                    "gdpr-art17",
                                                    0.9999))
                                    .id(),
                            Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertEquals(40, op.totalForgotten());
            assertTrue(
                    store.decryptIndexGeneration("c", copy) == null,
                    "the old generation is unreadable once sealed");
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            Path gen2 = generationFiles(tmp.resolve("data")).get(0);
            byte[] plain = store.decryptIndexGeneration("c", gen2);
            for (int i = 3; i < 400; i += 10) {
                assertEquals(
                        -1,
                        ForensicScan.indexOf(plain, bigEndian(data[i])),
                        "forgotten r" + i + " in " + gen2);
            }
            assertTrue(
                    ForensicScan.indexOf(plain, bigEndian(data[4])) >= 0,
                    "control: s4's r4 is there");
        }
    }

    /**
     * One flipped byte: the open names the file and why, deletes it, and builds from the records.
     */
    @Test
    void aDamagedGenerationIsNamedAndTheIndexRebuilt() throws Exception {
        float[][] data = Datasets.clustered(11, 300, DIM, 12, 0.3);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            store.createCollection(spec()).upsertAll(records(data, 0, 300));
        }
        Path gen = generationFiles(tmp.resolve("data")).get(0);
        byte[] bytes = Files.readAllBytes(gen);
        bytes[bytes.length / 2] ^= 0x10;
        Files.write(gen, bytes);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertFalse(r.loaded());
            assertTrue(
                    r.rebuiltBecause().contains(gen.getFileName().toString())
                            && r.rebuiltBecause().contains("checksum"),
                    r.rebuiltBecause());
            assertFalse(Files.exists(gen), "the damaged file is gone");
            assertEquals(300, c.size());
            assertEquals("r17", c.search(SearchRequest.of(data[17], 1)).get(0).record().id());
        }
        assertEquals(
                1,
                generationFiles(tmp.resolve("data")).size(),
                "and a sound one was written at close");
    }
}
