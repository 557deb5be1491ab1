package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureOutcome;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.evidence.EvidenceLedger;
import dev.nepenthe.core.internal.evidence.SigningKey;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12's findings about evidence, each tried as a user or an auditor would: a ledger cut short
 * or damaged on disk, receipts for scopes that matched nothing, surfaces that kept serving, a probe
 * the caller could switch off. Each test has a control that shows its check can fail.
 */
class EvidenceTrustTest {

    @TempDir Path tmp;

    static final int DIM = 16;
    static final Duration WAIT = Duration.ofSeconds(60);

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    private Path ledgerFile() {
        return tmp.resolve("keys").resolve("evidence").resolve("ledger.bin");
    }

    static float[] vector(long seed) {
        Random r = new Random(seed);
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    /** Alice (2 records) and bob (2) in the default tenant of collection "notes". */
    static VectorCollection populate(Nepenthe store) {
        VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            batch.add(
                    VectorRecord.builder("a" + i)
                            .subject("alice")
                            .vector(vector(100 + i))
                            .text("alice " + i)
                            .build());
            batch.add(
                    VectorRecord.builder("b" + i)
                            .subject("bob")
                            .vector(vector(200 + i))
                            .text("bob " + i)
                            .build());
        }
        c.upsertAll(batch);
        return c;
    }

    static ForgetRequest forget(String subject, String key) {
        return ForgetRequest.of(ForgetScope.subject(subject), key, "gdpr-art17");
    }

    /**
     * Offset of the last entry of a ledger file (each entry framed by a 4-byte length and a 4-byte
     * CRC).
     */
    static int lastEntryStart(byte[] ledger) {
        ByteBuffer b = ByteBuffer.wrap(ledger);
        int pos = 4 + 2 + b.getShort(4) + 4;
        int last = -1;
        while (pos < ledger.length) {
            last = pos;
            pos += 8 + b.getInt(pos);
        }
        return last;
    }

    // ---- 1. a truncated ledger -----------------------------------------------------------------

    @Test
    void aLedgerCutShortAfterAReceiptWasIssuedIsNamedAtOpenAndOfflineAndStopsNewForgets()
            throws Exception {
        String receipt;
        String pem;
        LedgerHead head;
        try (Nepenthe store = open()) {
            populate(store);
            ForgetOperation done =
                    store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            receipt = done.receipt();
            pem = store.publicKeyPem();
            head = store.ledgerHead();
            assertTrue(store.health().ok());
        }
        byte[] whole = Files.readAllBytes(ledgerFile());
        Files.write(ledgerFile(), Arrays.copyOf(whole, lastEntryStart(whole)));
        var key = SigningKey.parsePem(pem);
        // Control: the shorter file is a sound chain on its own; only the anchors show the cut.
        assertTrue(EvidenceLedger.verify(ledgerFile(), key).ok());

        LedgerAudit offline = LedgerAudit.read(ledgerFile(), key);
        LedgerAudit.Check byReceipt = offline.checkReceipt(receipt);
        assertFalse(byReceipt.ok());
        assertTrue(byReceipt.problem().contains("cut short"), byReceipt.problem());
        assertFalse(offline.checkHead(head).ok(), "a witnessed head is missing too");

        try (Nepenthe store = open()) {
            StoreHealth health = store.health();
            assertFalse(health.ok());
            assertFalse(health.forgetsAccepted());
            assertTrue(
                    health.ledgerProblem().contains("ledger.bin")
                            && health.ledgerProblem().contains("entry " + head.seq()),
                    health.ledgerProblem());
            assertFalse(store.verifyLedger().ok());
            IllegalStateException refused =
                    assertThrows(
                            IllegalStateException.class,
                            () -> store.forget(forget("bob", "req-2")));
            assertTrue(
                    refused.getMessage().contains("evidence ledger is damaged"),
                    refused.getMessage());
            // Searches go on.
            VectorCollection c = store.collection("notes");
            assertEquals("b0", c.search(SearchRequest.of(vector(200), 1)).get(0).id());
            assertTrue(c.get("b1").isPresent());
        }
        assertEquals(
                whole.length - lastEntryStart(whole),
                whole.length - Files.size(ledgerFile()),
                "the store appended nothing to the damaged ledger");

        // The operator puts the ledger back: the receipt's entry is there again and forgets go on.
        Files.write(ledgerFile(), whole);
        assertTrue(LedgerAudit.read(ledgerFile(), key).checkReceipt(receipt).ok());
        try (Nepenthe store = open()) {
            assertTrue(store.health().ok(), String.valueOf(store.health().ledgerProblem()));
            ForgetOperation bob =
                    store.awaitOperation(store.forget(forget("bob", "req-2")).id(), WAIT);
            assertEquals(OperationState.SEALED, bob.state(), bob.note());
            assertTrue(store.ledgerHead().seq() > head.seq(), "no sequence number is reused");
            assertTrue(store.verifyLedger().ok());
            assertTrue(store.evidence().sealedEntry(bob.id()).isPresent());
        }
    }

