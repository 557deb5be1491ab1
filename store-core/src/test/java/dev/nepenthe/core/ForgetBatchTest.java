package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.ErasureOutcome;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.forget.BatchQueue;
import dev.nepenthe.core.internal.forget.SharedPasses;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Forgets that arrive together share one cleanup and one structure check per collection, and each
 * still seals on its own proof with a receipt of its own scope. To make a batch for sure, a test
 * holds the worker inside the first operation's release ({@link Gate}) while it queues the
 * requests, then lets it go: the worker then finds them all waiting. The counting index ({@link
 * CountingIndex}) is the witness of how many removals and removal proofs ran.
 */
class ForgetBatchTest {

    @TempDir Path tmp;

    private static final int DIM = 64;
    private static final Duration WAIT = Duration.ofSeconds(120);

    /**
     * The receipt's own count (keys are sorted: "records" then "residual"; a shared check's
     * "records" precedes "surface").
     */
    private static final Pattern RECORDS = Pattern.compile("\"records\":(\\d+),\"residual\":");

    private static final Pattern BATCH_ID =
            Pattern.compile("\"batch\":\\{\"id\":\"(fbt-[0-9a-f]+)\"");

    @BeforeEach
    void resetCounters() {
        CountingIndex.reset();
    }

    @AfterEach
    void clearHooks() {
        CountingIndex.reset();
    }

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    private static CollectionSpec notes() {
        return new CollectionSpec(
                        "notes", DIM, Metric.COSINE, IndexSpec.of(CountingIndex.KIND, Map.of()))
                .withTextIndex("whitespace");
    }

    /**
     * Random directions in 64-d: two of them sit near cosine 0 (0.85 is about seven deviations
     * off).
     */
    private static float[] vector(Random rnd) {
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }

