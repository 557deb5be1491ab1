package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.LedgerVerifier;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenScopeException;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.Readmission;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.forget.ForgetCrash;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Re-admission of a forgotten subject or record ids: writes the forgets refused are accepted and
 * stored as new records, while nothing from before the forget comes back, whatever brings it (a
 * snapshot restored after the re-admission, a lost tombstone journal, a crash image replayed).
 * Oracles: what get, search and a byte scan of every file return, the ledger's own verification,
 * and the forget's receipt checked offline.
 */
class ReadmissionTest {

    @TempDir Path tmp;

    private static final int DIM = 16;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SUBJECT = "alice-CANARY-4d21";
    private static final String OLD_TEXT = "CANARY-OLD-ALICE-TEXT-7f3a";
    private static final String T = VectorRecord.DEFAULT_TENANT;

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

    /** Alice (a0..a2, a0 with the canary text), bob (b0..b2), nobody (n0..n3). */
    private static VectorCollection populate(Nepenthe store) {
        VectorCollection c =
                store.createCollection(
                        CollectionSpec.of("notes", DIM, Metric.COSINE).withTextIndex("standard"));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(
                    VectorRecord.builder("a" + i)
                            .subject(SUBJECT)
                            .vector(vector(100 + i))
                            .text(i == 0 ? OLD_TEXT : "alice note " + i)
                            .build());
            batch.add(
                    VectorRecord.builder("b" + i)
                            .subject("bob")
                            .vector(vector(200 + i))
                            .text("bob note " + i)
                            .build());
        }
        for (int i = 0; i < 4; i++) {
            batch.add(VectorRecord.builder("n" + i).vector(vector(300 + i)).build());
        }
        c.upsertAll(batch);
        return c;
    }

    private static ForgetOperation forgetAlice(Nepenthe store, String key)
            throws InterruptedException {
        ForgetOperation done =
                store.awaitOperation(
                        store.forget(
                                        ForgetRequest.of(
                                                ForgetScope.subject(SUBJECT), key, "gdpr-art17"))
                                .id(),
                        WAIT);
        assertEquals(OperationState.SEALED, done.state(), done.note());
        return done;
    }

    private static VectorRecord alice(String id, long seed) {
        return VectorRecord.builder(id)
                .subject(SUBJECT)
                .vector(vector(seed))
                .text("fresh note " + seed)
                .build();
    }

    /** None of alice's records from before the forget: by id, by their vectors, by listing. */
    private static void assertNoOldAlice(VectorCollection c) {
        for (int i = 0; i < 3; i++) {
            c.get("a" + i)
                    .ifPresent(
                            r ->
                                    assertFalse(
                                            r.text().equals(OLD_TEXT)
                                                    || r.text().startsWith("alice note"),
                                            "an old version of a record came back"));
            for (SearchHit h : c.search(SearchRequest.of(vector(100 + i), 10))) {
                assertTrue(h.score() < 0.999, "a forgotten vector is served again: " + h.id());
            }
        }
    }

    private static List<byte[]> oldAliceNeedles() {
        List<byte[]> needles = new ArrayList<>(List.of(OLD_TEXT.getBytes(StandardCharsets.UTF_8)));
        for (int i = 0; i < 3; i++) {
            needles.addAll(StorageForensicsTest.vectorRuns(vector(100 + i)));
        }
        return needles;
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }

    private static List<LedgerEntry> readmissionEntries(Nepenthe store) throws IOException {
        return store.evidence().entries().stream()
                .filter(e -> e.body().contains("\"type\":\"readmission\""))
                .toList();
    }

    @Test
    void aReadmittedSubjectIsWrittenAgainAsNewRecordsAndTheForgetsReceiptStillVerifies()
            throws Exception {
        ForgetOperation done;
        Readmission r;
        String pem;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            done = forgetAlice(store, "req-1");
            // Fenced: a write for her, and her forgotten record's id under another subject.
            assertThrows(ForgottenScopeException.class, () -> c.upsert(alice("a9", 909)));
            assertThrows(
                    ForgottenScopeException.class,
                    () ->
                            c.upsert(
                                    VectorRecord.builder("a0")
                                            .subject("bob")
                                            .vector(vector(910))
                                            .build()));

            r = store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed");
            assertTrue(r.complete());
            assertEquals(List.of(done.id()), r.forgetOperations());
            assertEquals("subject", r.scopeKind());
            assertEquals(
                    done.scopeHash(),
                    r.scopeHash(),
                    "the same keyed hash names the subject in both");
            assertEquals(List.of(r), store.readmissions());

            // Her ledger entry: who, what and when by keyed hashes and ids of operations.
            LedgerEntry entry = store.evidence().entries().get((int) r.ledgerEntry().seq());
            assertEquals(r.ledgerEntry().hash(), entry.hashHex());
            String body = entry.body();
            assertTrue(body.contains("\"type\":\"readmission\""), body);
            assertTrue(body.contains("\"readmission\":\"" + r.id() + "\""), body);
            assertTrue(body.contains("\"lifts\":[\"" + done.id() + "\"]"), body);
            assertTrue(body.contains("\"hash\":\"" + done.scopeHash() + "\""), body);
            assertTrue(body.contains("\"reason\":\"consent-renewed\""), body);
            assertFalse(body.contains(SUBJECT));

            // Accepted now, as new records: her old id too, with new content.
            c.upsertAll(List.of(alice("a0", 900), alice("a9", 909)));
            assertArrayEquals(vector(900), c.get("a0").orElseThrow().vector());
            assertEquals("fresh note 900", c.get("a0").orElseThrow().text());
            assertEquals(
                    List.of("a0"),
                    c.search(SearchRequest.of(vector(900), 1)).stream()
                            .map(SearchHit::id)
                            .toList());
            assertEquals(
                    List.of("a0"),
                    c.search(SearchRequest.keyword("fresh note 900", 1)).stream()
                            .map(SearchHit::id)
                            .toList());
            assertNoOldAlice(c);
            assertClean(c);
            assertTrue(store.verifyLedger().ok(), store.verifyLedger().toString());
            assertTrue(store.evidence().checkReceipt(done.receipt()).ok());
            pem = store.publicKeyPem();
        }
        // The forget's receipt verifies offline, and the ledger holds its entry next to the
        // re-admission.
        assertNotNull(Receipt.verify(done.receipt(), SigningKey.parsePem(pem)));
        Path receiptFile = tmp.resolve("receipt.txt");
        Files.writeString(receiptFile, done.receipt());
        ByteArrayOutputStream report = new ByteArrayOutputStream();
        assertEquals(
                0,
                LedgerVerifier.run(
                        tmp.resolve("keys/evidence/ledger.bin"),
                        SigningKey.parsePem(pem),
                        List.of(receiptFile),
                        List.of(r.ledgerEntry()),
                        new PrintStream(report, true, StandardCharsets.UTF_8)),
                report.toString(StandardCharsets.UTF_8));
        // No plaintext subject or old content anywhere: her new records are sealed, the evidence is
        // hashed.
        List<byte[]> needles = new ArrayList<>(oldAliceNeedles());
        needles.add(SUBJECT.getBytes(StandardCharsets.UTF_8));
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(tmp.resolve("data"), tmp.resolve("keys")), needles));

        // Reopen: reconciliation keeps her new records (above the floor) and removes nothing.
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            assertEquals(0, store.reconciliation().resurrectedRemoved());
            assertArrayEquals(vector(900), c.get("a0").orElseThrow().vector());
            assertTrue(c.get("a9").isPresent());
            c.upsert(alice("a1", 901));
            assertNoOldAlice(c);
            assertEquals(List.of(r), store.readmissions());
            assertEquals(OperationState.SEALED, store.operation(done.id()).orElseThrow().state());
            assertEquals(done.receipt(), store.operation(done.id()).orElseThrow().receipt());
        }
    }

    @Test
    void recordIdsForgottenOneByOneAreReadmittedByIdAndASubjectsFenceStays() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            ForgetOperation byId =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.records("b1", "b2"),
                                                    "req-2",
                                                    "user-request"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, byId.state(), byId.note());
            Readmission r = store.readmit(T, ForgetScope.records("b1"), "restored-by-owner");
            assertEquals("records", r.scopeKind());
            assertEquals(List.of(byId.id()), r.forgetOperations());
            c.upsert(VectorRecord.builder("b1").subject("bob").vector(vector(911)).build());
            assertArrayEquals(vector(911), c.get("b1").orElseThrow().vector());
            // Only the id re-admitted: b2 stays fenced.
            assertThrows(
                    ForgottenScopeException.class,
                    () ->
                            c.upsert(
                                    VectorRecord.builder("b2")
                                            .subject("bob")
                                            .vector(vector(912))
                                            .build()));
            // Twice is refused, naming the re-admission that lifted it; an id nobody forgot too.
            IllegalArgumentException twice =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> store.readmit(T, ForgetScope.records("b1"), "restored-by-owner"));
            assertTrue(twice.getMessage().contains(r.id()), twice.getMessage());
            IllegalArgumentException never =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.readmit(
                                            T,
                                            ForgetScope.records("never-forgotten-id"),
                                            "restored-by-owner"));
            assertFalse(
                    never.getMessage().contains("never-forgotten-id"),
                    "messages name scopes by hash");

            // A record a subject forget removed may be re-admitted by id, but the subject's fence
            // stays: the id is accepted under another subject only.
            forgetAlice(store, "req-3");
            store.readmit(T, ForgetScope.records("a0"), "not-about-her");
            assertThrows(ForgottenScopeException.class, () -> c.upsert(alice("a0", 913)));
            c.upsert(VectorRecord.builder("a0").subject("bob").vector(vector(914)).build());
            assertEquals("bob", c.get("a0").orElseThrow().subject());
            assertThrows(ForgottenScopeException.class, () -> c.upsert(alice("a7", 915)));
            assertTrue(store.verifyLedger().ok());
            assertEquals(2, readmissionEntries(store).size());
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            assertEquals(0, store.reconciliation().resurrectedRemoved());
            assertArrayEquals(vector(911), c.get("b1").orElseThrow().vector());
            assertArrayEquals(vector(914), c.get("a0").orElseThrow().vector());
            assertTrue(c.get("b2").isEmpty());
        }
    }

    /**
     * Snapshots from before the forget (the registered one, which the forget purged, and a copy it
     * could not purge) restored after the re-admission serve nothing of hers from before, and take
     * her writes as new records. A snapshot from after the re-admission, restored after those,
     * still opens with her new records: opening the older copies (which replays her forget's key
     * destruction) left her new key alone.
     */
    @Test
    void aSnapshotFromBeforeTheForgetRestoredAfterTheReadmissionBringsNothingBack()
            throws Exception {
        Path snapshot = tmp.resolve("snap");
        Path unregistered = tmp.resolve("copy-of-snap");
        Path after = tmp.resolve("snap-after");
        try (Nepenthe store = open()) {
            populate(store);
            store.snapshot(snapshot);
            TestFiles.copyTree(snapshot, unregistered); // a copy the forget cannot purge
            forgetAlice(store, "req-4");
            store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed");
            store.collection("notes").upsertAll(List.of(alice("a0", 900), alice("a5", 905)));
            store.snapshot(after);
        }
        for (Path source : List.of(snapshot, unregistered)) {
            Path restored = tmp.resolve("restored-" + source.getFileName());
            Nepenthe.restore(source, restored);
            try (Nepenthe store = Nepenthe.open(restored, options())) {
                VectorCollection c = store.collection("notes");
                assertNoOldAlice(c);
                for (int i = 0; i < 3; i++) {
                    assertTrue(c.get("a" + i).isEmpty(), source + ": a" + i);
                }
                assertEquals(7, c.size(), source + ": bob's and nobody's records");
                assertClean(c);
                // She is re-admitted in the restored store too: her writes are new records.
                c.upsert(alice("a6", 906));
            }
            try (Nepenthe store = Nepenthe.open(restored, options())) {
                VectorCollection c = store.collection("notes");
                assertEquals(0, store.reconciliation().resurrectedRemoved(), source.toString());
                assertArrayEquals(
                        vector(906),
                        c.get("a6").orElseThrow().vector(),
                        source + ": a write after the restore is kept");
                assertNoOldAlice(c);
                assertEquals(8, c.size());
            }
            assertEquals(
                    List.of(),
                    ForensicScan.filesContaining(List.of(restored), oldAliceNeedles()),
                    source.toString());
        }
        Nepenthe.restore(after, tmp.resolve("restored-after"));
        try (Nepenthe store = Nepenthe.open(tmp.resolve("restored-after"), options())) {
            VectorCollection c = store.collection("notes");
            assertArrayEquals(vector(905), c.get("a5").orElseThrow().vector());
            assertNoOldAlice(c);
            assertEquals(9, c.size());
        }
        try (Nepenthe store = open()) {
            assertArrayEquals(
                    vector(900), store.collection("notes").get("a0").orElseThrow().vector());
            assertTrue(store.verifyLedger().ok());
        }
    }

    /**
     * The backstop behind the tombstone journal: with the journal lost and a copy from before a
     * record forget restored, reconciliation removes the old record although its id was re-admitted
     * (its version is below the floor), and a write of the id afterwards is numbered above the
     * floor, so the next open keeps it.
     */
    @Test
    void withTheJournalLostReconciliationRemovesTheOldRecordAndKeepsItsReadmittedSuccessor()
            throws Exception {
        Path copy = tmp.resolve("copy");
        ForgetOperation byId;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            store.snapshot(tmp.resolve("snap"));
            TestFiles.copyTree(tmp.resolve("snap"), copy);
            // Writes after the copy was taken: the floor lies well above the copy's versions.
            for (int i = 10; i < 15; i++) {
                c.upsert(VectorRecord.builder("n" + i).vector(vector(300 + i)).build());
            }
            byId =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.records("b1"),
                                                    "req-5",
                                                    "user-request"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, byId.state());
            store.readmit(T, ForgetScope.records("b1"), "restored-by-owner");
            store.collection("notes")
                    .upsert(VectorRecord.builder("b1").subject("bob").vector(vector(921)).build());
        }
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(copy, restored);
        TestFiles.deleteTree(tmp.resolve("keys/tombstones"));
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            VectorCollection c = store.collection("notes");
            assertEquals(
                    1,
                    store.reconciliation().resurrectedRemoved(),
                    "the old b1 came back and was removed");
            assertTrue(c.get("b1").isEmpty());
            assertTrue(
                    store.evidence().entries().stream()
                            .anyMatch(
                                    e ->
                                            e.body().contains("\"type\":\"reconciliation\"")
                                                    && e.body().contains(byId.id())));
            c.upsert(VectorRecord.builder("b1").subject("bob").vector(vector(922)).build());
        }
        try (Nepenthe store = Nepenthe.open(restored, options())) {
            assertEquals(0, store.reconciliation().resurrectedRemoved());
            assertArrayEquals(
                    vector(922), store.collection("notes").get("b1").orElseThrow().vector());
            assertTrue(store.verifyLedger().ok());
        }
    }

    /**
     * A crash image taken inside the forget's cleanup (deletion journaled and logged, records still
     * in the index, the log still holding their writes) is opened, the forget resumes and seals,
     * the subject is re-admitted and written again: no replay brings the old records back.
     */
    @Test
    void aCrashImageTakenMidForgetThenReadmittedNeverServesTheOldRecords() throws Exception {
        Path imageData = tmp.resolve("image-data");
        Path imageKeys = tmp.resolve("image-keys");
        AtomicBoolean copied = new AtomicBoolean();
        try (Nepenthe store = open()) {
            populate(store);
            store.testPoints()
                    .installCrashHook(
                            point -> {
                                if (point.equals("cleanup.deleted")
                                        && copied.compareAndSet(false, true)) {
                                    try {
                                        TestFiles.copyTree(tmp.resolve("data"), imageData);
                                        TestFiles.copyTree(tmp.resolve("keys"), imageKeys);
                                    } catch (IOException e) {
                                        throw new UncheckedIOException(e);
                                    }
                                }
                            });
            forgetAlice(store, "req-6");
            store.testPoints().installCrashHook(null);
        }
        assertTrue(copied.get(), "the crash point was reached");
        Files.deleteIfExists(imageData.resolve("store.lock"));
        StoreOptions imageOptions = StoreOptions.defaults().withKeystore(imageKeys);
        try (Nepenthe store = Nepenthe.open(imageData, imageOptions)) {
            VectorCollection c = store.collection("notes");
            assertNoOldAlice(c);
            ForgetOperation resumed = store.operations(o -> true).get(0);
            assertEquals(OperationState.SEALED, store.awaitOperation(resumed.id(), WAIT).state());
            store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed");
            c.upsertAll(List.of(alice("a0", 900), alice("a2", 902)));
        }
        try (Nepenthe store = Nepenthe.open(imageData, imageOptions)) {
            VectorCollection c = store.collection("notes");
            assertEquals(0, store.reconciliation().resurrectedRemoved());
            assertNoOldAlice(c);
            assertTrue(c.get("a1").isEmpty());
            assertArrayEquals(vector(900), c.get("a0").orElseThrow().vector());
            assertArrayEquals(vector(902), c.get("a2").orElseThrow().vector());
            assertEquals(9, c.size());
            assertClean(c);
            assertTrue(store.verifyLedger().ok());
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(List.of(imageData, imageKeys), oldAliceNeedles()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"readmit-recorded", "readmit-appended"})
    void aReadmissionACrashInterruptedIsFinishedAtTheNextOpenWithOneLedgerEntry(String point)
            throws Exception {
        ForgetOperation done;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            done = forgetAlice(store, "req-7");
            store.testPoints().stopForgetAt(point);
            assertThrows(
                    ForgetCrash.Simulated.class,
                    () -> store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed"));
            store.testPoints().stopForgetAt(null);
            // Until its evidence is in the ledger and recorded, nothing is lifted.
            Readmission pending = store.readmissions().get(0);
            assertFalse(pending.complete());
            assertNull(pending.ledgerEntry());
            assertThrows(ForgottenScopeException.class, () -> c.upsert(alice("a9", 909)));
            IllegalArgumentException again =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.readmit(
                                            T, ForgetScope.subject(SUBJECT), "consent-renewed"));
            assertTrue(
                    again.getMessage().contains(pending.id() + " (pending)"), again.getMessage());
        }
        try (Nepenthe store = open()) {
            Readmission r = store.readmissions().get(0);
            assertTrue(r.complete(), point);
            assertEquals(List.of(done.id()), r.forgetOperations());
            assertEquals(1, readmissionEntries(store).size(), point + ": one ledger entry");
            assertEquals(r.ledgerEntry().hash(), readmissionEntries(store).get(0).hashHex());
            store.collection("notes").upsert(alice("a9", 909));
            assertTrue(store.verifyLedger().ok());
            assertTrue(store.evidence().checkReceipt(done.receipt()).ok());
        }
    }

    @Test
    void readmissionIsRefusedWhileAForgetOfTheScopeIsUnsealedAndForWhatNoSealedForgetFences()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            IllegalArgumentException nobody =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.readmit(
                                            T,
                                            ForgetScope.subject("carol-CANARY"),
                                            "consent-renewed"));
            assertTrue(nobody.getMessage().contains("no sealed forget"), nobody.getMessage());
            assertFalse(
                    nobody.getMessage().contains("carol-CANARY"),
                    "the subject never appears in a message");
            IllegalArgumentException source =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.readmit(
                                            T, ForgetScope.source("doc", "d1"), "consent-renewed"));
            assertTrue(
                    source.getMessage().contains("expected a subject or record ids, got source"),
                    source.getMessage());
            assertThrows(
                    IllegalArgumentException.class,
                    () ->
                            store.readmit(
                                    T,
                                    ForgetScope.subject(SUBJECT),
                                    "asked by alice on the phone"));

            // Held: the forget rests unsealed, and its scope cannot be re-admitted until it seals.
            LegalHold hold = store.placeHold(T, ForgetScope.subject(SUBJECT), "litigation-7");
            ForgetOperation held =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject(SUBJECT),
                                                    "req-8",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.COMPLETED_WITH_EXCEPTION, held.state());
            IllegalStateException unsealed =
                    assertThrows(
                            IllegalStateException.class,
                            () ->
                                    store.readmit(
                                            T, ForgetScope.subject(SUBJECT), "consent-renewed"));
            assertTrue(
                    unsealed.getMessage().contains(held.id())
                            && unsealed.getMessage().contains("COMPLETED_WITH_EXCEPTION"),
                    unsealed.getMessage());
            store.liftHold(hold.id());
            assertEquals(OperationState.SEALED, store.awaitOperation(held.id(), WAIT).state());
            store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed");
            c.upsert(alice("a9", 909));
            // Another tenant's subject of the same name was never forgotten: nothing to re-admit
            // there.
            assertThrows(
                    IllegalArgumentException.class,
                    () ->
                            store.readmit(
                                    "other-tenant",
                                    ForgetScope.subject(SUBJECT),
                                    "consent-renewed"));
            assertTrue(store.verifyLedger().ok());
        }
    }

    /**
     * Forgotten, re-admitted, written, forgotten again: the second forget fences her again and
     * removes what she wrote in between; a second re-admission lifts only the second forget's
     * fences (the first's are lifted already), and the next open keeps only what came after it.
     */
    @Test
    void aSubjectForgottenAgainAfterHerReadmissionIsFencedAgainUntilReadmittedAgain()
            throws Exception {
        ForgetOperation second;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            ForgetOperation first = forgetAlice(store, "req-9");
            store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed");
            c.upsert(alice("a0", 930));
            second = forgetAlice(store, "req-10");
            assertEquals(
                    1,
                    second.totalForgotten(),
                    "only what she wrote after the re-admission was left");
            assertTrue(c.get("a0").isEmpty());
            assertThrows(ForgottenScopeException.class, () -> c.upsert(alice("a0", 931)));
            Readmission again = store.readmit(T, ForgetScope.subject(SUBJECT), "consent-renewed-2");
            assertEquals(List.of(second.id()), again.forgetOperations());
            c.upsert(alice("a0", 932));
            assertTrue(store.evidence().checkReceipt(first.receipt()).ok());
            assertTrue(store.evidence().checkReceipt(second.receipt()).ok());
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            assertEquals(0, store.reconciliation().resurrectedRemoved());
            assertArrayEquals(vector(932), c.get("a0").orElseThrow().vector());
            assertEquals(8, c.size());
            assertEquals(2, readmissionEntries(store).size());
        }
    }
}
