package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.forget.ErasureOutcome;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Seeds;
import dev.nepenthe.testing.faults.FaultPlan;
import dev.nepenthe.testing.faults.FaultyFileSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk faults injected by seed into every file the store touches (its data folder and its key
 * folder, through {@link FaultyFileSystem}): a full disk at a chosen byte, I/O errors on the n-th
 * write, fsync, directory fsync, rename, read or delete, short writes. Each round runs a store
 * through several cycles of: open, check everything against a model, arm one fault, run upserts,
 * deletes, forgets and checkpoints until the fault lands (and a little after), close, heal the
 * disk. The rules checked:
 *
 * <ul>
 *   <li>a write that returned was durable: after the disk heals and the store reopens, every
 *       acknowledged record is there byte for byte, and nothing acknowledged as deleted or
 *       forgotten is back ({@code writes lost} must be 0);
 *   <li>a write that failed is applied whole or not at all after the reopen (no batch half
 *       applied), and is never served before it;
 *   <li>a failed write (an fsync above all) is never ignored: the store is read-only from then on,
 *       refuses writes with {@link StoreReadOnlyException}, keeps serving searches and gets, and
 *       {@code health()} names the failure;
 *   <li>a forget that sealed has a true receipt (its subject's records are gone after the reopen,
 *       the counts are what the model holds, the receipt verifies against the ledger); a forget cut
 *       short by the fault resumes to SEALED after the reopen, with a true receipt ({@code false
 *       receipts} must be 0);
 *   <li>a read error at open names a file and never yields wrong data.
 * </ul>
 *
 * <p>The suite runs {@value #DEFAULT_ROUNDS} rounds; {@code -Dnepenthe.fault.rounds=N} (the Maven
 * profile {@code faults-long}) runs more. A failure prints the round's seed.
 */
class DiskFaultTest {

    static final int DEFAULT_ROUNDS = 6;
    static final int ROUNDS = Integer.getInteger("nepenthe.fault.rounds", DEFAULT_ROUNDS);
    static final int CYCLES = 4;
    static final int DIM = 32;
    static final String T = VectorRecord.DEFAULT_TENANT;
    static final Duration FORGET_WAIT = Duration.ofMinutes(2);

    @TempDir Path tmp;

    /** Counts across rounds, printed at the end and in the closing note of the work. */
    static final class Totals {
        int cycles;
        int faultsInjected;
        int writesAcknowledged;
        int writesLost;
        int forgetsSealed;
        int falseReceipts;
        int failedOpens;
        int readOnlyRefusals;

        @Override
        public String toString() {
            return cycles
                    + " cycles, "
                    + faultsInjected
                    + " faults injected, "
                    + writesAcknowledged
                    + " writes acknowledged, "
                    + writesLost
                    + " writes lost, "
                    + forgetsSealed
                    + " forgets sealed, "
                    + falseReceipts
                    + " false receipts, "
                    + failedOpens
                    + " opens refused by a read fault, "
                    + readOnlyRefusals
                    + " writes refused as read-only";
        }
    }

    @Test
    void acknowledgedWritesSurviveAndReceiptsStayTrueUnderInjectedDiskFaults() throws Exception {
        long seed = Seeds.draw("DiskFaultTest");
        Random rnd = new Random(seed);
        Totals totals = new Totals();
        for (int r = 0; r < ROUNDS; r++) {
            long roundSeed = rnd.nextLong();
            try {
                Round round = new Round(roundSeed, tmp.resolve("round-" + r), totals);
                // A round takes seconds; a hang (a lock never released after a fault) fails it.
                assertTimeoutPreemptively(Duration.ofMinutes(5), round::run);
            } catch (AssertionError | Exception e) {
                throw new AssertionError(
                        "round "
                                + r
                                + " (round seed "
                                + roundSeed
                                + ")"
                                + Seeds.replay(seed)
                                + ": "
                                + e,
                        e);
            }
        }
        System.out.println("[faults] DiskFaultTest: " + totals);
        assertEquals(0, totals.writesLost, "acknowledged writes lost" + Seeds.replay(seed));
        assertEquals(0, totals.falseReceipts, "forgets with a false receipt" + Seeds.replay(seed));
        assertTrue(
                totals.faultsInjected >= ROUNDS,
                "the plans injected faults: " + totals + Seeds.replay(seed));
    }