    /**
     * A unit vector at cosine {@code c} with {@code v}: v's direction mixed with an orthogonal
     * random one.
     */
    private static float[] atCosine(float[] v, double c, Random rnd) {
        float[] w = vector(rnd);
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
        float[] out = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            out[i] =
                    (float)
                            (c * v[i] / Math.sqrt(vv)
                                    + Math.sqrt(1 - c * c) * w[i] / Math.sqrt(nw));
        }
        return out;
    }

    /** A text of words no other record uses, so no survivor shares a forgotten text's terms. */
    private static String text(String id) {
        return "note " + id + " about " + id + "x and " + id + "y";
    }

    /**
     * Subjects {@code prefix0..} with {@code sizes[i]} records each; returns the ids by subject.
     */
    private static Map<String, List<String>> subjects(
            VectorCollection c, String tenant, String prefix, int[] sizes, Random rnd) {
        Map<String, List<String>> bySubject = new LinkedHashMap<>();
        List<VectorRecord> batch = new ArrayList<>();
        for (int s = 0; s < sizes.length; s++) {
            String subject = prefix + s;
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < sizes[s]; i++) {
                String id = subject + "-r" + i;
                ids.add(id);
                batch.add(
                        VectorRecord.builder(id)
                                .tenant(tenant)
                                .subject(subject)
                                .vector(vector(rnd))
                                .text(text(id))
                                .build());
            }
            bySubject.put(subject, ids);
        }
        c.upsertAll(batch);
        return bySubject;
    }

    private static ForgetRequest forgetSubject(String tenant, String subject) {
        return new ForgetRequest(
                tenant,
                ForgetScope.subject(subject),
                "req-" + tenant + "-" + subject,
                "gdpr-art17",
                null);
    }

    /**
     * A registered surface that holds the worker inside the first release it is asked for (the
     * first operation to seal) until the test opens it, so that requests queued meanwhile are all
     * waiting when the worker takes its next batch. Otherwise it holds nothing.
     */
    static final class Gate implements ErasureSurface {
        final CountDownLatch holding = new CountDownLatch(1);
        final CountDownLatch open = new CountDownLatch(1);
        private final AtomicBoolean first = new AtomicBoolean(true);

        @Override
        public String name() {
            return "test:gate";
        }

        @Override
        public ErasureClass erasureClass() {
            return ErasureClass.PHYSICAL;
        }

        @Override
        public void block(BlockedScope scope) {}

        @Override
        public long purge(ForgottenRecords forgotten) {
            return 0;
        }

        @Override
        public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
            return new SurfaceOutcome(name(), ErasureClass.PHYSICAL, 0, 0, List.of(), null);
        }

        @Override
        public void release(String operationId) {
            if (first.compareAndSet(true, false)) {
                holding.countDown();
                try {
                    open.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Forgets a subject of its own and holds the worker in its release (see {@link Gate}): requests
     * made until {@code gate.open} counts down wait for the worker together.
     */
    private static Gate holdTheWorker(Nepenthe store, VectorCollection c) throws Exception {
        Gate gate = new Gate();
        store.registerSurface(gate);
        c.upsert(
                VectorRecord.builder("gate-r0")
                        .subject("gate")
                        .vector(vector(new Random(-1)))
                        .build());
        store.forget(ForgetRequest.of(ForgetScope.subject("gate"), "req-gate", "gdpr-art17"));
        assertTrue(
                gate.holding.await(60, TimeUnit.SECONDS),
                "the first forget never reached its release");
        return gate;
    }

    private static int receiptRecords(String receiptJson) {
        Matcher m = RECORDS.matcher(receiptJson);
        assertTrue(m.find(), receiptJson);
        return Integer.parseInt(m.group(1));
    }

    private static String batchOf(String receiptJson) {
        Matcher m = BATCH_ID.matcher(receiptJson);
        return m.find() ? m.group(1) : null;
    }

    /**
     * The receipt is signed, its ledger entry is there and is the operation's only one, and it
     * claims exactly the operation's own records; returns the receipt's JSON.
     */
    private static String assertOwnReceipt(
            Nepenthe store, ForgetOperation done, int records, PublicKey key) throws IOException {
        assertEquals(OperationState.SEALED, done.state(), done.id() + ": " + done.note());
        String json = Receipt.verify(done.receipt(), key);
        assertNotNull(json, done.id() + ": receipt signature");
        assertTrue(json.contains("\"operation\":\"" + done.id() + "\""), json);
        assertEquals(records, receiptRecords(json), done.id() + ": records claimed");
        assertEquals(records, done.totalForgotten(), done.id());
        LedgerAudit audit = store.evidence();
        assertTrue(
                audit.checkReceipt(done.receipt()).ok(),
                audit.checkReceipt(done.receipt()).toString());
        List<LedgerEntry> sealed =
                audit.entriesOf(done.id()).stream()
                        .filter(e -> LedgerAudit.isSealed(e.body()))
                        .toList();
        assertEquals(1, sealed.size(), done.id() + ": one sealed entry");
        assertTrue(
                sealed.get(0).body().contains("\"records\":" + records + ","),
                sealed.get(0).body());
        if (records > 0) {
            assertEquals(ErasureOutcome.ERASED, done.outcome(), done.id());
        }
        return json;
    }

    private static SurfaceOutcome surface(ForgetOperation op, String prefix) {
        return op.surfaces().stream()
                .filter(s -> s.surface().startsWith(prefix))
                .findFirst()
                .orElseThrow(
                        () ->
                                new AssertionError(
                                        op.id()
                                                + " has no surface "
                                                + prefix
                                                + ": "
                                                + op.surfaces()));
    }

    @Test
    void forgetsQueuedTogetherShareOneCleanupAndOneCheckAndEachSealsOnItsOwnScope()
            throws Exception {
        Random rnd = new Random(11);
        int[] sizes = new int[30];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = 1 + i % 4;
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            Map<String, List<String>> subjects =
                    subjects(c, VectorRecord.DEFAULT_TENANT, "s", sizes, rnd);
            subjects(c, VectorRecord.DEFAULT_TENANT, "keep", new int[] {5, 5, 5}, rnd);
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            long removalsBefore = SharedPasses.removals();
            long checksBefore = SharedPasses.checks();
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String s : subjects.keySet()) {
                opOf.put(s, store.forget(forgetSubject(VectorRecord.DEFAULT_TENANT, s)).id());
            }
            gate.open.countDown();
            Set<String> batches = new HashSet<>();
            int total = 0;
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                int mine = subjects.get(e.getKey()).size();
                total += mine;
                ForgetOperation done = store.awaitOperation(e.getValue(), WAIT);
                String json = assertOwnReceipt(store, done, mine, key);
                assertEquals(Map.of("notes", mine), done.recordsForgotten());
                // Counts are its own: the index surface purged and checked its own records (the
                // checker's work over the whole batch is cited apart), the storage its own.
                SurfaceOutcome index = surface(done, "collection:notes/index:");
                assertEquals(mine, index.purged(), index.toString());
                assertEquals(mine, index.checked(), index.toString());
                assertEquals(mine, surface(done, "collection:notes/storage").purged());
                assertEquals(mine, surface(done, "collection:notes/text").purged());
                assertTrue(json.contains("\"sharedChecks\":[{\"checked\":"), json);
                assertTrue(
                        json.contains(
                                "\"operations\":30,\"records\":"
                                        + Arrays.stream(sizes).sum()
                                        + ",\"surface\":\"collection:notes/index:counting\""),
                        json);
                batches.add(batchOf(json));
                for (String id : subjects.get(e.getKey())) {
                    assertTrue(c.get(id).isEmpty(), id);
                }
            }
            assertEquals(Arrays.stream(sizes).sum(), total);
            assertEquals(
                    1,
                    batches.size(),
                    "every receipt cites the same verification pass: " + batches);
            // The witness: one removal and one proof for the gate's forget, one each for the
            // thirty.
            int all = Arrays.stream(sizes).sum();
            assertEquals(List.of(1, all), CountingIndex.REMOVALS);
            assertEquals(List.of(1, all), CountingIndex.PROOFS);
            assertEquals(1, SharedPasses.removals() - removalsBefore);
            assertEquals(1, SharedPasses.checks() - checksBefore);
            assertEquals(15, c.size(), "the three kept subjects");
            for (VectorRecord r :
                    List.of(c.get("keep0-r0").orElseThrow(), c.get("keep2-r4").orElseThrow())) {
                assertEquals(
                        List.of(r.id()),
                        c.search(SearchRequest.keyword(r.id() + "x", 1)).stream()
                                .map(SearchHit::id)
                                .toList(),
                        "the text index still finds a survivor");
            }
            assertTrue(
                    c.verifyIntegrity().values().stream().allMatch(r -> r.isClean()),
                    c.verifyIntegrity().toString());
            assertTrue(store.verifyLedger().ok());
        }
        // Nothing of the forgotten texts anywhere in the files.
        List<byte[]> needles = new ArrayList<>();
        for (int s = 0; s < 30; s++) {
            needles.add(("s" + s + "-r0x").getBytes(StandardCharsets.UTF_8));
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(tmp.resolve("data"), tmp.resolve("keys")), needles));
    }

    @Test
    void aSuspectInOneScopeSendsThatOperationToReviewAndTheOthersStillSeal() throws Exception {
        Random rnd = new Random(12);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            Map<String, List<String>> subjects =
                    subjects(
                            c, VectorRecord.DEFAULT_TENANT, "s", new int[] {2, 2, 2, 2, 2, 2}, rnd);
            // A paraphrase of s3's first note stored as a record about nobody: cosine 0.9.
            float[] s3 = c.get("s3-r0").orElseThrow().vector();
            c.upsert(VectorRecord.builder("orphan").vector(atCosine(s3, 0.9, rnd)).build());
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String s : subjects.keySet()) {
                opOf.put(s, store.forget(forgetSubject(VectorRecord.DEFAULT_TENANT, s)).id());
            }
            gate.open.countDown();
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                ForgetOperation done = store.awaitOperation(e.getValue(), WAIT);
                if (e.getKey().equals("s3")) {
                    assertEquals(OperationState.NEEDS_REVIEW, done.state(), done.note());
                    assertNull(done.receipt());
                    assertEquals(
                            List.of("orphan"),
                            done.suspects().stream().map(Suspect::recordId).toList());
                    assertEquals("s3-r0", done.suspects().get(0).relatedTo());
                    assertTrue(
                            done.surfaces().stream().allMatch(SurfaceOutcome::clean),
                            done.surfaces().toString());
                } else {
                    assertOwnReceipt(store, done, 2, key);
                    assertEquals(List.of(), done.suspects(), e.getKey());
                }
            }
            assertEquals(List.of(1, 12), CountingIndex.REMOVALS, "the six shared one removal");
            // The operator forgets the paraphrase too and re-verifies: now it seals, on its own
            // scope.
            ForgetOperation more =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.records("orphan"),
                                                    "req-orphan",
                                                    "residue"))
                                    .id(),
                            WAIT);
            assertOwnReceipt(store, more, 1, key);
            store.reverify(opOf.get("s3"));
            assertOwnReceipt(store, store.awaitOperation(opOf.get("s3"), WAIT), 2, key);
        }
    }

    @Test
    void aSharedCheckThatFailsSealsNoneOfTheOperationsItCoveredUntilTheyAreReverified()
            throws Exception {
        Random rnd = new Random(13);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            Map<String, List<String>> subjects =
                    subjects(
                            c,
                            VectorRecord.DEFAULT_TENANT,
                            "s",
                            new int[] {1, 2, 3, 1, 2, 3, 1, 2},
                            rnd);
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            CountingIndex.failProofs = true; // the gate's forget verified already
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String s : subjects.keySet()) {
                opOf.put(s, store.forget(forgetSubject(VectorRecord.DEFAULT_TENANT, s)).id());
            }
            gate.open.countDown();
            for (String id : opOf.values()) {
                ForgetOperation review = store.awaitOperation(id, WAIT);
                assertEquals(OperationState.NEEDS_REVIEW, review.state(), review.note());
                assertNull(review.receipt());
                SurfaceOutcome index = surface(review, "collection:notes/index:");
                assertFalse(index.clean());
                assertTrue(
                        index.problems()
                                .get(0)
                                .startsWith("integrity checker (a check shared by 8 operations)"),
                        index.problems().toString());
                // Its own proofs held: only the shared check failed.
                assertTrue(surface(review, "collection:notes/storage").clean());
                // The review is in the ledger, citing the failed check.
                List<LedgerEntry> entries = store.evidence().entriesOf(id);
                assertEquals(1, entries.size());
                assertTrue(entries.get(0).body().contains("\"event\":\"needs-review\""));
                assertTrue(
                        entries.get(0).body().contains("\"clean\":false,\"operations\":8"),
                        entries.get(0).body());
            }
            assertEquals(List.of(1, 15), CountingIndex.PROOFS);
            CountingIndex.failProofs = false;
            for (String id : opOf.values()) {
                store.reverify(id);
            }
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                assertOwnReceipt(
                        store,
                        store.awaitOperation(e.getValue(), WAIT),
                        subjects.get(e.getKey()).size(),
                        key);
            }
            assertTrue(store.verifyLedger().ok());
        }
    }

    /**
     * A surface that cannot prove its purge of one record: only the operation that forgot it may be
     * held back.
     */
    static final class StubbornSurface implements ErasureSurface {
        private final String record;

        StubbornSurface(String record) {
            this.record = record;
        }

        @Override
        public String name() {
            return "test:stubborn";
        }

        @Override
        public ErasureClass erasureClass() {
            return ErasureClass.PHYSICAL;
        }

        @Override
        public void block(BlockedScope scope) {}

        @Override
        public long purge(ForgottenRecords forgotten) {
            return 0;
        }

        @Override
        public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
            boolean mine = forgotten.items().stream().anyMatch(i -> i.recordId().equals(record));
            return new SurfaceOutcome(
                    name(),
                    ErasureClass.PHYSICAL,
                    0,
                    forgotten.items().size(),
                    mine ? List.of("1 entry still cached") : List.of(),
                    null);
        }

        @Override
        public void release(String operationId) {}
    }

    @Test
    void aSurfaceThatCannotProveOneOperationsPurgeHoldsBackThatOperationOnly() throws Exception {
        Random rnd = new Random(14);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            Map<String, List<String>> subjects =
                    subjects(c, VectorRecord.DEFAULT_TENANT, "s", new int[] {1, 1, 1, 1, 1}, rnd);
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            store.registerSurface(new StubbornSurface("s2-r0"));
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String s : subjects.keySet()) {
                opOf.put(s, store.forget(forgetSubject(VectorRecord.DEFAULT_TENANT, s)).id());
            }
            gate.open.countDown();
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                ForgetOperation done = store.awaitOperation(e.getValue(), WAIT);
                if (e.getKey().equals("s2")) {
                    assertEquals(OperationState.NEEDS_REVIEW, done.state());
                    assertFalse(surface(done, "test:stubborn").clean());
                } else {
                    assertOwnReceipt(store, done, 1, key);
                    assertEquals(
                            1,
                            surface(done, "test:stubborn").checked(),
                            "the surface was asked about its records only");
                }
            }
            assertEquals(List.of(1, 5), CountingIndex.REMOVALS);
        }
    }

    @Test
    void aBatchIsBoundedByOperationsAndByRecordsAndTheOldestAlwaysGoes() throws Exception {
        Random rnd = new Random(15);
        int many = BatchQueue.MAX_OPERATIONS + 6;
        int big = BatchQueue.MAX_RECORDS + 100;
        int half = BatchQueue.MAX_RECORDS / 2 + 88;
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(
                            new CollectionSpec(
                                    "notes",
                                    DIM,
                                    Metric.COSINE,
                                    IndexSpec.of(CountingIndex.KIND, Map.of())));
            int[] ones = new int[many];
            Arrays.fill(ones, 1);
            Map<String, List<String>> sizes =
                    new HashMap<>(subjects(c, VectorRecord.DEFAULT_TENANT, "one", ones, rnd));
            sizes.putAll(
                    subjects(
                            c,
                            VectorRecord.DEFAULT_TENANT,
                            "big",
                            new int[] {big, half, half},
                            rnd));
            sizes.putAll(
                    subjects(c, VectorRecord.DEFAULT_TENANT, "late", new int[] {1, 1, 1}, rnd));
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            List<String> order = new ArrayList<>();
            for (int i = 0; i < many; i++) {
                order.add("one" + i);
            }
            order.addAll(List.of("big0", "late0", "late1", "big1", "big2", "late2"));
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String s : order) {
                opOf.put(s, store.forget(forgetSubject(VectorRecord.DEFAULT_TENANT, s)).id());
            }
            gate.open.countDown();
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                assertOwnReceipt(
                        store,
                        store.awaitOperation(e.getValue(), WAIT),
                        sizes.get(e.getKey()).size(),
                        key);
            }
            // What each removal took, oldest first:
            List<Integer> expected =
                    List.of(
                            1, // the gate's forget
                            BatchQueue.MAX_OPERATIONS, // a batch takes at most this many operations
                            6, // the other six ones; big0 would pass the record bound, so it waits
                            big, // big0 is the oldest now: it goes, alone although over the bound
                            2 + half, // late0, late1, big1; big2 would pass the bound and
                            // waits with late2
                            half + 1); // big2 and late2
            assertEquals(expected, CountingIndex.REMOVALS);
        }
    }

    @Test
    void aBatchNeverJoinsTwoTenantsOrTwoErasureLevels() throws Exception {
        Random rnd = new Random(16);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            Map<String, List<String>> t1 = subjects(c, "t1", "s", new int[] {1, 2, 3}, rnd);
            Map<String, List<String>> t2 = subjects(c, "t2", "s", new int[] {2, 2}, rnd);
            subjects(c, "t1", "rebuild", new int[] {4}, rnd);
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            List<String[]> order =
                    List.of(
                            new String[] {"t1", "s0"},
                            new String[] {"t2", "s0"},
                            new String[] {"t1", "s1"},
                            new String[] {"t2", "s1"},
                            new String[] {"t1", "rebuild0"},
                            new String[] {"t1", "s2"});
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String[] ts : order) {
                ForgetRequest r = forgetSubject(ts[0], ts[1]);
                if (ts[1].startsWith("rebuild")) {
                    r = r.withLevel(ErasureLevel.REBUILD);
                }
                opOf.put(ts[0] + "/" + ts[1], store.forget(r).id());
            }
            gate.open.countDown();
            Map<String, Set<String>> batchesByTenant = new HashMap<>();
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                String[] ts = e.getKey().split("/");
                int mine =
                        ts[1].startsWith("rebuild")
                                ? 4
                                : (ts[0].equals("t1") ? t1 : t2).get(ts[1]).size();
                String json =
                        assertOwnReceipt(
                                store, store.awaitOperation(e.getValue(), WAIT), mine, key);
                String batch = batchOf(json);
                if (!ts[1].startsWith("rebuild")) {
                    assertNotNull(batch, e.getKey() + ": " + json);
                    batchesByTenant.computeIfAbsent(ts[0], k -> new TreeSet<>()).add(batch);
                } else {
                    assertNull(batch, "the REBUILD forget went alone");
                    assertTrue(json.contains("index rebuilt from the surviving records"), json);
                }
            }
            assertEquals(1, batchesByTenant.get("t1").size());
            assertEquals(1, batchesByTenant.get("t2").size());
            assertFalse(batchesByTenant.get("t1").equals(batchesByTenant.get("t2")));
            // The gate; t1's three REPAIR forgets; t2's two; t1's REBUILD forget.
            assertEquals(List.of(1, 6, 4, 4), CountingIndex.REMOVALS);
        }
    }

    /**
     * Issue 47: one tenant's failed shared check holds back that tenant's forgets only. The first
     * structure check after the gate (t1's batch, the oldest) fails; t2's forgets, queued with
     * them, seal on a check of their own, and no receipt or ledger entry of either tenant cites the
     * other's operations, records or batch.
     */
    @Test
    void aSharedCheckThatFailsForOneTenantHoldsBackNoneOfAnotherTenantsForgets() throws Exception {
        Random rnd = new Random(18);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            Map<String, List<String>> t1 = subjects(c, "t1", "s", new int[] {1, 2, 3}, rnd);
            Map<String, List<String>> t2 = subjects(c, "t2", "s", new int[] {2, 3}, rnd);
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            Gate gate = holdTheWorker(store, c);
            CountingIndex.failNextProofs.set(1); // the gate's forget verified already
            Map<String, String> opOf = new LinkedHashMap<>();
            for (String s : t1.keySet()) {
                opOf.put("t1/" + s, store.forget(forgetSubject("t1", s)).id());
            }
            for (String s : t2.keySet()) {
                opOf.put("t2/" + s, store.forget(forgetSubject("t2", s)).id());
            }
            gate.open.countDown();
            Set<String> t2Batches = new HashSet<>();
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                ForgetOperation done = store.awaitOperation(e.getValue(), WAIT);
                String subject = e.getKey().substring(3);
                if (e.getKey().startsWith("t1/")) {
                    assertEquals(
                            OperationState.NEEDS_REVIEW,
                            done.state(),
                            e.getKey() + ": " + done.note());
                    String entry = store.evidence().entriesOf(done.id()).get(0).body();
                    assertTrue(
                            entry.contains("\"clean\":false,\"operations\":3,\"records\":6,"),
                            entry);
                } else {
                    String json = assertOwnReceipt(store, done, t2.get(subject).size(), key);
                    // The shared check it cites covered t2's two operations and five records, no
                    // more.
                    assertTrue(
                            json.contains("\"clean\":true,\"operations\":2,\"records\":5,"), json);
                    assertFalse(json.contains("\"operations\":3"), json);
                    t2Batches.add(batchOf(json));
                }
            }
            assertEquals(1, t2Batches.size(), t2Batches.toString());
            for (String id : opOf.values()) {
                ForgetOperation op = store.operation(id).orElseThrow();
                if (op.tenant().equals("t1")) {
                    for (LedgerEntry en : store.evidence().entriesOf(id)) {
                        assertFalse(
                                t2Batches.stream().anyMatch(en.body()::contains),
                                "t1 cites t2's batch: " + en.body());
                    }
                }
            }
            // t1's forgets, re-verified with a check that holds, seal on their own scopes.
            for (String id : opOf.values()) {
                if (store.operation(id).orElseThrow().state() == OperationState.NEEDS_REVIEW) {
                    store.reverify(id);
                }
            }
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                if (e.getKey().startsWith("t1/")) {
                    assertOwnReceipt(
                            store,
                            store.awaitOperation(e.getValue(), WAIT),
                            t1.get(e.getKey().substring(3)).size(),
                            key);
                }
            }
            assertTrue(store.verifyLedger().ok());
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "cleanup-before-delete",
                "cleanup-after-delete",
                "cleanup-recorded",
                "verify-done",
                "batch-sealed-partway",
                "after-key-destroyed",
                "ledger-appended",
                "sealed-before-key"
            })
    void aCrashInTheMiddleOfABatchResumesEveryOperationToItsOwnReceipt(String point)
            throws Exception {
        Random rnd = new Random(17);
        Map<String, List<String>> subjects;
        Map<String, String> opOf = new LinkedHashMap<>();
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(notes());
            subjects =
                    subjects(
                            c, VectorRecord.DEFAULT_TENANT, "s", new int[] {1, 3, 2, 1, 2, 3}, rnd);
            Gate gate = holdTheWorker(store, c);
            for (String s : subjects.keySet()) {
                opOf.put(s, store.forget(forgetSubject(VectorRecord.DEFAULT_TENANT, s)).id());
            }
            store.testPoints().stopForgetAt(point);
            gate.open.countDown();
            awaitCrash(store, opOf.values(), point);
            for (List<String> ids : subjects.values()) {
                for (String id : ids) {
                    assertTrue(
                            c.get(id).isEmpty(), point + ": " + id + " readable after the crash");
                }
            }
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            for (Map.Entry<String, String> e : opOf.entrySet()) {
                ForgetOperation done = store.awaitOperation(e.getValue(), WAIT);
                assertOwnReceipt(store, done, subjects.get(e.getKey()).size(), key);
                for (String id : subjects.get(e.getKey())) {
                    assertTrue(c.get(id).isEmpty(), point + ": " + id + " came back");
                }
            }
            assertEquals(0, c.size(), point);
            assertTrue(store.verifyLedger().ok(), point);
            assertEquals(
                    opOf.size() + 1,
                    store.evidence().entries().stream()
                            .filter(en -> LedgerAudit.isSealed(en.body()))
                            .count(),
                    point + ": one sealed entry per operation");
        }
        List<byte[]> needles = new ArrayList<>();
        subjects.values()
                .forEach(
                        ids ->
                                ids.forEach(
                                        id ->
                                                needles.add(
                                                        (id + "y")
                                                                .getBytes(
                                                                        StandardCharsets.UTF_8))));
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(tmp.resolve("data"), tmp.resolve("keys")), needles),
                point);
    }

    /**
     * Waits until some operation reports the simulated crash (the worker then takes nothing more).
     */
    private static void awaitCrash(Nepenthe store, Collection<String> ids, String point)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (String id : ids) {
                String note = store.operation(id).orElseThrow().note();
                if (note != null && note.contains("simulated crash at " + point)) {
                    return;
                }
            }
            Thread.sleep(10);
        }
        fail("no operation reported the crash at " + point);
    }

    /**
     * Random queues of requests whose scopes overlap (a subject, and record ids that name other
     * subjects' records, records derived from them, and ids that do not exist), all waiting
     * together, sometimes with a crash inside the batch: each operation's receipt claims what it
     * would have claimed had the requests run one after the other in the order they came (a record
     * two scopes name is the older request's), and the survivors are exactly the others.
     */
    @Test
    void overlappingRequestsQueuedTogetherClaimWhatTheyWouldOneAfterTheOther() throws Exception {
        long seed = Seeds.draw("ForgetBatchTest");
        Random rnd = new Random(seed);
        String[] points = {
            null,
            null,
            "cleanup-before-delete",
            "cleanup-after-delete",
            "cleanup-recorded",
            "batch-sealed-partway",
            "after-key-destroyed"
        };
        String point = points[rnd.nextInt(points.length)];
        String where = "crash " + point + Seeds.replay(seed);
        Map<String, VectorRecord> live = new LinkedHashMap<>();
        List<ForgetRequest> requests = new ArrayList<>();
        Map<String, String> opOf = new LinkedHashMap<>();
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(
                            new CollectionSpec(
                                    "notes",
                                    DIM,
                                    Metric.COSINE,
                                    IndexSpec.of(CountingIndex.KIND, Map.of())));
            int subjectCount = 4 + rnd.nextInt(10);
            List<VectorRecord> batch = new ArrayList<>();
            for (int s = 0; s < subjectCount; s++) {
                for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) {
                    batch.add(
                            VectorRecord.builder("s" + s + "-r" + i)
                                    .subject("s" + s)
                                    .vector(vector(rnd))
                                    .build());
                }
            }
            for (int i = 0, n = rnd.nextInt(6); i < n; i++) {
                batch.add(VectorRecord.builder("n" + i).vector(vector(rnd)).build());
            }
            List<String> sources = batch.stream().map(VectorRecord::id).toList();
            for (int i = 0, n = rnd.nextInt(5); i < n; i++) {
                String from = sources.get(rnd.nextInt(sources.size()));
                batch.add(
                        VectorRecord.builder("d" + i)
                                .vector(vector(rnd))
                                .derivedFrom(List.of(from))
                                .build());
            }
            c.upsertAll(batch);
            batch.forEach(r -> live.put(r.id(), r));
            List<String> ids = new ArrayList<>(live.keySet());
            for (int q = 0, n = 2 + rnd.nextInt(20); q < n; q++) {
                ForgetScope scope;
                if (rnd.nextBoolean()) {
                    scope =
                            ForgetScope.subject(
                                    "s" + rnd.nextInt(subjectCount + 1)); // one may not exist
                } else {
                    Set<String> named = new HashSet<>();
                    for (int k = 0, m = 1 + rnd.nextInt(4); k < m; k++) {
                        named.add(
                                rnd.nextInt(8) == 0
                                        ? "missing-" + k
                                        : ids.get(rnd.nextInt(ids.size())));
                    }
                    scope = ForgetScope.records(named.toArray(String[]::new));
                }
                requests.add(ForgetRequest.of(scope, "req-" + q, "user-request"));
            }
            Gate gate = holdTheWorker(store, c);
            for (ForgetRequest r : requests) {
                opOf.put(r.idempotencyKey(), store.forget(r).id());
            }
            store.testPoints().stopForgetAt(point);
            gate.open.countDown();
            if (point != null) {
                awaitCrash(store, opOf.values(), point);
            } else {
                for (String id : opOf.values()) {
                    store.awaitOperation(id, WAIT);
                }
            }
        }
        // The oracle: the requests one after the other, in the order they came.
        Map<String, Integer> expected = new LinkedHashMap<>();
        Map<String, Boolean> keyLeft = new HashMap<>();
        live.values()
                .forEach(
                        r -> {
                            if (r.subject() != null) {
                                keyLeft.put(r.subject(), true);
                            }
                        });
        Map<String, ErasureOutcome> outcome = new HashMap<>();
        for (ForgetRequest r : requests) {
            Set<String> doomed = new HashSet<>();
            for (VectorRecord v : live.values()) {
                if (r.scope().matches(v)) {
                    doomed.add(v.id());
                }
            }
            boolean grew = true;
            while (grew) {
                grew = false;
                for (VectorRecord v : live.values()) {
                    if (!doomed.contains(v.id())
                            && v.derivedFrom().stream().anyMatch(doomed::contains)) {
                        doomed.add(v.id());
                        grew = true;
                    }
                }
            }
            live.keySet().removeAll(doomed);
            expected.put(r.idempotencyKey(), doomed.size());
            boolean keyDestroyed =
                    r.scope() instanceof ForgetScope.Subject s
                            && keyLeft.put(s.subject(), false) == Boolean.TRUE;
            outcome.put(
                    r.idempotencyKey(),
                    doomed.isEmpty() && !keyDestroyed
                            ? ErasureOutcome.NOTHING_FOUND
                            : ErasureOutcome.ERASED);
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            PublicKey key = SigningKey.parsePem(store.publicKeyPem());
            for (ForgetRequest r : requests) {
                ForgetOperation done = store.awaitOperation(opOf.get(r.idempotencyKey()), WAIT);
                int mine = expected.get(r.idempotencyKey());
                assertEquals(
                        OperationState.SEALED,
                        done.state(),
                        r.idempotencyKey() + ": " + done.note() + "; " + where);
                assertEquals(
                        mine,
                        done.totalForgotten(),
                        r.idempotencyKey() + " (" + r.scope().kind() + "); " + where);
                assertOwnReceipt(store, done, mine, key);
                assertEquals(
                        outcome.get(r.idempotencyKey()),
                        done.outcome(),
                        r.idempotencyKey() + "; " + where);
            }
            assertEquals(
                    new TreeSet<>(live.keySet()),
                    new TreeSet<>(c.ids(VectorRecord.DEFAULT_TENANT)),
                    where);
            assertTrue(store.verifyLedger().ok(), where);
        }
        if (point == null) {
            // The gate's forget, then one removal for the whole queue: every request fits one
            // batch.
            int removed = expected.values().stream().mapToInt(Integer::intValue).sum();
            assertEquals(
                    removed == 0 ? List.of(1) : List.of(1, removed), CountingIndex.REMOVALS, where);
        }
    }
}