    @Test
    void withNoSoundCopyTheOperatorRestartsTheLedgerKeepingTheDamagedFileAndNamingWhatWasLost()
            throws Exception {
        String aliceOp;
        String aliceReceipt;
        String pem;
        try (Nepenthe store = open()) {
            populate(store);
            ForgetOperation alice =
                    store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
            aliceOp = alice.id();
            aliceReceipt = alice.receipt();
            pem = store.publicKeyPem();
            assertThrows(
                    IllegalStateException.class,
                    () -> store.restartLedger("no-copy"),
                    "a sound ledger is never restarted");
        }
        byte[] whole = Files.readAllBytes(ledgerFile());
        byte[] cut = Arrays.copyOf(whole, lastEntryStart(whole));
        Files.write(ledgerFile(), cut);
        LedgerHead fresh;
        try (Nepenthe store = open()) {
            assertFalse(store.health().ok());
            fresh = store.restartLedger("ledger-lost-no-backup");
            assertTrue(store.health().ok(), String.valueOf(store.health().ledgerProblem()));
            assertEquals(0, fresh.seq());
            String restart = store.evidence().entries().get(0).body();
            assertTrue(
                    restart.contains("\"type\":\"ledger-restart\"")
                            && restart.contains("\"epoch\":1")
                            && restart.contains(
                                    "\"sealedOperationsWithoutEntry\":[\"" + aliceOp + "\"]")
                            && restart.contains("ledger.epoch-0.damaged.bin"),
                    restart);
            ForgetOperation bob =
                    store.awaitOperation(store.forget(forget("bob", "req-2")).id(), WAIT);
            assertEquals(OperationState.SEALED, bob.state(), bob.note());
            assertTrue(bob.receipt().contains("\"ledgerEntry\":{\"epoch\":1,"), bob.receipt());
            assertTrue(store.evidence().checkReceipt(bob.receipt()).ok());
            LedgerHead none = new LedgerHead(-1, store.ledgerHead().hash());
            LedgerAudit.Check nothing = store.evidence().checkSealedEntry(bob.id(), none);
            assertFalse(nothing.ok(), "a head before the first entry names no sealed entry");
            assertTrue(nothing.problem().contains("names no entry"), nothing.problem());
            LedgerAudit.Check old = store.evidence().checkReceipt(aliceReceipt);
            assertFalse(old.ok());
            assertTrue(old.problem().contains("epoch 0"), old.problem());
        }
        Path archived = ledgerFile().resolveSibling("ledger.epoch-0.damaged.bin");
        assertTrue(
                Arrays.equals(cut, Files.readAllBytes(archived)),
                "the damaged file is kept as it was");
        try (Nepenthe store = open()) {
            assertTrue(store.health().ok(), String.valueOf(store.health().ledgerProblem()));
            assertTrue(store.verifyLedger().ok());
        }
        // Putting the old ledger back now is caught: it is of another epoch than the anchor.
        Files.copy(archived, ledgerFile(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (Nepenthe store = open()) {
            assertTrue(
                    store.health().ledgerProblem().contains("epoch"),
                    store.health().ledgerProblem());
        }
        assertTrue(LedgerAudit.read(archived, SigningKey.parsePem(pem)).verification().ok());
    }

    @Test
    void aCrashBetweenTheLedgerAppendAndItsAnchorIsNotDamage() throws Exception {
        String id;
        try (Nepenthe store = open()) {
            populate(store);
            store.testPoints().stopForgetAt("ledger-appended");
            id = store.forget(forget("alice", "req-1")).id();
            store.awaitOperation(id, WAIT);
            // The simulated crash is reported just after the worker leaves the seal, which a waiter
            // may see first: wait for the report.
            long deadline = System.nanoTime() + WAIT.toNanos();
            String note = null;
            while (System.nanoTime() < deadline
                    && (note == null || !note.contains("ledger-appended"))) {
                note = store.operation(id).orElseThrow().note();
                Thread.sleep(10);
            }
            assertTrue(note != null && note.contains("ledger-appended"), note);
        }
        try (Nepenthe store = open()) {
            assertTrue(store.health().ok(), String.valueOf(store.health().ledgerProblem()));
            ForgetOperation done = store.awaitOperation(id, WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            assertTrue(store.verifyLedger().ok());
            assertTrue(store.evidence().checkReceipt(done.receipt()).ok());
        }
    }

    // ---- 8. availability with a damaged ledger
    // ---------------------------------------------------

    @Test
    void oneFlippedByteInTheLedgerStopsForgetsNotSearches() throws Exception {
        String receipt;
        try (Nepenthe store = open()) {
            populate(store);
            receipt =
                    store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT)
                            .receipt();
        }
        byte[] whole = Files.readAllBytes(ledgerFile());
        byte[] flipped = whole.clone();
        int at = lastEntryStart(whole) + 40;
        flipped[at] ^= 0x01;
        Files.write(ledgerFile(), flipped);
        try (Nepenthe store = open()) {
            StoreHealth health = store.health();
            assertFalse(health.forgetsAccepted());
            assertTrue(
                    health.ledgerProblem().contains("ledger.bin")
                            && health.ledgerProblem().contains("checksum"),
                    health.ledgerProblem());
            VectorCollection c = store.collection("notes");
            assertEquals("b1", c.search(SearchRequest.of(vector(201), 1)).get(0).id());
            assertTrue(c.get("a0").isEmpty(), "what was forgotten stays forgotten");
            assertThrows(IllegalStateException.class, () -> store.forget(forget("bob", "req-2")));
            assertThrows(
                    IllegalStateException.class,
                    () ->
                            store.placeHold(
                                    VectorRecord.DEFAULT_TENANT,
                                    ForgetScope.subject("bob"),
                                    "litigation"));
            assertFalse(store.evidence().checkReceipt(receipt).ok());
        }
        Files.write(ledgerFile(), whole);
        try (Nepenthe store = open()) {
            assertTrue(store.health().ok());
            assertNull(store.health().ledgerProblem());
            assertNotNull(store.forget(forget("bob", "req-2")));
        }
    }

    @Test
    void aLedgerChangedWhileTheStoreRunsIsFoundByVerifyLedgerAndStopsAppends() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
            assertTrue(store.verifyLedger().ok());
            byte[] whole = Files.readAllBytes(ledgerFile());
            Files.write(ledgerFile(), Arrays.copyOf(whole, lastEntryStart(whole)));
            LedgerVerification v = store.verifyLedger();
            assertFalse(v.ok());
            assertTrue(v.problem().contains("anchors"), v.problem());
            assertThrows(IllegalStateException.class, () -> store.forget(forget("bob", "req-2")));
        }
    }

