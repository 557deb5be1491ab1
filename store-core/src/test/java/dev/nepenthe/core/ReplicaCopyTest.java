package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.forget.ForgetCrash;
import dev.nepenthe.core.internal.io.ForensicScan;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A replica copy of a live store opens, with the group's master key, as the store it was copied
 * from: every record live when the copy began, with its exact vector and metadata, nothing deleted
 * or forgotten before it, a forget in progress resumed and sealed, nothing of a sealed forget in
 * the stream. The oracles: what each writer thread knows it wrote and when, a brute-force search
 * over the copy's records, and a byte scan of the stream and the folders it was read into.
 */
class ReplicaCopyTest {

    @TempDir Path tmp;

    static final int DIM = 16;
    static final Duration WAIT = Duration.ofSeconds(90);
    static final String TENANT = VectorRecord.DEFAULT_TENANT;

    /** A master key file outside both folders, as a group's operator supplies it. */
    static Path keyFile(Path dir, String name, long seed) throws IOException {
        byte[] k = new byte[MasterKey.LENGTH];
        new Random(seed).nextBytes(k);
        Path f = dir.resolve(name);
        Files.writeString(f, Base64.getEncoder().encodeToString(k) + "\n");
        return f;
    }

    static StoreOptions options(Path keys, Path keyFile) {
        return StoreOptions.defaults().withKeystore(keys).withMasterKeyFile(keyFile, false);
    }

    static float[] vector(Random r) {
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    /**
     * A vector of a subject a test forgets: far from every {@link #survivorVector} (first component
     * large and positive, theirs never positive), so the forget's probe finds no look-alike by
     * chance and the forget seals.
     */
    static float[] forgottenVector(Random r) {
        float[] v = vector(r);
        v[0] = 20 + Math.abs(v[0]);
        return v;
    }

    /** A vector of a record that survives the forgets of a test; see {@link #forgottenVector}. */
    static float[] survivorVector(Random r) {
        float[] v = vector(r);
        v[0] = -Math.abs(v[0]);
        return v;
    }

    static byte[] copyOf(Nepenthe store) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ReplicaCopy.Summary s = ReplicaCopy.write(store, out);
        assertTrue(s.files() > 0 && s.bytes() > 0, s.toString());
        return out.toByteArray();
    }

    /** Reads an image into {@code <name>/store} and {@code <name>/store.keys}. */
    private Path receive(byte[] image, String name) throws IOException {
        Path store = tmp.resolve(name).resolve("store");
        ReplicaCopy.Summary got =
                ReplicaCopy.read(
                        new ByteArrayInputStream(image), store, tmp.resolve(name).resolve("keys"));
        assertTrue(got.files() > 0, got.toString());
        return store;
    }

    private Nepenthe openReceived(String name, Path keyFile) throws IOException {
        return Nepenthe.open(
                tmp.resolve(name).resolve("store"),
                options(tmp.resolve(name).resolve("keys"), keyFile));
    }

    // ---- (a) a copy under concurrent writes and a forget -------------------------------------