    /** One store through {@link #CYCLES} fault cycles, against a model of what it must hold. */
    static final class Round {
        private final Random rnd;
        private final Path dir;
        private final Totals totals;
        private final FaultPlan plan;
        private final Path data;

        /**
         * The acknowledged value of each id (its text, from which its vector is derived); absent:
         * none.
         */
        private final Map<String, String> acked = new HashMap<>();

        private final Map<String, String> subjectOf = new HashMap<>();

        /**
         * Writes that failed: each maps ids to the value it would have given them (null: deleted).
         */
        private final List<Map<String, String>> pending = new ArrayList<>();

        /** Subjects a forget was marked for: never written again, never served again. */
        private final Set<String> forgotten = new HashSet<>();

        /**
         * Forgets to see SEALED after the next open (marked, or perhaps marked, and not sealed
         * yet).
         */
        private final Map<String, ForgetRequest> unsealed = new LinkedHashMap<>();

        /**
         * For each forget, the bounds on what it must count: records of its subject at the mark.
         */
        private final Map<String, int[]> expectedCount = new HashMap<>();

        private int counter;

        Round(long seed, Path dir, Totals totals) {
            this.rnd = new Random(seed);
            this.dir = dir;
            this.totals = totals;
            this.plan = FaultPlan.none(seed);
            this.data = FaultyFileSystem.wrap(dir.resolve("data"), plan);
        }

        void run() throws Exception {
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                if (cycle > 0 && rnd.nextInt(3) == 0) {
                    openWithAReadFault();
                }
                Nepenthe store = Nepenthe.open(data, options()); // the disk is sound: it must open
                try {
                    VectorCollection c =
                            store.collections().isEmpty()
                                    ? store.createCollection(
                                            CollectionSpec.of("c", DIM, Metric.COSINE)
                                                    .withTextIndex("whitespace"))
                                    : store.collection("c");
                    checkAgainstTheModel(store, c);
                    String armed = plan.armRandomly(40);
                    int before = plan.injectedCount();
                    workload(store, c, cycle, armed);
                    totals.faultsInjected += plan.injectedCount() - before;
                    totals.cycles++;
                } finally {
                    try {
                        store.close();
                    } catch (IOException | UncheckedIOException e) {
                        // A close after a fault may report it again; the reopen is what counts.
                    }
                }
                plan.heal();
            }
            try (Nepenthe store = Nepenthe.open(data, options())) {
                checkAgainstTheModel(store, store.collection("c"));
            }
        }

        private StoreOptions options() {
            return StoreOptions.defaults().withCheckpointBytes(1 << 16);
        }

        /** An open while reads fail: it fails naming a file, or succeeds with nothing wrong. */
        private void openWithAReadFault() throws Exception {
            plan.failNth(FaultPlan.Op.READ, 1 + rnd.nextInt(120), false);
            int before = plan.injectedCount();
            try (Nepenthe store = Nepenthe.open(data, options())) {
                plan.heal();
                checkAgainstTheModel(store, store.collection("c"));
            } catch (IOException | UncheckedIOException e) {
                assertTrue(
                        plan.injectedCount() > before,
                        "the open failed without an injected fault: " + e);
                String chain = StoreFaults.chain(e);
                assertTrue(
                        chain.contains(dir.toString()),
                        "a read error names the file: " + StoreFaults.stack(e));
                totals.failedOpens++;
            } finally {
                totals.faultsInjected += plan.injectedCount() - before;
                plan.heal();
            }
        }

