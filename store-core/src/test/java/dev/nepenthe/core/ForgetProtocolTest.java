package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenScopeException;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.evidence.EvidenceLedger;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.forget.ForgetCrash;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The forget protocol's acceptance tests (issue 6): each failure mode of the field reports in
 * shared/seeds as a test, against oracles (what a search, a get and a byte scan of every file
 * return; the ledger's own verification; a control that shows each check can fail).
 */
class ForgetProtocolTest {

    @TempDir Path tmp;

    private static final int DIM = 16;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CANARY_TEXT = "CANARY-ALICE-TEXT-7f3a";
    private static final String CANARY_SUBJECT = "alice-CANARY-4d21";

    private StoreOptions options() {
        return StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
    }

    private Nepenthe open() throws IOException {
        return Nepenthe.open(tmp.resolve("data"), options());
    }

    /** Seeded vectors far apart from each other (random directions in 16-d). */
    private static float[] vector(long seed) {
        return Datasets.gaussian(seed, DIM);
    }

    private static float[] atCosine(float[] v, double c, long seed) {
        return EvidenceTrustTest.atCosine(v, c, seed);
    }

    /** Alice (3 records, one with canary text), bob (3), nobody (4 records without subject). */
    private VectorCollection populate(Nepenthe store, CollectionSpec spec) {
        VectorCollection c = store.createCollection(spec);
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(
                    VectorRecord.builder("a" + i)
                            .subject(CANARY_SUBJECT)
                            .vector(vector(100 + i))
                            .text(i == 0 ? CANARY_TEXT : "alice note " + i)
                            .build());
            batch.add(
                    VectorRecord.builder("b" + i)
                            .subject("bob")
                            .vector(vector(200 + i))
                            .text("bob note " + i)
                            .build());
        }
        for (int i = 0; i < 4; i++) {
            batch.add(
                    VectorRecord.builder("n" + i)
                            .vector(vector(300 + i))
                            .text("shared note " + i)
                            .build());
        }
        c.upsertAll(batch);
        return c;
    }

    private VectorCollection populate(Nepenthe store) {
        return populate(store, CollectionSpec.of("notes", DIM, Metric.COSINE));
    }

    private static ForgetRequest forgetAlice(String key) {
        return ForgetRequest.of(ForgetScope.subject(CANARY_SUBJECT), key, "gdpr-art17");
    }

    private static List<String> ids(List<SearchHit> hits) {
        return hits.stream().map(SearchHit::id).toList();
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }

    private static void assertNothingOfAlice(VectorCollection c) {
        for (int i = 0; i < 3; i++) {
            assertTrue(c.get("a" + i).isEmpty(), "get a" + i);
            List<String> hits = ids(c.search(SearchRequest.of(vector(100 + i), 10)));
            assertTrue(
                    hits.stream().noneMatch(id -> id.startsWith("a")), "search returned " + hits);
        }
        assertTrue(c.ids(VectorRecord.DEFAULT_TENANT).stream().noneMatch(id -> id.startsWith("a")));
    }

    @Test
    void aSubjectIsForgottenVerifiedAndSealedWithAReceiptThatVerifiesOffline() throws Exception {
        ForgetOperation done;
        String pem;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            ForgetOperation op = store.forget(forgetAlice("req-1"));
            assertEquals(OperationState.BLOCKED, op.state());
            assertNothingOfAlice(c);
            done = store.awaitOperation(op.id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), String.valueOf(done.note()));
            assertEquals(Map.of("notes", 3), done.recordsForgotten());
            assertNothingOfAlice(c);
            assertEquals(7, c.size());
            assertEquals(List.of("b0"), ids(c.search(SearchRequest.of(vector(200), 1))));
            for (SurfaceOutcome s : done.surfaces()) {
                assertTrue(s.clean(), s.toString());
            }
            assertTrue(
                    done.surfaces().stream()
                            .anyMatch(s -> s.surface().equals("collection:notes/storage")));
            assertTrue(
                    done.surfaces().stream()
                            .anyMatch(s -> s.surface().equals("keystore") && s.purged() == 1));
            assertClean(c);
            assertTrue(store.verifyLedger().ok());
            pem = store.publicKeyPem();
        }
        // The receipt verifies with nothing but the public key, and names the operation.
        String json = Receipt.verify(done.receipt(), SigningKey.parsePem(pem));
        assertNotNull(json, "receipt signature");
        assertTrue(json.contains("\"operation\":\"" + done.id() + "\""));
        assertTrue(json.contains("second-order") || json.contains("\"residual\":["));
        // Control: a changed receipt does not verify.
        assertNull(
                Receipt.verify(
                        done.receipt().replace("\"records\":3", "\"records\":2"),
                        SigningKey.parsePem(pem)));
        // Offline ledger check with the file and the key only.
        Path ledger = tmp.resolve("keys/evidence/ledger.bin");
        assertTrue(EvidenceLedger.verify(ledger, SigningKey.parsePem(pem)).ok());

        // No canary anywhere: not in the data, the keystore folder (operation log, ledger, keys)
        // or the receipt. Needles: her text, her subject id, every 16-byte window of each of her
        // vectors in both byte orders.
        List<byte[]> needles =
                new ArrayList<>(
                        List.of(
                                CANARY_TEXT.getBytes(StandardCharsets.UTF_8),
                                CANARY_SUBJECT.getBytes(StandardCharsets.UTF_8)));
        for (int i = 0; i < 3; i++) {
            needles.addAll(StorageForensicsTest.vectorRuns(vector(100 + i)));
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(tmp.resolve("data"), tmp.resolve("keys")), needles));
        assertFalse(done.receipt().contains(CANARY_SUBJECT));
        // Control: the scan finds the canary where it is.
        Files.writeString(tmp.resolve("data/planted.txt"), "x" + CANARY_TEXT);
        assertEquals(1, ForensicScan.filesContaining(List.of(tmp.resolve("data")), needles).size());
        Files.delete(tmp.resolve("data/planted.txt"));

        // Reopen: the operation and its receipt persist; alice stays gone after the index rebuild.
        try (Nepenthe store = open()) {
            ForgetOperation again = store.operation(done.id()).orElseThrow();
            assertEquals(OperationState.SEALED, again.state());
            assertEquals(done.receipt(), again.receipt());
            assertNothingOfAlice(store.collection("notes"));
            assertEquals(0, store.reconciliation().resurrectedRemoved());
        }
    }

    /**
     * The first 16 bytes of the vector's float32 encoding (big-endian, as the records are written).
     */
    private static byte[] vectorBytes(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(16);
        for (int i = 0; i < 4; i++) {
            b.putFloat(v[i]);
        }
        return b.array();
    }

    /**
     * A forget checks the index it removed from, not every index the store holds: the untouched
     * collection's surface says so, with nothing checked, while the touched one was walked.
     */
    @Test
    void onlyTheIndexesAForgetTouchedAreWalked() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            VectorCollection other =
                    store.createCollection(CollectionSpec.of("other", DIM, Metric.COSINE));
            other.upsertAll(
                    List.of(VectorRecord.builder("o1").subject("bob").vector(vector(900)).build()));
            ForgetOperation done =
                    store.awaitOperation(store.forget(forgetAlice("req-touched")).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            SurfaceOutcome touched =
                    done.surfaces().stream()
                            .filter(s -> s.surface().startsWith("collection:notes/index:"))
                            .findFirst()
                            .orElseThrow();
            SurfaceOutcome untouched =
                    done.surfaces().stream()
                            .filter(s -> s.surface().startsWith("collection:other/index:"))
                            .findFirst()
                            .orElseThrow();
            assertTrue(touched.checked() > 0 && touched.purged() == 3, touched.toString());
            assertEquals(0, untouched.checked(), untouched.toString());
            assertTrue(
                    untouched.clean() && untouched.residual().contains("not re-checked"),
                    untouched.toString());
        }
    }

    /**
     * The next search stops after its index call, says so on {@code inSearch}, and waits for {@code
     * release}.
     */
    private static void pauseTheFirstSearch(
            Nepenthe store, CountDownLatch inSearch, CountDownLatch release) {
        store.testPoints()
                .afterIndexSearch(
                        () -> {
                            if (inSearch.getCount() > 0) {
                                inSearch.countDown();
                                try {
                                    release.await(30, TimeUnit.SECONDS);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            }
                        });
    }

    /**
     * k smaller than the blocked set: a search whose index results are all the subject's (marked
     * while it ran) still returns k visible records, none of them hers.
     */
    @Test
    void aSearchHitByAMarkStillReturnsKVisibleRecords() throws Exception {
        String kind = "exact";
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(
                            new CollectionSpec(
                                    "k-" + kind, DIM, Metric.COSINE, IndexSpec.of(kind, Map.of())));
            float[] query = vector(100);
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 12; i++) { // alice: the twelve nearest records
                batch.add(
                        VectorRecord.builder("a" + i)
                                .subject(CANARY_SUBJECT)
                                .vector(atCosine(query, 0.99 - i * 0.001, 500 + i))
                                .build());
            }
            for (int i = 0; i < 30; i++) {
                batch.add(VectorRecord.builder("n" + i).vector(vector(600 + i)).build());
            }
            c.upsertAll(batch);
            assertTrue(
                    ids(c.search(SearchRequest.of(query, 5))).stream()
                            .allMatch(id -> id.startsWith("a")));
            CountDownLatch inSearch = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            pauseTheFirstSearch(store, inSearch, release);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<List<SearchHit>> running =
                        pool.submit(() -> c.search(SearchRequest.of(query, 5)));
                assertTrue(inSearch.await(30, TimeUnit.SECONDS));
                ForgetOperation op = store.forget(forgetAlice("req-k-" + kind));
                release.countDown();
                List<String> hits = ids(running.get(30, TimeUnit.SECONDS));
                assertEquals(5, hits.size(), "k=5 with 30 visible records: " + hits);
                assertTrue(hits.stream().allMatch(id -> id.startsWith("n")), hits.toString());
                // And a search started after the mark, before cleanup ends, gets k too.
                assertEquals(5, c.search(SearchRequest.of(query, 5)).size());
                assertEquals(OperationState.SEALED, store.awaitOperation(op.id(), WAIT).state());
            } finally {
                release.countDown();
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aSearchAlreadyRunningWhenTheForgetIsMarkedCannotReturnTheSubject() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            CountDownLatch inSearch = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            pauseTheFirstSearch(store, inSearch, release);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<List<SearchHit>> running =
                        pool.submit(() -> c.search(SearchRequest.of(vector(100), 10)));
                assertTrue(inSearch.await(30, TimeUnit.SECONDS));
                // The index has already produced its candidates, alice's records among them; the
                // mark must not wait for this search, and the search must not return her.
                ForgetOperation op = store.forget(forgetAlice("req-running"));
                assertEquals(OperationState.BLOCKED, op.state());
                release.countDown();
                List<String> hits = ids(running.get(30, TimeUnit.SECONDS));
                assertEquals(7, hits.size(), "k=10 over 10 records, 3 of them blocked: " + hits);
                assertTrue(hits.stream().noneMatch(id -> id.startsWith("a")), hits.toString());
                assertEquals(OperationState.SEALED, store.awaitOperation(op.id(), WAIT).state());
            } finally {
                release.countDown();
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aSummaryDerivedFromTheSubjectIsForgottenWithItsSources() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            c.upsert(
                    VectorRecord.builder("summary")
                            .vector(vector(400))
                            .text("summary of alice's notes")
                            .derivedFrom(List.of("a0", "a1"))
                            .build());
            c.upsert(
                    VectorRecord.builder("summary-of-summary")
                            .vector(vector(401))
                            .derivedFrom(List.of("summary"))
                            .build());
            c.upsert(
                    VectorRecord.builder("bob-summary")
                            .vector(vector(402))
                            .derivedFrom(List.of("b0"))
                            .build());
            ForgetOperation done =
                    store.awaitOperation(store.forget(forgetAlice("req-2")).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            assertEquals(
                    5,
                    done.totalForgotten(),
                    "3 of alice's records, the summary and the summary of it");
            assertTrue(c.get("summary").isEmpty());
            assertTrue(c.get("summary-of-summary").isEmpty());
            assertTrue(c.get("bob-summary").isPresent());
            // A derived record arriving later that names a forgotten source is refused.
            ForgottenScopeException e =
                    assertThrows(
                            ForgottenScopeException.class,
                            () ->
                                    c.upsert(
                                            VectorRecord.builder("late-summary")
                                                    .vector(vector(403))
                                                    .derivedFrom(List.of("a2"))
                                                    .build()));
            assertEquals(done.id(), e.operationId());
        }
    }

    @Test
    void underARegeneratePolicyDerivedRecordsAreBlockedAndListedUntilRegenerated()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c =
                    populate(
                            store,
                            CollectionSpec.of("notes", DIM, Metric.COSINE)
                                    .withProvenance(CollectionSpec.Provenance.REGENERATE));
            c.upsert(
                    VectorRecord.builder("summary")
                            .vector(vector(400))
                            .derivedFrom(List.of("a0", "b0"))
                            .build());
            ForgetOperation review =
                    store.awaitOperation(store.forget(forgetAlice("req-3")).id(), WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, review.state());
            assertEquals(
                    List.of(
                            new Suspect(
                                    "regeneration-required",
                                    "notes",
                                    "summary",
                                    Double.NaN,
                                    "a0; surviving sources: b0")),
                    review.suspects());
            // The note an operator reads says what stopped it, in words.
            assertTrue(
                    review.note().startsWith("1 suspects, 0 surfaces not clean: forget more"),
                    review.note());
            assertTrue(c.get("summary").isEmpty(), "blocked while it awaits regeneration");
            assertFalse(ids(c.search(SearchRequest.of(vector(400), 3))).contains("summary"));
            assertThrows(
                    IllegalStateException.class, () -> store.override(review.id(), "not-residue"));
            // Regenerated from the surviving source: a new record, then the old one goes.
            c.upsert(
                    VectorRecord.builder("summary-v2")
                            .vector(vector(404))
                            .derivedFrom(List.of("b0"))
                            .build());
            assertTrue(c.delete("summary"));
            store.reverify(review.id());
            assertEquals(OperationState.SEALED, store.awaitOperation(review.id(), WAIT).state());
        }
    }

    @Test
    void aParaphraseStoredAsAnUnrelatedRecordSendsTheOperationToReviewByIdAndScore()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            // Someone stored a paraphrase of alice's note as a record about nobody: cosine 0.9.
            c.upsert(
                    VectorRecord.builder("orphan-7")
                            .vector(atCosine(vector(100), 0.9, 7))
                            .text("a rewording")
                            .build());
            // Control: a record at cosine 0.5 is not a suspect.
            c.upsert(VectorRecord.builder("far-8").vector(atCosine(vector(101), 0.5, 8)).build());
            ForgetOperation review =
                    store.awaitOperation(store.forget(forgetAlice("req-4")).id(), WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, review.state());
            assertEquals(1, review.suspects().size(), review.suspects().toString());
            Suspect s = review.suspects().get(0);
            assertEquals("vector-residue", s.reason());
            assertEquals("orphan-7", s.recordId());
            assertEquals("a0", s.relatedTo());
            assertEquals(0.9, s.score(), 1e-4);
            assertNull(review.receipt());
            assertFalse(
                    review.toString().contains("rewording"),
                    "suspects carry ids and scores, not content");
            // The operator forgets the paraphrase too, and re-verifies: now it seals.
            ForgetOperation more =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.records("orphan-7"),
                                                    "req-4b",
                                                    "residue"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, more.state(), more.note());
            store.reverify(review.id());
            assertEquals(OperationState.SEALED, store.awaitOperation(review.id(), WAIT).state());
            assertTrue(c.get("far-8").isPresent());
        }
    }

    @Test
    void joinKeysFollowReplacementsAndDeletesOfTheRecordsThatNameTheSubject() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            // Named, then renamed away (a replacement): the join-key index must forget the old
            // value.
            c.upsert(
                    VectorRecord.builder("b7")
                            .subject("bob")
                            .vector(vector(207))
                            .metadata("friend", CANARY_SUBJECT)
                            .build());
            c.upsert(
                    VectorRecord.builder("b7")
                            .subject("bob")
                            .vector(vector(207))
                            .metadata("friend", "carol")
                            .build());
            // Named, then deleted.
            c.upsert(
                    VectorRecord.builder("b8")
                            .subject("bob")
                            .vector(vector(208))
                            .metadata("friend", CANARY_SUBJECT)
                            .build());
            c.delete("b8");
            // Renamed onto the subject: found.
            c.upsert(
                    VectorRecord.builder("b6")
                            .subject("bob")
                            .vector(vector(206))
                            .metadata("friend", "dave")
                            .build());
            c.upsert(
                    VectorRecord.builder("b6")
                            .subject("bob")
                            .vector(vector(206))
                            .metadata("friend", CANARY_SUBJECT)
                            .build());
            assertTrue(
                    c.verifyIntegrity().values().stream().allMatch(IntegrityReport::isClean),
                    c.verifyIntegrity().toString());
            ForgetOperation review =
                    store.awaitOperation(store.forget(forgetAlice("req-5j")).id(), WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, review.state());
            assertEquals(
                    List.of(
                            new Suspect(
                                    "join-key", "notes", "b6", Double.NaN, "metadata key friend")),
                    review.suspects());
        }
    }

    @Test
    void aSurvivingRecordWhoseMetadataNamesTheSubjectSendsItToReviewAndAnOverrideIsRecorded()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            c.upsert(
                    VectorRecord.builder("b9")
                            .subject("bob")
                            .vector(vector(209))
                            .metadata("friend", " " + CANARY_SUBJECT.toUpperCase() + " ")
                            .build());
            ForgetOperation review =
                    store.awaitOperation(store.forget(forgetAlice("req-5")).id(), WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, review.state());
            assertEquals(
                    List.of(
                            new Suspect(
                                    "join-key", "notes", "b9", Double.NaN, "metadata key friend")),
                    review.suspects());
            ForgetOperation sealed = store.override(review.id(), "kept-under-art17-3b");
            assertEquals(OperationState.SEALED, sealed.state());
            assertTrue(sealed.receipt().contains("\"override\":\"kept-under-art17-3b\""));
            assertTrue(store.verifyLedger().ok());
            // Free text as a reason code is refused (it could name a person).
            assertThrows(
                    IllegalArgumentException.class,
                    () -> ForgetRequest.checkReasonCode("asked by alice smith"));
        }
    }

    @Test
    void aSnapshotTakenBeforeTheForgetAndRestoredAfterServesNothingOfTheSubject() throws Exception {
        Path snapshot = tmp.resolve("snap");
        Path unregisteredCopy = tmp.resolve("copy-of-snap");
        try (Nepenthe store = open()) {
            populate(store);
            store.snapshot(snapshot);
            copyTree(snapshot, unregisteredCopy); // a copy the store knows nothing about
            ForgetOperation done =
                    store.awaitOperation(store.forget(forgetAlice("req-6")).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            SurfaceOutcome snaps =
                    done.surfaces().stream()
                            .filter(s -> s.surface().equals("snapshots"))
                            .findFirst()
                            .orElseThrow();
            assertEquals(1, snaps.checked(), "the registered snapshot was purged and scanned");
        }
        for (Path source : List.of(snapshot, unregisteredCopy)) {
            Path restored = tmp.resolve("restored-" + source.getFileName());
            Nepenthe.restore(source, restored);
            try (Nepenthe store = Nepenthe.open(restored, options())) {
                VectorCollection c = store.collection("notes");
                assertNothingOfAlice(c);
                assertEquals(7, c.size());
                assertClean(c);
            }
            assertEquals(
                    List.of(),
                    ForensicScan.filesContaining(
                            List.of(restored),
                            List.of(
                                    CANARY_TEXT.getBytes(StandardCharsets.UTF_8),
                                    vectorBytes(vector(100)))));
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path p : files.toList()) {
                Path dst = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dst);
                } else {
                    Files.copy(p, dst);
                }
            }
        }
    }

    @Test
    void aStaleWriteAfterTheMarkIsRefusedAndTheSameRequestTwiceIsOneOperation() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            ForgetOperation op = store.forget(forgetAlice("req-7"));
            // A queue message produced before the forget arrives after it: refused, whole batch.
            ForgottenScopeException e =
                    assertThrows(
                            ForgottenScopeException.class,
                            () ->
                                    c.upsertAll(
                                            List.of(
                                                    VectorRecord.builder("b7")
                                                            .subject("bob")
                                                            .vector(vector(207))
                                                            .build(),
                                                    VectorRecord.builder("a7")
                                                            .subject(CANARY_SUBJECT)
                                                            .vector(vector(107))
                                                            .build())));
            assertEquals(1, e.batchPosition());
            assertFalse(e.getMessage().contains(CANARY_SUBJECT), e.getMessage());
            assertTrue(c.get("b7").isEmpty(), "nothing of the refused batch was stored");
            ForgetOperation same = store.forget(forgetAlice("req-7"));
            assertEquals(op.id(), same.id());
            assertEquals(1, store.operations(o -> true).size());
            assertThrows(
                    IllegalArgumentException.class,
                    () ->
                            store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("bob"), "req-7", "gdpr-art17")));
            ForgetOperation done = store.awaitOperation(op.id(), WAIT);
            assertEquals(OperationState.SEALED, done.state());
            // After sealing, the fence is keyed hashes only, and it still holds across a reopen.
            assertThrows(
                    ForgottenScopeException.class,
                    () ->
                            c.upsert(
                                    VectorRecord.builder("a8")
                                            .subject(CANARY_SUBJECT)
                                            .vector(vector(108))
                                            .build()));
            assertThrows(
                    ForgottenScopeException.class,
                    () -> c.upsert(VectorRecord.builder("a1").vector(vector(111)).build()),
                    "a forgotten id comes back");
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            assertThrows(
                    ForgottenScopeException.class,
                    () ->
                            c.upsert(
                                    VectorRecord.builder("a9")
                                            .subject(CANARY_SUBJECT)
                                            .vector(vector(109))
                                            .build()));
            assertEquals(1, store.operations(o -> o.state() == OperationState.SEALED).size());
            c.upsert(VectorRecord.builder("b8").subject("bob").vector(vector(208)).build());
            assertTrue(c.get("b8").isPresent());
        }
    }

    @Test
    void aForgetInOneTenantLeavesTheSameSubjectInAnotherAndVersionThreeGoesWhileFourStays()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("docs", DIM, Metric.COSINE));
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("x")
                                    .tenant("t1")
                                    .subject("alice")
                                    .vector(vector(1))
                                    .build(),
                            VectorRecord.builder("x")
                                    .tenant("t2")
                                    .subject("alice")
                                    .vector(vector(1))
                                    .build(),
                            VectorRecord.builder("d3")
                                    .tenant("t1")
                                    .source(new SourceRef("doc", "handbook", 3))
                                    .vector(vector(3))
                                    .build(),
                            VectorRecord.builder("d4")
                                    .tenant("t1")
                                    .source(new SourceRef("doc", "handbook", 4))
                                    .vector(vector(4))
                                    .build()));
            ForgetOperation t1 = store.awaitOperation(store.forget(forgetAliceIn("t1")).id(), WAIT);
            assertEquals(OperationState.SEALED, t1.state());
            assertTrue(c.get("t1", "x").isEmpty());
            assertTrue(c.get("t2", "x").isPresent(), "another tenant's alice is untouched");
            assertEquals(List.of("x"), ids(c.search(SearchRequest.of(vector(1), 1).tenant("t2"))));
            // A probe never crosses tenants: t2's identical vector is not a suspect for t1.
            assertEquals(List.of(), t1.suspects());
            c.upsert(
                    VectorRecord.builder("y")
                            .tenant("t2")
                            .subject("alice")
                            .vector(vector(2))
                            .build());

            ForgetOperation v3 =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    "t1",
                                                    ForgetScope.source("doc", "handbook", 3),
                                                    "req-v3",
                                                    "retention",
                                                    0.85))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, v3.state(), v3.note());
            assertTrue(c.get("t1", "d3").isEmpty());
            assertTrue(c.get("t1", "d4").isPresent());
            assertThrows(
                    ForgottenScopeException.class,
                    () ->
                            c.upsert(
                                    VectorRecord.builder("d3b")
                                            .tenant("t1")
                                            .source(new SourceRef("doc", "handbook", 3))
                                            .vector(vector(5))
                                            .build()));
            c.upsert(
                    VectorRecord.builder("d5")
                            .tenant("t1")
                            .source(new SourceRef("doc", "handbook", 5))
                            .vector(vector(6))
                            .build());
            assertTrue(c.get("t1", "d5").isPresent());
        }
    }

    private static ForgetRequest forgetAliceIn(String tenant) {
        return new ForgetRequest(
                tenant, ForgetScope.subject("alice"), "req-" + tenant, "gdpr-art17", 0.85);
    }

    @Test
    void aLegalHoldEndsInCompletedWithExceptionWithRetrievalBlockedAndLiftingItSeals()
            throws Exception {
        String opId;
        String holdId;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            LegalHold hold =
                    store.placeHold(
                            VectorRecord.DEFAULT_TENANT,
                            ForgetScope.subject(CANARY_SUBJECT),
                            "litigation-42");
            holdId = hold.id();
            assertFalse(hold.toString().contains(CANARY_SUBJECT));
            ForgetOperation held =
                    store.awaitOperation(store.forget(forgetAlice("req-8")).id(), WAIT);
            opId = held.id();
            assertEquals(OperationState.COMPLETED_WITH_EXCEPTION, held.state());
            assertEquals(List.of(hold.id()), held.holds());
            assertNothingOfAlice(c);
            assertEquals(10, c.size(), "the data is kept");
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            assertNothingOfAlice(c); // still blocked after a restart
            assertEquals(10, c.size());
            c.rebuildIndex();
            assertNothingOfAlice(c);
            assertClean(c);
            store.liftHold(holdId);
            ForgetOperation sealed = store.awaitOperation(opId, WAIT);
            assertEquals(OperationState.SEALED, sealed.state(), sealed.note());
            assertEquals(7, c.size());
            assertTrue(store.holds().stream().noneMatch(LegalHold::active));
        }
    }

    @Test
    void aTamperedLedgerByteIsDetectedAtTheEntryItChangedAndStopsForgets() throws Exception {
        String pem;
        try (Nepenthe store = open()) {
            populate(store);
            store.awaitOperation(store.forget(forgetAlice("req-9")).id(), WAIT);
            store.awaitOperation(
                    store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("bob"), "req-10", "gdpr-art17"))
                            .id(),
                    WAIT);
            pem = store.publicKeyPem();
            assertEquals(2, store.verifyLedger().entries());
        }
        Path ledger = tmp.resolve("keys/evidence/ledger.bin");
        byte[] bytes = Files.readAllBytes(ledger);
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        int second = text.indexOf("\"type\":\"forget\"", text.indexOf("\"type\":\"forget\"") + 1);
        try (RandomAccessFile f = new RandomAccessFile(ledger.toFile(), "rw")) {
            f.seek(second + 1);
            f.write('X');
        }
        LedgerVerification v = EvidenceLedger.verify(ledger, SigningKey.parsePem(pem));
        assertFalse(v.ok());
        assertEquals(1, v.firstBadEntry());
        // The store opens (searches go on) but names the damage and takes no new forget.
        try (Nepenthe store = open()) {
            StoreHealth health = store.health();
            assertFalse(health.forgetsAccepted());
            assertTrue(health.ledgerProblem().contains("at entry 1"), health.ledgerProblem());
            assertThrows(
                    IllegalStateException.class,
                    () ->
                            store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("carol"), "req-11", "gdpr-art17")));
            assertEquals(4, store.collection("notes").size());
        }
    }

    @Test
    void aCorruptOperationLogFailsTheOpenNamingTheFile() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            store.awaitOperation(store.forget(forgetAlice("req-15")).id(), WAIT);
            store.awaitOperation(
                    store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("bob"), "req-16", "gdpr-art17"))
                            .id(),
                    WAIT);
        }
        Path log;
        try (var files = Files.list(tmp.resolve("keys/operations"))) {
            log =
                    files.filter(p -> Files.isRegularFile(p))
                            .max((a, b) -> Long.compare(a.toFile().length(), b.toFile().length()))
                            .orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "rw")) {
            f.seek(f.length() / 3);
            int b = f.read();
            f.seek(f.length() / 3);
            f.write(b ^ 0x5A);
        }
        IOException e = assertThrows(IOException.class, this::open);
        assertTrue(
                e.getMessage().contains(log.getFileName().toString())
                        || e.getMessage().contains("operations"),
                e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "after-mark",
                "cleanup-before-delete",
                "cleanup-after-delete",
                "verify-done",
                "after-key-destroyed",
                "sealed-before-key"
            })
    void aCrashAtAnyPhaseResumesOnReopenAndNothingResurrects(String phase) throws Exception {
        String opId;
        try (Nepenthe store = open()) {
            populate(store);
            store.testPoints().stopForgetAt(phase);
            ForgetOperation op;
            try {
                op = store.forget(forgetAlice("req-crash"));
            } catch (ForgetCrash.Simulated crash) {
                // "after-mark" dies on the caller's thread, after the operation was recorded.
                op = store.operations(o -> true).get(0);
            }
            opId = op.id();
            if (!phase.equals("after-mark")) {
                ForgetOperation stopped = store.awaitOperation(opId, WAIT);
                if (!phase.equals("sealed-before-key")) {
                    assertNotEquals(OperationState.SEALED, stopped.state(), phase);
                }
            }
            assertNothingOfAlice(store.collection("notes"));
            store.testPoints().stopForgetAt(null);
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            assertNothingOfAlice(c); // blocked before the resumed operation gets anywhere
            ForgetOperation done = store.awaitOperation(opId, WAIT);
            assertEquals(OperationState.SEALED, done.state(), phase + ": " + done.note());
            assertEquals(3, done.totalForgotten(), phase);
            assertNothingOfAlice(c);
            assertEquals(7, c.size());
            assertTrue(store.verifyLedger().ok());
            long sealedEntries = store.verifyLedger().entries();
            assertEquals(1, sealedEntries, phase + ": one evidence entry for one operation");
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(tmp.resolve("data"), tmp.resolve("keys")),
                        List.of(
                                CANARY_TEXT.getBytes(StandardCharsets.UTF_8),
                                vectorBytes(vector(100)))),
                phase);
    }

    @Test
    void recordIdAndMetadataScopesForgetExactlyWhatTheyName() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            c.upsert(
                    VectorRecord.builder("m1")
                            .vector(vector(500))
                            .metadata("campaign", "spring")
                            .build());
            c.upsert(
                    VectorRecord.builder("m2")
                            .vector(vector(501))
                            .metadata("campaign", "spring")
                            .build());
            c.upsert(
                    VectorRecord.builder("m3")
                            .vector(vector(502))
                            .metadata("campaign", "autumn")
                            .build());
            ForgetOperation byId =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.records("b1", "no-such-id"),
                                                    "req-11",
                                                    "user-request"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, byId.state(), byId.note());
            assertEquals(1, byId.totalForgotten());
            assertTrue(c.get("b1").isEmpty());
            assertTrue(c.get("b0").isPresent());
            ForgetOperation byMeta =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.metadata(
                                                            Filter.eq("campaign", "spring")),
                                                    "req-12",
                                                    "retention"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, byMeta.state(), byMeta.note());
            assertEquals(2, byMeta.totalForgotten());
            assertTrue(c.get("m3").isPresent());
            assertTrue(c.get("m1").isEmpty());
        }
    }

    @Test
    void aRegisteredSurfaceThatKeepsResidueOrIsLogicalOnlyBlocksSealing() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            EvidenceTrustTest.QueryCache broken =
                    new EvidenceTrustTest.QueryCache(ErasureClass.PHYSICAL, false);
            broken.entries.put("q1", ids(c.search(SearchRequest.of(vector(100), 3))));
            store.registerSurface(broken);
            ForgetOperation review =
                    store.awaitOperation(store.forget(forgetAlice("req-13")).id(), WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, review.state());
            SurfaceOutcome cache =
                    review.surfaces().stream()
                            .filter(s -> s.surface().equals("cache:query"))
                            .findFirst()
                            .orElseThrow();
            assertFalse(cache.clean());
            assertThrows(IllegalStateException.class, () -> store.override(review.id(), "no"));
            broken.entries.clear();
            store.reverify(review.id());
            assertEquals(OperationState.SEALED, store.awaitOperation(review.id(), WAIT).state());
        }
        try (Nepenthe store = open()) {
            store.registerSurface(
                    new EvidenceTrustTest.QueryCache(ErasureClass.LOGICAL_ONLY, true));
            ForgetOperation review =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("bob"),
                                                    "req-14",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(
                    OperationState.NEEDS_REVIEW,
                    review.state(),
                    "a logical-only surface never seals");
        }
    }
}