    @Test
    void aCopyUnderConcurrentWritesAndAForgetOpensAsTheStoreWasWhenItBegan() throws Exception {
        long seed = Long.getLong("replica.seed", new Random().nextLong());
        System.out.println("ReplicaCopyTest seed " + seed);
        Path key = keyFile(tmp, "group.key", 1);
        Random r = new Random(seed);
        ReplicaWriteHistory history = new ReplicaWriteHistory();
        String opId;
        long t0;
        long t1;
        byte[] image;
        try (Nepenthe store =
                Nepenthe.open(tmp.resolve("leader"), options(tmp.resolve("lk"), key))) {
            VectorCollection c =
                    store.createCollection(
                            CollectionSpec.of("notes", DIM, Metric.COSINE)
                                    .withTextIndex("standard"));
            List<VectorRecord> preload = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                preload.add(
                        VectorRecord.builder("g-" + i)
                                .subject("gone")
                                .vector(forgottenVector(r))
                                // Words no writer uses: the lexical probe finds no survivor.
                                .text("goneword quokka")
                                .metadata("n", "g" + i)
                                .build());
            }
            for (int k = 0; k < ReplicaWriteHistory.THREADS; k++) {
                for (int i = 0; i < ReplicaWriteHistory.IDS / 2; i++) {
                    preload.add(history.record(k, i, r));
                }
            }
            c.upsertAll(preload);
            preload.stream().filter(p -> p.id().startsWith("t")).forEach(history::preloaded);
            List<Thread> writers = history.start(c, seed);
            history.awaitProgress();
            ForgetOperation op =
                    store.forget(
                            ForgetRequest.of(ForgetScope.subject("gone"), "copy-1", "gdpr-art17"));
            opId = op.id();
            t0 = System.nanoTime();
            image = copyOf(store);
            t1 = System.nanoTime();
            for (Thread t : writers) {
                t.join();
            }
            history.rethrow();
            ForgetOperation sealed = store.awaitOperation(opId, WAIT);
            assertEquals(
                    OperationState.SEALED,
                    sealed.state(),
                    "the leader's forget: "
                            + sealed.note()
                            + " "
                            + sealed.suspects()
                            + " "
                            + sealed.surfaces());
        }
        receive(image, "replica");
        try (Nepenthe copy = openReceived("replica", key)) {
            VectorCollection c = copy.collection("notes");
            for (int i = 0; i < 12; i++) {
                assertTrue(c.get("g-" + i).isEmpty(), "forgotten before the copy: g-" + i);
            }
            ForgetOperation resumed = copy.awaitOperation(opId, WAIT);
            assertEquals(OperationState.SEALED, resumed.state(), String.valueOf(resumed.note()));
            List<VectorRecord> held = new ArrayList<>();
            for (String id : c.ids(TENANT)) {
                held.add(c.get(id).orElseThrow());
            }
            history.check(held, t0, t1, seed);
            // Controls: the oracle refuses a record changed in the copy, and one nobody wrote.
            List<VectorRecord> tampered = new ArrayList<>(held);
            tampered.set(0, held.get(0).toBuilder().metadata("version", "tampered").build());
            assertThrows(AssertionError.class, () -> history.check(tampered, t0, t1, seed));
            List<VectorRecord> invented = new ArrayList<>(held);
            invented.add(VectorRecord.builder("t9-9").vector(vector(r)).build());
            assertThrows(AssertionError.class, () -> history.check(invented, t0, t1, seed));
            ReplicaSearchOracle.check(c, held, new Random(seed ^ 0x5DEECE66DL), seed);
            assertTrue(copy.verifyLedger().ok(), "the copy's ledger verifies");
        }
    }

    // ---- (b) nothing of a sealed forget in the stream ----------------------------------------

    @Test
    void aSubjectForgottenBeforeTheCopyLeavesNothingInTheStreamOrTheFolders() throws Exception {
        Path key = keyFile(tmp, "group.key", 2);
        Random r = new Random(7);
        List<float[]> alice = new ArrayList<>();
        String text = "CANARY-ALICE-5e1d0b";
        byte[] before;
        byte[] after;
        String collectionId;
        try (Nepenthe store =
                Nepenthe.open(tmp.resolve("leader"), options(tmp.resolve("lk"), key))) {
            VectorCollection c =
                    store.createCollection(
                            CollectionSpec.of("docs", DIM, Metric.COSINE)
                                    .withTextIndex("standard"));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                float[] v = forgottenVector(r);
                alice.add(v);
                batch.add(
                        VectorRecord.builder("a" + i)
                                .subject("alice")
                                .vector(v)
                                .text(text + " " + i)
                                .build());
            }
            for (int i = 0; i < 40; i++) {
                batch.add(
                        VectorRecord.builder("o" + i)
                                .subject("s" + (i % 4))
                                .vector(survivorVector(r))
                                .text("ordinary " + i)
                                .build());
            }
            c.upsertAll(batch);
            collectionId =
                    StoreFolders.readMeta(tmp.resolve("leader/collections/docs/collection.meta"))
                            .id();
            before = copyOf(store);
            ForgetOperation op =
                    store.forget(
                            ForgetRequest.of(ForgetScope.subject("alice"), "f-1", "gdpr-art17"));
            assertEquals(OperationState.SEALED, store.awaitOperation(op.id(), WAIT).state());
            after = copyOf(store);
        }
        MasterKey mk = MasterKey.resolve(key, false);
        byte[] scope = new KeyedHash(mk).of("subject", collectionId, TENANT, "alice").bytes();
        List<byte[]> plaintext = new ArrayList<>();
        for (float[] v : alice) {
            plaintext.add(littleEndian(v));
        }
        plaintext.add(text.getBytes(StandardCharsets.UTF_8));

        Path afterStore = receive(after, "after");
        Path afterKeys = tmp.resolve("after/keys");
        for (byte[] n : plaintext) {
            assertEquals(
                    -1, ForensicScan.indexOf(after, n), "a forgotten vector or text in the stream");
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(List.of(afterStore, afterKeys), plaintext),
                "files of the received copy holding a forgotten vector or text");
        // The subject's sealed records are headed by its scope hash, and its data key is named by
        // it: after the forget neither is in the image.
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(List.of(afterStore), List.of(scope)),
                "data files of the received copy holding alice's sealed records");
        // The tombstone journal keeps the drop of her key by its keyed hash, by design: it is how
        // an older copy, restored, drops her again. Nothing else in the keystore names her.
        for (Path p : ForensicScan.filesContaining(List.of(afterKeys), List.of(scope))) {
            assertTrue(p.startsWith(afterKeys.resolve("tombstones")), p.toString());
        }
        assertNull(dataKey(afterKeys, mk, scope), "alice's data key in the received keystore");

        // Controls. The copy taken before the forget carries alice's sealed records and key: the
        // scan finds her scope hash in that stream, her key is in its keystore, and the copy serves
        // her exact vectors. (Her vectors' plain bytes are in no image, before or after: every
        // byte at rest is encrypted; the scan itself finds them where they are, below.)
        assertNotEquals(-1, ForensicScan.indexOf(before, scope), "control: alice's hash before");
        Path beforeStore = receive(before, "before");
        assertFalse(
                ForensicScan.filesContaining(List.of(beforeStore), List.of(scope)).isEmpty(),
                "control: the data files of the copy before hold alice's sealed records");
        assertNotNull(dataKey(tmp.resolve("before/keys"), mk, scope), "control: alice's key");
        try (Nepenthe copy = openReceived("before", key)) {
            for (int i = 0; i < 3; i++) {
                VectorRecord got = copy.collection("docs").get("a" + i).orElseThrow();
                assertTrue(Arrays.equals(alice.get(i), got.vector()), "a" + i);
            }
        }
        byte[] planted = new byte[after.length + 80];
        System.arraycopy(after, 0, planted, 0, after.length);
        System.arraycopy(plaintext.get(1), 0, planted, after.length + 7, plaintext.get(1).length);
        assertNotEquals(-1, ForensicScan.indexOf(planted, plaintext.get(1)), "control: the scan");
        try (Nepenthe copy = openReceived("after", key)) {
            VectorCollection c = copy.collection("docs");
            assertEquals(40, c.size());
            for (int i = 0; i < 3; i++) {
                assertTrue(c.get("a" + i).isEmpty());
            }
        }
    }

    static byte[] littleEndian(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    private static byte[] dataKey(Path keys, MasterKey mk, byte[] scope) throws IOException {
        try (Keystore ks = Keystore.open(keys, mk)) {
            var k = ks.find(new KeyedHash.Hash(scope));
            return k == null ? null : k.exportForTest();
        }
    }

    // ---- (c) a copy of a forget stopped mid-operation ----------------------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "after-mark",
                "cleanup-before-delete",
                "cleanup-after-delete",
                "verify-done",
                "after-key-destroyed"
            })
    void aForgetStoppedMidOperationResumesAndSealsOnTheCopy(String phase) throws Exception {
        Path key = keyFile(tmp, "group.key", 3);
        Random r = new Random(11);
        String opId;
        byte[] image;
        List<VectorRecord> kept = new ArrayList<>();
        try (Nepenthe store =
                Nepenthe.open(tmp.resolve("leader"), options(tmp.resolve("lk"), key))) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                VectorRecord rec =
                        VectorRecord.builder("r" + i)
                                .subject(i < 4 ? "alice" : "bob")
                                .vector(i < 4 ? forgottenVector(r) : survivorVector(r))
                                .metadata("i", "v" + i)
                                .build();
                batch.add(rec);
                if (i >= 4) {
                    kept.add(rec);
                }
            }
            c.upsertAll(batch);
            store.testPoints().stopForgetAt(phase);
            try {
                opId =
                        store.forget(
                                        ForgetRequest.of(
                                                ForgetScope.subject("alice"), "f-1", "gdpr-art17"))
                                .id();
                ForgetOperation stopped = store.awaitOperation(opId, WAIT);
                assertNotEquals(OperationState.SEALED, stopped.state(), phase);
            } catch (ForgetCrash.Simulated crash) {
                opId = store.operations(o -> true).get(0).id(); // "after-mark" stops the caller
            }
            image = copyOf(store);
            store.testPoints().stopForgetAt(null);
        }
        receive(image, "replica");
        try (Nepenthe copy = openReceived("replica", key)) {
            VectorCollection c = copy.collection("notes");
            for (int i = 0; i < 4; i++) {
                assertTrue(c.get("r" + i).isEmpty(), phase + ": blocked on the copy at once");
            }
            ForgetOperation done = copy.awaitOperation(opId, WAIT);
            assertEquals(OperationState.SEALED, done.state(), phase + ": " + done.note());
            assertEquals(4, done.totalForgotten(), phase);
            for (VectorRecord k : kept) {
                assertEquals(k, c.get(k.id()).orElseThrow(), phase);
            }
            assertEquals(kept.size(), c.size(), phase);
            assertTrue(copy.verifyLedger().ok(), phase);
        }
    }

    // ---- a surface that waits for the copy -------------------------------------------------

    /**
     * A replicated log's surface purges only once every member holds the forget; a lagging member
     * catches up by a copy the leader takes meanwhile. The worker waits in the surface, so the copy
     * must not wait for the worker's step: it takes place between two writes of it.
     */
    @Test
    void aCopyDoesNotWaitForASurfaceThatWaitsForTheCopy() throws Exception {
        Path key = keyFile(tmp, "group.key", 7);
        CountDownLatch purging = new CountDownLatch(1);
        CountDownLatch copied = new CountDownLatch(1);
        ErasureSurface waiting =
                new ErasureSurface() {
                    @Override
                    public String name() {
                        return "test:waits-for-copy";
                    }

                    @Override
                    public ErasureClass erasureClass() {
                        return ErasureClass.PHYSICAL;
                    }

                    @Override
                    public void block(BlockedScope scope) {}

                    @Override
                    public long purge(ForgottenRecords forgotten) throws IOException {
                        purging.countDown();
                        try {
                            if (!copied.await(60, TimeUnit.SECONDS)) {
                                throw new IOException("the copy never came");
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IOException(e);
                        }
                        return 0;
                    }

                    @Override
                    public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
                        return new SurfaceOutcome(
                                name(), ErasureClass.PHYSICAL, purged, 0, List.of(), null);
                    }
                };
        String opId;
        byte[] image;
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("leader"), options(tmp.resolve("lk"), key), List.of(waiting))) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
            Random r = new Random(4);
            for (int i = 0; i < 6; i++) {
                c.upsert(
                        VectorRecord.builder("r" + i)
                                .subject(i < 2 ? "alice" : "bob")
                                .vector(i < 2 ? forgottenVector(r) : survivorVector(r))
                                .build());
            }
            opId =
                    store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("alice"), "f-1", "gdpr-art17"))
                            .id();
            assertTrue(purging.await(60, TimeUnit.SECONDS), "the worker reached the surface");
            image = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> copyOf(store));
            copied.countDown();
            assertEquals(OperationState.SEALED, store.awaitOperation(opId, WAIT).state());
        }
        receive(image, "replica");
        try (Nepenthe copy = openReceived("replica", key)) {
            assertEquals(OperationState.SEALED, copy.awaitOperation(opId, WAIT).state());
            assertEquals(4, copy.collection("notes").size());
        }
    }
}