        private void workload(Nepenthe store, VectorCollection c, int cycle, String armed)
                throws Exception {
            int before = plan.injectedCount();
            int stepsAfterTrip = 0;
            for (int step = 0; step < 40 && stepsAfterTrip < 3; step++) {
                int op = rnd.nextInt(20);
                try {
                    if (op < 12) {
                        upsert(c);
                    } else if (op < 15) {
                        delete(c);
                    } else if (op < 17) {
                        forget(store, cycle);
                    } else {
                        c.checkpoint();
                    }
                } catch (StoreReadOnlyException e) {
                    assertFalse(
                            store.health().writesAccepted(),
                            "a refusal comes from a read-only store");
                    totals.readOnlyRefusals++;
                } catch (RuntimeException e) {
                    if (!StoreFaults.isIo(e)) {
                        throw e;
                    }
                    // Never ignored: a failed write leaves the store read-only, and says why.
                    StoreHealth h = store.health();
                    assertFalse(
                            h.writesAccepted(), "after a failed write (" + e + "; " + armed + ")");
                    assertTrue(
                            h.writeProblem().contains(dir.toString()),
                            "health names the file: "
                                    + h.writeProblem()
                                    + " (injected: "
                                    + injectedSince(before)
                                    + ")\n"
                                    + StoreFaults.stack(e));
                }
                if (!store.health().writesAccepted()) {
                    stepsAfterTrip++;
                    assertTrue(
                            plan.injectedCount() > before,
                            "read-only without a fault: " + store.health().writeProblem());
                    readsStillServed(c);
                }
            }
            boolean ioFault =
                    plan.injected().subList(before, plan.injectedCount()).stream()
                            .anyMatch(
                                    f ->
                                            f.op() == FaultPlan.Op.FSYNC
                                                    || f.op() == FaultPlan.Op.DIRECTORY_FSYNC
                                                    || f.op() == FaultPlan.Op.WRITE);
            if (ioFault) {
                assertFalse(
                        store.health().writesAccepted(),
                        "a failed write or fsync ("
                                + injectedSince(before)
                                + ") left the store taking writes");
            }
        }

        /** The faults injected since {@code from}, the first few of them. */
        private String injectedSince(int from) {
            List<FaultPlan.Injected> all = plan.injected();
            List<FaultPlan.Injected> since = all.subList(from, all.size());
            return since.size() + " faults, first " + since.subList(0, Math.min(5, since.size()));
        }

        private String nextValue() {
            return "t" + (counter++) + "x" + rnd.nextInt(1000);
        }

        private void upsert(VectorCollection c) {
            int size = 1 + rnd.nextInt(8);
            List<VectorRecord> batch = new ArrayList<>();
            Map<String, String> after = new LinkedHashMap<>();
            while (batch.size() < size) {
                String id = "r" + rnd.nextInt(60);
                if (after.containsKey(id)) {
                    continue;
                }
                String subject = subjectOf.computeIfAbsent(id, k -> "s" + rnd.nextInt(6));
                if (forgotten.contains(subject)) {
                    // Its subject is forgotten: a new id (never used) of a subject of its own
                    // instead.
                    id = "n" + (counter++);
                    subject = "u" + id;
                    subjectOf.put(id, subject);
                }
                String value = nextValue();
                after.put(id, value);
                batch.add(record(id, subject, value));
            }
            try {
                c.upsertAll(batch);
            } catch (RuntimeException e) {
                if (!(e instanceof StoreReadOnlyException)) {
                    pending.add(after);
                }
                throw e;
            }
            acked.putAll(after);
            totals.writesAcknowledged += batch.size();
        }

        private void delete(VectorCollection c) {
            List<String> ids = new ArrayList<>(acked.keySet());
            if (ids.isEmpty()) {
                return;
            }
            String id = ids.get(rnd.nextInt(ids.size()));
            Map<String, String> after = new HashMap<>();
            after.put(id, null);
            try {
                assertTrue(c.delete(T, id), "an acknowledged record is there to delete");
            } catch (RuntimeException e) {
                if (!(e instanceof StoreReadOnlyException)) {
                    pending.add(after);
                }
                throw e;
            }
            acked.remove(id);
            totals.writesAcknowledged++;
        }

