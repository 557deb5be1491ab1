package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.io.ForensicScan;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The forensic scan of the storage issue: after a subject is deleted and the store closed, every
 * byte of every file in the data folder, the snapshot folder and the keystore is searched for the
 * subject's canary text, canary metadata, any 16-byte run of its vector's float32 bytes (either
 * byte order) and its data key. Control cases show the same scan finds each kind of canary when it
 * is present, or the clean result would prove nothing.
 */
class StorageForensicsTest {

    @TempDir Path tmp;

    private static final String TEXT = "CANARY-TEXT-3c9e1f";
    private static final String META = "CANARY-META-8b2d77";

    private StoreOptions options() {
        return StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
    }

    /** A vector no other record has: distinct, non-round components. */
    private static float[] distinctiveVector(int dim) {
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) Math.sin(1.2345 * i + 0.5) * (1.5f + i * 0.001f);
        }
        return v;
    }

    /** Every 16-byte window of the vector's bytes in both byte orders. */
    static List<byte[]> vectorRuns(float[] v) {
        List<byte[]> runs = new ArrayList<>();
        for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
            ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(order);
            for (float x : v) {
                b.putFloat(x);
            }
            byte[] all = b.array();
            for (int off = 0; off + 16 <= all.length; off += 4) {
                byte[] run = new byte[16];
                System.arraycopy(all, off, run, 0, 16);
                runs.add(run);
            }
        }
        return runs;
    }

    /** Names of the files under the roots that contain any of the needles. */
    static List<String> scan(List<Path> roots, List<byte[]> needles) throws IOException {
        return ForensicScan.filesContaining(roots, needles).stream()
                .map(p -> p.getFileName().toString())
                .toList();
    }

    /** The keyed hash that heads each of the scope's sealed records on disk. */
    private byte[] scopeHashOf(Path data, String collection, String tenant, String subject)
            throws IOException {
        String id =
                StoreFolders.readMeta(
                                data.resolve("collections")
                                        .resolve(collection)
                                        .resolve("collection.meta"))
                        .id();
        MasterKey mk = MasterKey.resolve(tmp.resolve("keys/master.key"), false);
        return new KeyedHash(mk).of("subject", id, tenant, subject).bytes();
    }

    private byte[] dataKeyOf(Path data, String collection, String tenant, String subject)
            throws IOException {
        String id =
                StoreFolders.readMeta(
                                data.resolve("collections")
                                        .resolve(collection)
                                        .resolve("collection.meta"))
                        .id();
        MasterKey mk = MasterKey.resolve(tmp.resolve("keys/master.key"), false);
        try (Keystore ks = Keystore.open(tmp.resolve("keys"), mk)) {
            var key = ks.find(new KeyedHash(mk).of("subject", id, tenant, subject));
            return key == null ? null : key.exportForTest();
        }
    }

    /**
     * A keystore file restored from before a subject's forget brings the subject's key back; the
     * deletion journal still records the drop, so the next open destroys the key again, and only
     * that key. The control: the restored file does hold both subjects' keys before the open.
     */
    @Test
    void aForgottenSubjectsKeyARestoredKeystoreBringsBackIsDestroyedAtOpen() throws Exception {
        Path data = tmp.resolve("data");
        Path keysBefore = tmp.resolve("keys-before.db");
        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("docs", 8, Metric.COSINE));
            for (int i = 0; i < 6; i++) {
                float[] v = new float[8];
                v[i] = 1;
                c.upsert(
                        VectorRecord.builder("r" + i)
                                .subject(i < 3 ? "alice" : "bob")
                                .vector(v)
                                .build());
            }
            Files.copy(tmp.resolve("keys/keys.db"), keysBefore);
            var op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("alice"),
                                                    "k-1",
                                                    "user-request"))
                                    .id(),
                            Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, op.state(), op.note());
        }
        String t = VectorRecord.DEFAULT_TENANT;
        assertNull(dataKeyOf(data, "docs", t, "alice"));
        Files.copy(keysBefore, tmp.resolve("keys/keys.db"), StandardCopyOption.REPLACE_EXISTING);
        assertNotNull(
                dataKeyOf(data, "docs", t, "alice"),
                "control: the restored file holds alice's key");
        byte[] bob = dataKeyOf(data, "docs", t, "bob");
        assertNotNull(bob);
        try (Nepenthe store = Nepenthe.open(data, options())) {
            assertEquals(3, store.collection("docs").size());
            assertTrue(store.collection("docs").get("r4").isPresent());
        }
        assertNull(
                dataKeyOf(data, "docs", t, "alice"), "the journal's drop destroyed the key again");
        assertArrayEquals(bob, dataKeyOf(data, "docs", t, "bob"), "bob's key is untouched");
    }

    @Test
    void nothingOfAForgottenSubjectSurvivesInDataSnapshotOrKeystore() throws IOException {
        Path data = tmp.resolve("data");
        Path snapshot = tmp.resolve("snapshot");
        int dim = 32;
        float[] secret = distinctiveVector(dim);
        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("docs", dim, Metric.L2));
            List<VectorRecord> batch = new ArrayList<>();
            batch.add(
                    VectorRecord.builder("alice-1")
                            .tenant("t")
                            .subject("alice")
                            .vector(secret)
                            .text(TEXT)
                            .metadata("note", META)
                            .build());
            for (int i = 0; i < 50; i++) {
                float[] v = new float[dim];
                v[i % dim] = i + 1;
                batch.add(
                        VectorRecord.builder("other-" + i)
                                .tenant("t")
                                .subject("s" + (i % 5))
                                .vector(v)
                                .text("ordinary text " + i)
                                .build());
            }
            c.upsertAll(batch);
            store.snapshot(snapshot);
        }
        byte[] key = dataKeyOf(data, "docs", "t", "alice");
        assertNotNull(key, "the subject has a data key before the delete");
        byte[] scope = scopeHashOf(data, "docs", "t", "alice");
        // Control: the subject's sealed records are on disk (headed by the scope hash) now.
        assertFalse(scan(List.of(data), List.of(scope)).isEmpty());
        assertFalse(scan(List.of(snapshot), List.of(scope)).isEmpty());

        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.collection("docs");
            assertEquals(1, c.deleteSubject("t", "alice"));
        }
        assertNull(dataKeyOf(data, "docs", "t", "alice"), "the key is destroyed");

        List<Path> roots = List.of(data, snapshot, tmp.resolve("keys"));
        List<byte[]> needles = new ArrayList<>(vectorRuns(secret));
        needles.add(TEXT.getBytes(StandardCharsets.UTF_8));
        needles.add(META.getBytes(StandardCharsets.UTF_8));
        needles.add(key);
        assertEquals(
                List.of(), scan(roots, needles), "files holding a canary of the forgotten subject");

        // Controls: each kind of canary is found when it is there.
        Path planted = data.resolve("planted.bin");
        for (byte[] n :
                List.of(
                        TEXT.getBytes(StandardCharsets.UTF_8),
                        META.getBytes(StandardCharsets.UTF_8),
                        key,
                        vectorRuns(secret).get(3),
                        vectorRuns(secret).get(vectorRuns(secret).size() - 1))) {
            byte[] content = new byte[n.length + 10];
            System.arraycopy(n, 0, content, 5, n.length);
            Files.write(planted, content);
            assertEquals(List.of("planted.bin"), scan(roots, needles));
        }
        Files.delete(planted);

        // The snapshot taken before the delete, restored, serves nothing of alice.
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(snapshot, restored);
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            VectorCollection c = store.collection("docs");
            assertEquals(50, c.size());
            assertTrue(c.get("t", "alice-1").isEmpty());
            assertTrue(
                    c.search(SearchRequest.of(secret, 5).tenant("t").subject("alice")).isEmpty());
            assertEquals(1, c.openReport().droppedAsDeleted());
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r.toString());
            }
        }
        // The ciphertext itself (each sealed record is headed by the scope hash) is gone from
        // the live files, and the hash from the key slots; opening the restored copy rewrote
        // its files too. Only the snapshot keeps the ciphertext, unreadable: its key is gone.
        // (The tombstone journal keeps the hash on purpose: it is the tombstone.)
        assertEquals(
                List.of(),
                scan(List.of(data, restored, tmp.resolve("keys/keys.db")), List.of(scope)));
        assertEquals(List.of(), scan(List.of(restored), needles));
    }

    @Test
    void aRecordDeletedAfterASnapshotStaysDeletedAfterRestore() throws IOException {
        Path data = tmp.resolve("data");
        Path snapshot = tmp.resolve("snap");
        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("c", 3, Metric.DOT));
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("keep")
                                    .subject("bob")
                                    .vector(new float[] {1, 0, 0})
                                    .build(),
                            VectorRecord.builder("gone")
                                    .subject("bob")
                                    .vector(new float[] {0, 1, 0})
                                    .build()));
            store.snapshot(snapshot);
            assertTrue(c.delete("gone"));
            // Deleted, then stored again under the same id after the snapshot: the new version
            // stays.
            c.upsert(
                    VectorRecord.builder("gone-then-back")
                            .subject("bob")
                            .vector(new float[] {0, 0, 1})
                            .build());
        }
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(snapshot, restored);
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            VectorCollection c = store.collection("c");
            assertTrue(c.get("gone").isEmpty(), "the journal outlives the snapshot");
            assertTrue(c.get("keep").isPresent());
            assertEquals(1, c.size());
            // New writes after a restore get versions above every journaled deletion.
            c.upsert(
                    VectorRecord.builder("gone")
                            .subject("bob")
                            .vector(new float[] {1, 1, 0})
                            .build());
        }
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            assertTrue(
                    store.collection("c").get("gone").isPresent(),
                    "a re-inserted record is not hit by the old tombstone");
        }
    }

    @Test
    void aDroppedCollectionRestoredFromASnapshotIsDroppedAgainAndItsKeysAreGone()
            throws IOException {
        Path data = tmp.resolve("data");
        Path snapshot = tmp.resolve("snap");
        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("old", 2, Metric.L2));
            c.upsert(
                    VectorRecord.builder("x")
                            .subject("carol")
                            .vector(new float[] {1, 2})
                            .text(TEXT)
                            .build());
            store.snapshot(snapshot);
        }
        byte[] key = dataKeyOf(data, "old", VectorRecord.DEFAULT_TENANT, "carol");
        assertNotNull(key);
        try (Nepenthe store = Nepenthe.open(data, options())) {
            assertTrue(store.dropCollection("old"));
        }
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(snapshot, restored);
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            assertTrue(store.collections().isEmpty(), "the dropped collection does not come back");
        }
        assertFalse(Files.exists(restored.resolve("collections/old")));
        assertEquals(List.of(), scan(List.of(tmp.resolve("keys"), data, restored), List.of(key)));
    }

    /**
     * Bytes flipped in the id map's entry area after a clean close: the open either repairs the map
     * from the records, saying so in its report, and then serves every record right, or fails with
     * a {@link CorruptFileException} naming the id map. Serving a wrong record, or failing with
     * anything else, fails the test. The control copy taken before the flip shows the bytes on disk
     * really changed at every flipped offset, or a clean pass would prove nothing.
     */
    @Test
    void aFlippedByteInTheIdMapIsRepairedNotServed() throws IOException {
        Path data = tmp.resolve("data");
        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("c", 2, Metric.L2));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject("s" + i % 7)
                                .vector(new float[] {i, -i})
                                .build());
            }
            c.upsertAll(batch);
        }
        Path idmap = data.resolve("collections/c/idmap.cmap");
        Path control = tmp.resolve("idmap-control.cmap");
        Files.copy(idmap, control);
        byte[] b = Files.readAllBytes(idmap);
        // Flip bytes in the entry area (past Chronicle Map's header), where keys and values live.
        List<Integer> offsets = new ArrayList<>();
        for (int i = b.length / 2; i < b.length && offsets.size() < 64; i += 97) {
            if (b[i] != 0) {
                b[i] ^= 0x5A;
                offsets.add(i);
            }
        }
        Files.write(idmap, b);
        // About 40 of the 64 strides land on a non-zero byte (keys are keyed hashes, so it varies).
        assertFalse(offsets.isEmpty(), "no non-zero byte to flip in the id map's second half");
        byte[] before = Files.readAllBytes(control);
        byte[] onDisk = Files.readAllBytes(idmap);
        assertEquals(before.length, onDisk.length, "the flip changed the id map's length");
        for (int i : offsets) {
            assertEquals(
                    (byte) (before[i] ^ 0x5A),
                    onDisk[i],
                    "the id map on disk does not hold the flipped byte at offset " + i);
        }

        Nepenthe store;
        try {
            store = Nepenthe.open(data, options());
        } catch (CorruptFileException e) {
            // Failing loudly is acceptable, if it names the damaged file.
            assertEquals(idmap.getFileName(), e.file().getFileName(), e.toString());
            assertTrue(e.getMessage().contains("idmap.cmap"), e.getMessage());
            return;
        }
        try (store) {
            VectorCollection c = store.collection("c");
            OpenReport report = c.openReport();
            assertFalse(
                    report.idMapTrusted(),
                    "the changed id map was used without checking it: " + report);
            for (int i = 0; i < 200; i++) {
                VectorRecord r =
                        c.get("r" + i).orElseThrow(() -> new AssertionError("lost a record"));
                assertEquals(i, r.vector()[0], 0f, "a lookup returned another record");
            }
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r.toString());
            }
        }
    }
}
