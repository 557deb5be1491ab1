package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The clean-close stamp beside the keys lets an open skip reconciliation for a collection it found
 * exactly as its last clean close left it, and for nothing else. The oracle for "nothing else": the
 * records a forget removed, brought back by a restored copy with the journal lost, are removed
 * again at the open that sees them, although a stamp was written at the close before it.
 */
class ReconciliationSkipTest {

    @TempDir Path tmp;

    private static final int DIM = 8;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private StoreOptions options() {
        return StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
    }

    private Path stamp() {
        return tmp.resolve("keys").resolve("reconciled.stamp");
    }

    private static float[] vector(long seed) {
        return Datasets.gaussian(seed, DIM);
    }

    /**
     * Collections "a" (records r0..r9) and "b" (q0..q9); then a forget of r3 by id, which only "a"
     * holds (its subject's key stays).
     */
    private static ForgetOperation populateAndForget(Nepenthe store) throws InterruptedException {
        for (String name : List.of("a", "b")) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of(name, DIM, Metric.COSINE));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                batch.add(
                        VectorRecord.builder(name.equals("a") ? "r" + i : "q" + i)
                                .subject("s" + (i % 3))
                                .vector(vector(name.equals("a") ? i : 1000 + i))
                                .build());
            }
            c.upsertAll(batch);
        }
        return forget(store, "r3", "req-1");
    }

    private static ForgetOperation forget(Nepenthe store, String id, String key)
            throws InterruptedException {
        ForgetOperation op =
                store.awaitOperation(
                        store.forget(ForgetRequest.of(ForgetScope.records(id), key, "user-request"))
                                .id(),
                        WAIT);
        assertEquals(OperationState.SEALED, op.state(), op.note());
        return op;
    }

    @Test
    void aCleanCloseLetsTheNextOpenSkipEachUnchangedCollectionOnce() throws Exception {
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            populateAndForget(store);
        }
        assertTrue(Files.exists(stamp()), "a clean close leaves the stamp beside the keys");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            assertEquals(2, store.reconciliation().collectionsSkipped());
            assertEquals(1, store.reconciliation().sealedChecked());
            assertFalse(
                    Files.exists(stamp()),
                    "an open takes the stamp: it vouches for that open only");
            assertTrue(store.collection("a").get("r3").isEmpty());
            // A write to "b" only: "a" is left as it was.
            store.collection("b").upsert(VectorRecord.builder("new").vector(vector(99)).build());
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            // "b" closed cleanly after its write, so it is unchanged since that close as well.
            assertEquals(2, store.reconciliation().collectionsSkipped());
            // Another forget changes the fences: their digest no longer matches.
            forget(store, "r4", "req-2");
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            assertEquals(
                    2,
                    store.reconciliation().collectionsSkipped(),
                    "the close after the forget stamped the new fences");
        }
        // No stamp (deleted), then a damaged one (its checksum fails): every collection is checked.
        byte[] b = Files.readAllBytes(stamp());
        Files.delete(stamp());
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            assertEquals(0, store.reconciliation().collectionsSkipped(), "no stamp, no skip");
        }
        b[40] ^= 1;
        Files.write(stamp(), b);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            assertEquals(
                    0, store.reconciliation().collectionsSkipped(), "a damaged stamp is ignored");
            assertEquals(0, store.reconciliation().resurrectedRemoved());
        }
    }

    @Test
    void aRestoredCopyIsReconciledAlthoughTheLastCloseLeftAStamp() throws Exception {
        Path copy = tmp.resolve("copy");
        ForgetOperation op;
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            for (String name : List.of("a", "b")) {
                VectorCollection c =
                        store.createCollection(CollectionSpec.of(name, DIM, Metric.COSINE));
                for (int i = 0; i < 10; i++) {
                    c.upsert(
                            VectorRecord.builder(name.equals("a") ? "r" + i : "q" + i)
                                    .subject("s" + (i % 3))
                                    .vector(vector(name.equals("a") ? i : 1000 + i))
                                    .build());
                }
            }
            store.snapshot(tmp.resolve("snap"));
            TestFiles.copyTree(tmp.resolve("snap"), copy);
            op = forget(store, "r3", "req-1");
        }
        assertTrue(Files.exists(stamp()));
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(copy, restored);
        // With the journal lost, only reconciliation stands between the copy's r3 and a reader.
        TestFiles.deleteTree(tmp.resolve("keys/tombstones"));
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            assertEquals(
                    1,
                    store.reconciliation().collectionsSkipped(),
                    "b holds what its last close left; a does not");
            assertEquals(
                    1,
                    store.reconciliation().resurrectedRemoved(),
                    "the copy's r3 came back and was removed");
            assertTrue(store.collection("a").get("r3").isEmpty());
            assertTrue(
                    store.evidence().entries().stream()
                            .anyMatch(
                                    e ->
                                            e.body().contains("\"type\":\"reconciliation\"")
                                                    && e.body().contains(op.id())));
        }
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            assertEquals(2, store.reconciliation().collectionsSkipped());
            assertEquals(0, store.reconciliation().resurrectedRemoved());
            assertTrue(store.collection("a").get("r3").isEmpty());
        }
    }

    @Test
    void aLogToReplayIsReconciledEvenWithAStampThatMatchesTheManifest() throws Exception {
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            populateAndForget(store);
        }
        // A keystore backup taken now holds a stamp that matches the data's manifests.
        Path keysBackup = tmp.resolve("keys-backup");
        TestFiles.copyTree(tmp.resolve("keys"), keysBackup);
        Path image = tmp.resolve("image");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            // Of a subject whose key the backup holds.
            store.collection("b")
                    .upsert(VectorRecord.builder("new").subject("s0").vector(vector(99)).build());
            // A crash image: the write is in b's log, its manifest is the one the stamp names.
            TestFiles.copyTree(tmp.resolve("data"), image);
        }
        Files.deleteIfExists(image.resolve("store.lock"));
        try (Nepenthe store =
                Nepenthe.open(image, StoreOptions.defaults().withKeystore(keysBackup))) {
            assertEquals(
                    1,
                    store.reconciliation().collectionsSkipped(),
                    "b replayed its log, so it is checked");
            assertTrue(store.collection("b").get("new").isPresent());
        }
    }

    @Test
    void aStoreThatNeverForgotHasNothingToReconcile() throws IOException {
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            store.createCollection(CollectionSpec.of("a", DIM, Metric.COSINE))
                    .upsert(VectorRecord.builder("x").vector(vector(1)).build());
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            assertEquals(0, store.reconciliation().sealedChecked());
            assertEquals(
                    0,
                    store.reconciliation().collectionsSkipped(),
                    "no fences: nothing was checked or skipped");
        }
    }
}