        private void forget(Nepenthe store, int cycle) throws InterruptedException {
            List<String> live = new ArrayList<>();
            for (String id : acked.keySet()) {
                String s = subjectOf.get(id);
                if (!forgotten.contains(s) && !live.contains(s)) {
                    live.add(s);
                }
            }
            if (live.isEmpty()) {
                return;
            }
            String subject = live.get(rnd.nextInt(live.size()));
            ForgetRequest req =
                    new ForgetRequest(
                            T,
                            ForgetScope.subject(subject),
                            "fault-" + subject + "-" + cycle,
                            "fault-test",
                            null);
            int min = 0;
            int max = 0;
            for (Map.Entry<String, String> e : acked.entrySet()) {
                if (subject.equals(subjectOf.get(e.getKey()))) {
                    min++;
                }
            }
            for (Map<String, String> p : pending) {
                for (String id : p.keySet()) {
                    if (subject.equals(subjectOf.get(id))) {
                        max++;
                    }
                }
            }
            ForgetOperation op;
            try {
                op = store.forget(req);
            } catch (StoreReadOnlyException e) {
                throw e; // refused before anything was marked
            } catch (RuntimeException e) {
                // Perhaps marked: the next open finishes it, or the request (idempotent) is made
                // again.
                markForgotten(subject, req, min, min + max);
                throw e;
            }
            markForgotten(subject, req, min, min + max);
            op = store.awaitOperation(op.id(), FORGET_WAIT);
            if (op.state() == OperationState.SEALED) {
                checkReceipt(store, op, subject);
                unsealed.remove(subject);
            } else {
                assertFalse(
                        op.state().isSettled(),
                        "a forget of random vectors seals or waits: "
                                + op.state()
                                + " ("
                                + op.note()
                                + ")");
                assertFalse(
                        store.health().writesAccepted(),
                        "a forget stopped by a write failure: " + op.note());
            }
        }

        private void markForgotten(String subject, ForgetRequest req, int min, int max) {
            forgotten.add(subject);
            unsealed.put(subject, req);
            expectedCount.put(subject, new int[] {min, max});
            acked.keySet().removeIf(id -> subject.equals(subjectOf.get(id)));
        }

        /**
         * A sealed forget's receipt is true: counts as the model says, verifiable, and nothing of
         * it served.
         */
        private void checkReceipt(Nepenthe store, ForgetOperation op, String subject) {
            totals.forgetsSealed++;
            int[] bounds = expectedCount.get(subject);
            int n = op.totalForgotten();
            boolean countsTrue = n >= bounds[0] && n <= bounds[1];
            boolean outcomeTrue =
                    op.outcome() == (n > 0 ? ErasureOutcome.ERASED : ErasureOutcome.NOTHING_FOUND);
            boolean served = false;
            VectorCollection c = store.collection("c");
            for (Map.Entry<String, String> e : subjectOf.entrySet()) {
                if (subject.equals(e.getValue()) && c.get(T, e.getKey()).isPresent()) {
                    served = true;
                }
            }
            try {
                store.evidence().checkReceipt(op.receipt());
            } catch (IOException | RuntimeException e) {
                fail("a sealed forget's receipt does not verify: " + e);
            }
            if (!countsTrue || !outcomeTrue || served) {
                totals.falseReceipts++;
                fail(
                        "receipt of "
                                + op.id()
                                + " says "
                                + op.outcome()
                                + " with "
                                + n
                                + " records; the model says "
                                + bounds[0]
                                + ".."
                                + bounds[1]
                                + (served ? ", and a record of the subject is still served" : ""));
            }
        }

        /** Searches and gets go on in a read-only store, with acknowledged data only. */
        private void readsStillServed(VectorCollection c) {
            List<String> ids = new ArrayList<>(acked.keySet());
            if (ids.isEmpty()) {
                return;
            }
            String id = ids.get(rnd.nextInt(ids.size()));
            Optional<VectorRecord> got = c.get(T, id);
            String value = got.map(VectorRecord::text).orElse(null);
            assertTrue(
                    allowed(id).contains(value),
                    "get of "
                            + id
                            + " in a read-only store: "
                            + value
                            + ", allowed "
                            + allowed(id));
            if (value != null) {
                List<SearchHit> hits = c.search(SearchRequest.of(vector(value), 1));
                assertEquals(
                        id,
                        hits.get(0).id(),
                        "the nearest record to its own vector, in a read-only store");
            }
        }

        /**
         * The values an id may hold now: its acknowledged one, and any a failed write would give
         * it.
         */
        private Set<String> allowed(String id) {
            Set<String> out = new HashSet<>();
            out.add(acked.get(id));
            if (!forgotten.contains(subjectOf.get(id))) {
                for (Map<String, String> p : pending) {
                    if (p.containsKey(id)) {
                        out.add(p.get(id));
                    }
                }
            }
            return out;
        }