    // ---- 2. receipts for nothing
    // -------------------------------------------------------------------

    @Test
    void aForgetThatFindsNothingSaysSoAndNoSurfaceClaimsAPurge() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            ForgetOperation stranger =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    "no-such-tenant",
                                                    ForgetScope.subject("alice"),
                                                    "req-1",
                                                    "gdpr-art17",
                                                    null))
                                    .id(),
                            WAIT);
            ForgetOperation carol =
                    store.awaitOperation(store.forget(forget("carol", "req-2")).id(), WAIT);
            ForgetOperation alice =
                    store.awaitOperation(store.forget(forget("alice", "req-3")).id(), WAIT);
            for (ForgetOperation op : List.of(stranger, carol, alice)) {
                assertEquals(OperationState.SEALED, op.state(), op.note());
                assertNotNull(
                        store.evidence().checkReceipt(op.receipt()),
                        "every outcome is signed and in the ledger");
                assertTrue(store.evidence().checkReceipt(op.receipt()).ok());
            }
            assertEquals(ErasureOutcome.UNKNOWN_TENANT, stranger.outcome());
            assertEquals(ErasureOutcome.NOTHING_FOUND, carol.outcome());
            assertEquals(
                    ErasureOutcome.ERASED,
                    alice.outcome(),
                    "control: a forget that found records says ERASED");
            assertTrue(
                    stranger.receipt().contains("\"outcome\":\"UNKNOWN_TENANT\""),
                    stranger.receipt());
            assertTrue(carol.receipt().contains("\"outcome\":\"NOTHING_FOUND\""), carol.receipt());
            for (ForgetOperation nothing : List.of(stranger, carol)) {
                assertEquals(0, nothing.totalForgotten());
                for (SurfaceOutcome s : nothing.surfaces()) {
                    assertEquals(0, s.purged(), nothing.outcome() + ": " + s);
                }
                SurfaceOutcome keys =
                        nothing.surfaces().stream()
                                .filter(s -> s.surface().equals("keystore"))
                                .findFirst()
                                .orElseThrow();
                assertTrue(keys.residual().contains("no data key"), keys.residual());
                assertFalse(nothing.receipt().contains("keys are destroyed"), nothing.receipt());
            }
            SurfaceOutcome aliceKeys =
                    alice.surfaces().stream()
                            .filter(s -> s.surface().equals("keystore"))
                            .findFirst()
                            .orElseThrow();
            assertEquals(1, aliceKeys.purged(), "control: her one data key was destroyed");
            assertEquals(2, alice.totalForgotten());
        }
    }

    // ---- 4. the probe threshold is the store's policy
    // ------------------------------------------------

    /** A vector at exactly cosine {@code c} to {@code v} (mixing in an orthogonal direction). */
    static float[] atCosine(float[] v, double c, long seed) {
        float[] w = vector(seed);
        double vv = 0, vw = 0;
        for (int i = 0; i < DIM; i++) {
            vv += v[i] * v[i];
            vw += v[i] * w[i];
        }
        double nw = 0;
        for (int i = 0; i < DIM; i++) {
            w[i] -= (float) (vw / vv * v[i]);
            nw += w[i] * w[i];
        }
        double nv = Math.sqrt(vv);
        nw = Math.sqrt(nw);
        float[] out = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            out[i] = (float) (c * v[i] / nv + Math.sqrt(1 - c * c) * w[i] / nw);
        }
        return out;
    }

    @Test
    void aRequestMayTightenTheProbePolicyButNeverLoosenIt() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            // A paraphrase of alice's note, kept under another subject.
            c.upsert(
                    VectorRecord.builder("p")
                            .subject("bob")
                            .vector(atCosine(vector(100), 0.949, 7))
                            .build());
            for (double loose : new double[] {1.0, 0.0, -0.5, 0.9, 0.3}) {
                IllegalArgumentException e =
                        assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        store.forget(
                                                forget("alice", "req-" + loose)
                                                        .withProbeThreshold(loose)));
                assertTrue(
                        e.getMessage().contains("0.5 to 0.85") && e.getMessage().contains("policy"),
                        e.getMessage());
            }
            assertThrows(
                    IllegalArgumentException.class,
                    () -> forget("alice", "req-nan").withProbeThreshold(Double.NaN));
            assertTrue(
                    store.operations(o -> true).isEmpty(),
                    "nothing refused left an operation behind");

            ForgetOperation review =
                    store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
            assertEquals(
                    OperationState.NEEDS_REVIEW,
                    review.state(),
                    "the policy's probe finds the paraphrase");
            assertEquals(List.of("p"), review.suspects().stream().map(s -> s.recordId()).toList());
            ForgetOperation tighter =
                    store.awaitOperation(
                            store.forget(forget("bob", "req-2").withProbeThreshold(0.6)).id(),
                            WAIT);
            assertTrue(
                    store.evidence()
                            .entriesOf(tighter.id())
                            .get(0)
                            .body()
                            .contains("\"probeThreshold\":\"0.6\""));
        }
        // Control: an operator who sets a looser policy (recorded in every entry) lets it seal.
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data2"),
                        StoreOptions.defaults()
                                .withKeystore(tmp.resolve("keys2"))
                                .withProbePolicy(new ProbePolicy(0.99, 0.5)))) {
            VectorCollection c = populate(store);
            c.upsert(
                    VectorRecord.builder("p")
                            .subject("bob")
                            .vector(atCosine(vector(100), 0.949, 7))
                            .build());
            ForgetOperation done =
                    store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state());
            assertTrue(
                    store.evidence()
                            .sealedEntry(done.id())
                            .orElseThrow()
                            .body()
                            .contains("\"probeThreshold\":\"0.99\""));
        }
    }

    // ---- 3. registered surfaces stop serving at the mark and during a hold
    // ---------------------------

    /**
     * A small real query cache over collection "notes": results by query, filtered by the scopes it
     * was told to block, purged of any result naming a forgotten record (unless built not to).
     */
    static final class QueryCache implements ErasureSurface {
        final Map<String, List<String>> entries = new ConcurrentHashMap<>();
        final List<BlockedScope> blocks = new CopyOnWriteArrayList<>();
        final List<String> released = new CopyOnWriteArrayList<>();
        final ErasureClass cls;
        final boolean purges;
        boolean failToBlock;

        QueryCache() {
            this(ErasureClass.PHYSICAL, true);
        }

        QueryCache(ErasureClass cls, boolean purges) {
            this.cls = cls;
            this.purges = purges;
        }

        /** What the cache hands out for a query: its cached ids, less any a live block covers. */
        List<String> serve(String query) {
            return entries.getOrDefault(query, List.of()).stream()
                    .filter(
                            id ->
                                    blocks.stream()
                                            .noneMatch(
                                                    b ->
                                                            b.covers(
                                                                    VectorRecord.DEFAULT_TENANT,
                                                                    "notes",
                                                                    id)))
                    .toList();
        }

        @Override
        public String name() {
            return "cache:query";
        }

        @Override
        public ErasureClass erasureClass() {
            return cls;
        }

        @Override
        public void block(BlockedScope scope) {
            if (failToBlock) {
                throw new IllegalStateException("cache node unreachable");
            }
            blocks.add(scope);
        }

        @Override
        public void release(String operationId) {
            released.add(operationId);
            blocks.removeIf(b -> b.operationId().equals(operationId));
        }

        @Override
        public long purge(ForgottenRecords forgotten) {
            if (!purges) {
                return 0;
            }
            long before = entries.size();
            entries.values()
                    .removeIf(
                            ids ->
                                    forgotten.items().stream()
                                            .anyMatch(i -> ids.contains(i.recordId())));
            return before - entries.size();
        }

        @Override
        public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
            long left =
                    entries.values().stream()
                            .filter(
                                    ids ->
                                            forgotten.items().stream()
                                                    .anyMatch(i -> ids.contains(i.recordId())))
                            .count();
            return new SurfaceOutcome(
                    name(),
                    erasureClass(),
                    purged,
                    entries.size(),
                    left == 0
                            ? List.of()
                            : List.of(left + " cached results name forgotten records"),
                    null);
        }
    }

    private static List<String> ids(List<SearchHit> hits) {
        return hits.stream().map(SearchHit::id).toList();
    }

    @Test
    void aRegisteredSurfaceStopsServingTheScopeWhenForgetReturnsAndThroughALegalHold()
            throws Exception {
        String id;
        String hold;
        List<String> cached;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store);
            QueryCache cache = new QueryCache();
            store.registerSurface(cache);
            cached = ids(c.search(SearchRequest.of(vector(100), 4)));
            cache.entries.put("q", cached);
            assertTrue(
                    cache.serve("q").contains("a0"),
                    "control: the cache serves alice's record before the forget");
            hold =
                    store.placeHold(
                                    VectorRecord.DEFAULT_TENANT,
                                    ForgetScope.subject("alice"),
                                    "litigation")
                            .id();
            ForgetOperation op = store.forget(forget("alice", "req-1"));
            id = op.id();
            assertEquals(OperationState.BLOCKED, op.state());
            assertTrue(
                    cache.serve("q").stream().noneMatch(x -> x.startsWith("a")),
                    "served " + cache.serve("q"));
            assertTrue(
                    cache.serve("q").contains("b0")
                            || cache.serve("q").contains("b1")
                            || cached.size() == 2,
                    "other records are still served");
            assertEquals(
                    OperationState.COMPLETED_WITH_EXCEPTION,
                    store.awaitOperation(id, WAIT).state());
            assertTrue(
                    cache.serve("q").stream().noneMatch(x -> x.startsWith("a")),
                    "held: still blocked");
        }
        try (Nepenthe store = open()) {
            // A cache that comes up after a restart (its entries warmed from elsewhere) blocks on
            // registration.
            QueryCache cache = new QueryCache();
            cache.entries.put("q", cached);
            store.registerSurface(cache);
            assertTrue(
                    cache.serve("q").stream().noneMatch(x -> x.startsWith("a")),
                    "served " + cache.serve("q"));
            store.liftHold(hold);
            ForgetOperation sealed = store.awaitOperation(id, WAIT);
            assertEquals(OperationState.SEALED, sealed.state(), sealed.note());
            assertEquals(List.of(id), cache.released);
            assertTrue(cache.blocks.isEmpty());
            assertTrue(
                    cache.serve("q").isEmpty(), "the purge removed the cached query naming alice");
        }
    }

    @Test
    void aSurfaceThatCannotBlockKeepsTheOperationFromSealing() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            QueryCache cache = new QueryCache();
            cache.failToBlock = true;
            store.registerSurface(cache);
            ForgetOperation op =
                    store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, op.state());
            SurfaceOutcome s =
                    op.surfaces().stream()
                            .filter(o -> o.surface().equals("cache:query"))
                            .findFirst()
                            .orElseThrow();
            assertTrue(s.problems().get(0).contains("did not block"), s.toString());
            assertThrows(
                    IllegalStateException.class, () -> store.override(op.id(), "checked-by-hand"));
        }
    }

    // ---- 5. join keys inside values, and the subject's declared identifiers
    // --------------------------

    private static void joinData(VectorCollection c, String tenant) {
        c.upsertAll(
                List.of(
                        VectorRecord.builder("s1")
                                .tenant(tenant)
                                .subject("u-17")
                                .vector(vector(500))
                                .text("a note")
                                .build(),
                        VectorRecord.builder("x1")
                                .tenant(tenant)
                                .vector(vector(501))
                                .metadata("cc", "u-42; u-17")
                                .build(),
                        VectorRecord.builder("x2")
                                .tenant(tenant)
                                .vector(vector(502))
                                .metadata("author", "Alice Liddell")
                                .build(),
                        VectorRecord.builder("x3")
                                .tenant(tenant)
                                .vector(vector(503))
                                .text("Reach her on +1 (555) 123-4567 about the rabbit.")
                                .build(),
                        VectorRecord.builder("x4")
                                .tenant(tenant)
                                .vector(vector(504))
                                .text("Alice went home. Ms Liddell stayed.")
                                .metadata("related", "[s0, s1, s2]")
                                .build(),
                        VectorRecord.builder("x5")
                                .tenant(tenant)
                                .vector(vector(505))
                                .metadata("phone", "555 123 9999")
                                .build()));
    }

    @Test
    void joinKeysAreFoundInsideListValuesAndDeclaredIdentifiersInMetadataAndText()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
            joinData(c, "t1");
            joinData(c, "t2");
            ForgetOperation plain =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    "t1",
                                                    ForgetScope.subject("u-17"),
                                                    "req-1",
                                                    "gdpr-art17",
                                                    null))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, plain.state());
            assertEquals(
                    List.of("x1:join-key:metadata key cc", "x4:join-key:metadata key related"),
                    describe(plain));

            ForgetOperation declared =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                            "t2",
                                                            ForgetScope.subject("u-17"),
                                                            "req-2",
                                                            "gdpr-art17",
                                                            null)
                                                    .withIdentifiers(
                                                            List.of(
                                                                    "Alice Liddell",
                                                                    "555-123-4567")))
                                    .id(),
                            WAIT);
            assertEquals(
                    List.of(
                            "x1:join-key:metadata key cc",
                            "x2:declared-identifier:metadata key author",
                            "x3:declared-identifier:text",
                            "x4:join-key:metadata key related"),
                    describe(declared));
            // The identifiers are sealed with the operation's key: no file of the store holds them
            // in clear.
            String entry = store.evidence().entriesOf(declared.id()).get(0).body();
            assertTrue(
                    entry.contains("\"declaredIdentifiers\":2") && !entry.contains("Liddell"),
                    entry);
            Path planted = tmp.resolve("planted.txt");
            Files.writeString(planted, "Alice Liddell");
            byte[] name = "Liddell".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertEquals(
                    List.of(planted),
                    dev.nepenthe.core.internal.io.ForensicScan.filesContaining(
                            List.of(tmp), List.of(name)),
                    "only the planted control holds the name");
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> forget("u-17", "req-3").withIdentifiers(List.of("x")));
    }

    private static List<String> describe(ForgetOperation op) {
        return op.suspects().stream()
                .map(s -> s.recordId() + ":" + s.reason() + ":" + s.relatedTo())
                .sorted()
                .toList();
    }

    // ---- 7. keystore backups
    // -------------------------------------------------------------------------

    private static void copyTree(Path from, Path to) throws IOException {
        try (var files = Files.walk(from)) {
            for (Path src : files.toList()) {
                Path dst = to.resolve(from.relativize(src).toString());
                if (Files.isDirectory(src)) {
                    Files.createDirectories(dst);
                } else {
                    Files.copy(src, dst);
                }
            }
        }
    }

    @Test
    void aKeystoreCopyOlderThanAWitnessedLedgerHeadIsRefusedAtOpen() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            store.awaitOperation(store.forget(forget("bob", "req-1")).id(), WAIT);
        }
        copyTree(tmp.resolve("keys"), tmp.resolve("keys-old"));
        copyTree(tmp.resolve("data"), tmp.resolve("data-old"));
        LedgerHead witnessed;
        try (Nepenthe store = open()) {
            assertEquals(List.of(VectorRecord.DEFAULT_TENANT), store.tenants());
            ForgetOperation alice =
                    store.awaitOperation(store.forget(forget("alice", "req-2")).id(), WAIT);
            assertEquals(OperationState.SEALED, alice.state());
            witnessed = store.ledgerHead();
            assertEquals(
                    List.of(), store.tenants(), "alice and bob were the tenant's only records");
        }
        StoreOptions old = StoreOptions.defaults().withKeystore(tmp.resolve("keys-old"));
        IllegalStateException refused =
                assertThrows(
                        IllegalStateException.class,
                        () ->
                                Nepenthe.open(
                                        tmp.resolve("data-old"),
                                        old.withLedgerWitness(
                                                LedgerHead.parse(witnessed.toString()))));
        assertTrue(
                refused.getMessage().contains("older than the witness")
                        && refused.getMessage().contains("keys-old"),
                refused.getMessage());
        // Control, and the limit docs/STORAGE.md states: without a witness, copies of both folders
        // taken before the forget are a consistent past store, and serve her again.
        try (Nepenthe past = Nepenthe.open(tmp.resolve("data-old"), old)) {
            assertTrue(past.collection("notes").get("a0").isPresent());
        }
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults()
                                .withKeystore(tmp.resolve("keys"))
                                .withLedgerWitness(witnessed))) {
            assertTrue(store.collection("notes").get("a0").isEmpty());
            assertTrue(store.health().ok());
        }
    }

    @Test
    void restoreWithOptionsOpensTheSnapshotAgainstItsKeystoreWithLaterForgetsApplied()
            throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            store.snapshot(tmp.resolve("snap"));
            store.awaitOperation(store.forget(forget("alice", "req-1")).id(), WAIT);
        }
        try (Nepenthe restored =
                Nepenthe.restore(
                        tmp.resolve("snap"),
                        tmp.resolve("restored"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = restored.collection("notes");
            assertTrue(
                    c.get("a0").isEmpty() && c.get("a1").isEmpty(),
                    "the forget after the snapshot holds");
            assertTrue(c.get("b0").isPresent());
            assertEquals(List.of(VectorRecord.DEFAULT_TENANT), restored.tenants());
        }
    }
}