        /**
         * After an open: forgets left unsealed resume to SEALED with true receipts, every id holds
         * an allowed value, failed batches are whole or absent, the indexes check out, and the
         * failed writes are settled into the model as the store resolved them.
         */
        private void checkAgainstTheModel(Nepenthe store, VectorCollection c) throws Exception {
            assertTrue(
                    store.health().writesAccepted(),
                    "a reopened store takes writes: " + store.health());
            for (Map.Entry<String, ForgetRequest> e : new ArrayList<>(unsealed.entrySet())) {
                ForgetOperation op =
                        store.forget(
                                e.getValue()); // the same request: the same operation, if marked
                op = store.awaitOperation(op.id(), FORGET_WAIT);
                assertEquals(
                        OperationState.SEALED,
                        op.state(),
                        "a forget resumes to SEALED after a reopen: " + op.note());
                checkReceipt(store, op, e.getKey());
                unsealed.remove(e.getKey());
            }
            Map<String, String> seen = new HashMap<>();
            for (String id : subjectOf.keySet()) {
                Optional<VectorRecord> got = c.get(T, id);
                String value = got.map(VectorRecord::text).orElse(null);
                if (!allowed(id).contains(value)) {
                    if (acked.get(id) != null) {
                        totals.writesLost++;
                    }
                    fail(
                            "id "
                                    + id
                                    + " holds "
                                    + value
                                    + "; acknowledged "
                                    + acked.get(id)
                                    + ", allowed "
                                    + allowed(id));
                }
                if (got.isPresent()) {
                    assertArrayEquals(vector(value), got.get().vector(), 0f, "the vector of " + id);
                }
                seen.put(id, value);
            }
            for (Map<String, String> p : pending) {
                int applied = 0;
                for (Map.Entry<String, String> e : p.entrySet()) {
                    if (java.util.Objects.equals(seen.get(e.getKey()), e.getValue())) {
                        applied++;
                    }
                }
                boolean forgottenPart =
                        p.keySet().stream().anyMatch(id -> forgotten.contains(subjectOf.get(id)));
                assertTrue(
                        forgottenPart || applied == 0 || applied == p.size(),
                        "a failed batch is whole or absent after"
                                + " the reopen: "
                                + applied
                                + " of "
                                + p.size()
                                + " applied");
            }
            pending.clear();
            acked.clear();
            seen.forEach(
                    (id, v) -> {
                        if (v != null) {
                            acked.put(id, v);
                        }
                    });
            for (Map.Entry<String, IntegrityReport> e : c.verifyIntegrity().entrySet()) {
                assertTrue(e.getValue().isClean(), e.getKey() + ": " + e.getValue());
            }
            for (String id : acked.keySet()) {
                List<SearchHit> hits = c.search(SearchRequest.of(vector(acked.get(id)), 1));
                assertEquals(
                        id,
                        hits.get(0).id(),
                        "the nearest record to its own vector after a reopen");
                break;
            }
        }
    }

    static VectorRecord record(String id, String subject, String value) {
        return VectorRecord.builder(id).subject(subject).vector(vector(value)).text(value).build();
    }

    /**
     * A random vector derived from the value (the record's text), so the model keeps only the text.
     */
    static float[] vector(String value) {
        Random r = new Random(value.hashCode());
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    /** Cause chains of the store's failures. */
    static final class StoreFaults {
        static boolean isIo(Throwable t) {
            for (Throwable x = t; x != null; x = x.getCause()) {
                if (x instanceof IOException || x instanceof UncheckedIOException) {
                    return true;
                }
            }
            return false;
        }

        static String stack(Throwable t) {
            java.io.StringWriter w = new java.io.StringWriter();
            t.printStackTrace(new java.io.PrintWriter(w));
            return w.toString();
        }

        static String chain(Throwable t) {
            StringBuilder b = new StringBuilder();
            for (Throwable x = t; x != null; x = x.getCause()) {
                b.append(x).append(" <- ");
                for (Throwable s : x.getSuppressed()) {
                    b.append("[suppressed ").append(s).append("] ");
                }
            }
            return b.toString();
        }
    }
}
