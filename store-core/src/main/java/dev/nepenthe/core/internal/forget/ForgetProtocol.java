package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.StoreHealth;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.forget.ErasureOutcome;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.Readmission;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.JoinKeys;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The forget protocol: mark, propagate, verify, seal (see DESIGN.md, "The forget protocol").
 *
 * <p>{@link #forget} marks on the caller's thread: it installs the write fence, blocks every read
 * of the scope in every collection and records the operation durably, then returns. One worker
 * thread carries operations on through cleanup, verification and sealing, in batches of the
 * operations that wait for the same step ({@link BatchQueue}): one removal, one index repair, one
 * segment rewrite, one text merge and one structure check per collection serve the whole batch,
 * while each operation keeps its own states, proofs, evidence and receipt. Every state change is
 * written to the operation log before the next phase starts, so a crash at any point resumes at the
 * next open, where the marks are re-applied before anything is served.
 *
 * <p>What is stored: the operation log and the evidence ledger hold keyed hashes, counts, states
 * and times. An operation's scope and its probe vectors (copies of the forgotten vectors, which the
 * verification searches with) are sealed under a key of the operation's own that is destroyed when
 * it seals.
 */
public final class ForgetProtocol implements Closeable {

    private final ProbePolicy probePolicy;
    private final ForgetContext ctx;
    private final BlockPhase block;
    private final LegalHolds holds;
    private final CleanupPhase cleanup;
    private final VerifyPhase verify;
    private final SealPhase seal;
    private final Readmissions readmissions;
    private final ForgetWorker worker;
    private final Map<KeyedHash.Hash, String> byIdempotency = new HashMap<>();

    /**
     * Held shared by everything that writes the keystore folder on the protocol's behalf while the
     * store runs (a mark, an override, a hold placed or lifted, a re-admission, a ledger restart,
     * each step of the worker), exclusively by {@link #pauseWrites}: a replica copy then reads none
     * of them half done. A call into a registered surface lets the share go meanwhile ({@code
     * ForgetContext.atSurface}). Taken before this protocol's monitor, never under it: a thread
     * waiting for it while holding the monitor would wait for the worker, which waits for the
     * monitor.
     */
    private final ReentrantReadWriteLock writes = new ReentrantReadWriteLock();

    /** A pause of the protocol's writes ({@link #pauseWrites}); closing it ends the pause. */
    public interface Pause extends AutoCloseable {
        @Override
        void close();
    }

    private volatile boolean closing;
    private ReconciliationReport reconciliation = new ReconciliationReport(0, 0, 0, 0);
    private final Path keysFolder;
    private final KeyedHash hashes;

    /** Whether {@link #start} ran to its end: only then can a close vouch for the collections. */
    private boolean started;

    /** Whether the last {@link #close} saw the worker stop with nothing in hand. */
    private boolean stoppedCleanly;

    /**
     * What reconciliation did at open: sealed operations re-verified, records removed again,
     * operations resumed, and collections not checked because they were opened over exactly the
     * files their last clean close left, under the same fences ({@link ReconciliationStamp}).
     */
    public record ReconciliationReport(
            int sealedChecked, int resurrectedRemoved, int resumed, int collectionsSkipped) {}

    public ForgetProtocol(
            Path keysFolder,
            KeyedHash hashes,
            Keystore keystore,
            SigningKey signer,
            Supplier<List<CollectionEngine>> collections,
            int workerNice,
            ProbePolicy probePolicy,
            StorageFault fault,
            TestPoints points)
            throws IOException {
        this.probePolicy = probePolicy;
        this.keysFolder = keysFolder;
        this.hashes = hashes;
        ScopeHashes scopeHashes = new ScopeHashes(hashes);
        OperationLog log = OperationLog.open(keysFolder.resolve("operations"), points);
        AnchoredLedger ledger;
        try {
            ledger =
                    AnchoredLedger.open(
                            keysFolder.resolve("evidence").resolve("ledger.bin"),
                            signer,
                            log,
                            points);
        } catch (IOException | RuntimeException e) {
            log.close();
            throw e;
        }
        this.ctx =
                new ForgetContext(
                        this,
                        collections,
                        new OperationStore(log, keystore, scopeHashes),
                        ledger,
                        new ForgetEvidence(hashes, signer),
                        new SnapshotRegistry(keysFolder.resolve("snapshots.registry"), hashes),
                        scopeHashes,
                        fault,
                        points,
                        writes);
        this.block = new BlockPhase(ctx);
        this.holds = new LegalHolds(ctx);
        this.cleanup = new CleanupPhase(ctx, holds);
        this.verify = new VerifyPhase(ctx);
        this.seal = new SealPhase(ctx);
        this.readmissions = new Readmissions(ctx);
        this.worker = new ForgetWorker(ctx, cleanup, verify, seal, workerNice, writes.readLock());
    }

    // ---- start-up: load, re-mark, reconcile, resume ------------------------------------------

    /**
     * Loads every operation, re-applies the marks of the live ones, re-verifies the sealed ones
     * against what the store now holds (removing anything that came back, as a restored snapshot
     * could bring it), then resumes the unfinished ones on the worker. Runs before the store
     * serves.
     */
    public synchronized void start() throws IOException {
        for (OperationLog.Stored s : ctx.store.operations().values()) {
            OperationSecret secret = null;
            if (s.sealedPrivate() != null) {
                secret = ctx.store.openSecret(s.pub().id, s.sealedPrivate());
            }
            LiveOperation op = new LiveOperation(s.pub(), secret);
            ctx.operations.put(op.pub.id, op);
            byIdempotency.put(op.pub.idempotency, op.pub.id);
            if (op.pub.state == OperationState.SEALED) {
                // A crash between sealing and destroying the operation's key: finish it.
                ctx.store.destroyKey(op.pub.id);
                op.secret = null;
            } else if (secret == null) {
                throw ctx.store.missingSecret(op);
            }
        }
        ctx.ledger.checkAtOpen(publicStates());
        ctx.refreshHolds();
        for (CollectionEngine c : ctx.engines.get()) {
            c.setFence(ctx.fences);
            c.setDeleteGuard(ctx.held);
        }
        if (ctx.ledger.problem() == null) {
            // A re-admission a crash interrupted: finished before anything is served.
            readmissions.finishPending();
        }
        ctx.refreshFences();
        int resumed = 0;
        for (LiveOperation op : ctx.operations.values()) {
            if (op.pub.state != OperationState.SEALED) {
                block.blockEverywhere(op);
            }
        }
        Map<String, byte[]> cleanClose =
                ReconciliationStamp.take(keysFolder, hashes, fenceDigest());
        Reconciliation.Result reconciled = new Reconciliation(ctx).reconcile(cleanClose);
        reconciliation =
                new ReconciliationReport(
                        countSealed(), reconciled.removed(), 0, reconciled.skipped());
        for (LiveOperation op : ctx.operations.values()) {
            if (!op.pub.state.isSettled() && ctx.ledger.problem() == null) {
                resumed++;
                worker.submit(op.pub.id);
            }
        }
        reconciliation =
                new ReconciliationReport(
                        reconciliation.sealedChecked(),
                        reconciliation.resurrectedRemoved(),
                        resumed,
                        reconciliation.collectionsSkipped());
        started = true;
    }

    private byte[] fenceDigest() {
        return ReconciliationStamp.fenceDigest(ctx.fences.sealed(), ctx.fences.lifted());
    }

    /**
     * After the store's close (this protocol's first, then every collection's), records what the
     * next open's reconciliation may skip: {@code manifests} maps the incarnation id of each
     * collection that closed cleanly to the manifest digest its close left; one whose close failed
     * is left out, and checked. Writes nothing if this protocol did not start, its worker did not
     * stop in time, or a simulated crash stopped it: that open checks every collection.
     */
    public synchronized void stampCleanClose(Map<String, byte[]> manifests) throws IOException {
        if (started && stoppedCleanly && !worker.crashed()) {
            ReconciliationStamp.write(keysFolder, hashes, fenceDigest(), manifests);
        }
    }

    private int countSealed() {
        return (int)
                ctx.operations.values().stream()
                        .filter(o -> o.pub.state == OperationState.SEALED)
                        .count();
    }

    public synchronized ReconciliationReport reconciliation() {
        return reconciliation;
    }

    /** A collection created while the store runs joins the fences. */
    public void adopt(CollectionEngine c) {
        c.setFence(ctx.fences);
        c.setDeleteGuard(ctx.held);
    }

    // ---- the API -----------------------------------------------------------------------------

    /**
     * Marks the request's scope and returns the operation (BLOCKED, or a later state when the
     * idempotency key names an existing operation). Cleanup, verification and sealing go on in the
     * background; see {@link #await}.
     */
    public ForgetOperation forget(ForgetRequest request) throws IOException {
        return whileWriting(() -> mark(request));
    }

    private ForgetOperation mark(ForgetRequest request) throws IOException {
        LiveOperation op;
        synchronized (this) {
            ensureOpen();
            ensureLedgerSound();
            double threshold = probePolicy.effective(request.probeThreshold());
            request.identifiers()
                    .forEach(
                            JoinKeys.Identifier::of); // refuses an identifier with nothing to match
            KeyedHash.Hash idem =
                    ctx.hashes.idempotency(request.tenant(), request.idempotencyKey());
            KeyedHash.Hash requestHash = ctx.hashes.request(request, threshold);
            String existing = byIdempotency.get(idem);
            if (existing != null) {
                LiveOperation old = ctx.operations.get(existing);
                if (!old.pub.requestHash.equals(requestHash)) {
                    throw new IllegalArgumentException(
                            "idempotency key already used by forget operation "
                                    + existing
                                    + " for a different request; expected the same tenant, scope,"
                                    + " reason, threshold, level and probe choice, or a new key");
                }
                return view(old);
            }
            OperationLog.Public pub = new OperationLog.Public();
            pub.id =
                    "fop-"
                            + HexFormat.of()
                                    .formatHex(ChecksummedFiles.newFileId())
                                    .substring(0, 20);
            pub.tenant = request.tenant();
            pub.scopeKind = request.scope().kind();
            pub.scopeHash = ctx.hashes.scope(request.tenant(), request.scope());
            pub.reasonCode = request.reasonCode();
            pub.idempotency = idem;
            pub.requestHash = requestHash;
            pub.threshold = threshold;
            pub.approximateAbove = probePolicy.approximateAbove();
            pub.exactProbe = request.exactProbe();
            pub.level = request.level();
            pub.tenantKnown =
                    ctx.collections().stream()
                            .anyMatch(c -> c.engine().hasTenant(request.tenant()));
            pub.state = OperationState.RECEIVED;
            pub.timeline.put(OperationState.RECEIVED, LiveOperation.nowMicros());
            OperationSecret secret = new OperationSecret();
            secret.scope = request.scope();
            secret.identifiers.addAll(request.identifiers());
            pub.identifiers = request.identifiers().size();
            op = new LiveOperation(pub, secret);
            if (request.scope() instanceof ForgetScope.Metadata m) {
                op.filter = m.filter();
            }
            pub.fences.addAll(ctx.hashes.fences(request.tenant(), request.scope()));
            // 1. The fence: from here on no write in scope is stored.
            ctx.operations.put(pub.id, op);
            byIdempotency.put(idem, pub.id);
            ctx.refreshFences();
        }
        // 2. Block every read of the scope. A metadata filter is resolved to record ids now
        //    (until then the fence tests the filter itself).
        if (op.filter != null) {
            Map<String, Set<String>> resolved = new TreeMap<>();
            for (CollectionEraser c : ctx.collections()) {
                Set<String> ids = new HashSet<>();
                ids.addAll(c.idsMatching(op.pub.tenant, op.filter));
                if (!ids.isEmpty()) {
                    resolved.put(c.name(), Set.copyOf(ids));
                }
            }
            synchronized (this) {
                op.secret.resolved = resolved;
                ctx.refreshFences();
            }
        }
        block.blockEverywhere(op);
        // 3. Durable before it returns: a crash now resumes the operation at the next open.
        synchronized (this) {
            op.pub.state = OperationState.BLOCKED;
            op.pub.timeline.put(OperationState.BLOCKED, LiveOperation.nowMicros());
            ctx.save(op, true);
        }
        ForgetOperation marked;
        synchronized (this) {
            marked = view(op);
        }
        ctx.crashPoint("after-mark");
        worker.submit(op.pub.id);
        return marked;
    }

    public synchronized Optional<ForgetOperation> operation(String id) {
        LiveOperation op = ctx.operations.get(id);
        return op == null ? Optional.empty() : Optional.of(view(op));
    }

    public synchronized List<ForgetOperation> operations(Predicate<ForgetOperation> filter) {
        List<ForgetOperation> out = new ArrayList<>();
        for (LiveOperation op : ctx.operations.values()) {
            ForgetOperation v = view(op);
            if (filter.test(v)) {
                out.add(v);
            }
        }
        return out;
    }

    /**
     * Waits until the operation rests in a settled state (or stopped on a failure, which its note
     * names) and returns it.
     *
     * @throws IllegalStateException if it is still running after {@code timeout}
     */
    public ForgetOperation await(String id, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (true) {
                LiveOperation op = ctx.operations.get(id);
                if (op == null) {
                    throw new IllegalArgumentException("no forget operation with id " + id);
                }
                if ((op.pub.state.isSettled() && !op.releasing) || op.failure != null) {
                    return view(op);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException(
                            "forget operation "
                                    + id
                                    + " is still "
                                    + op.pub.state
                                    + " after "
                                    + timeout);
                }
                wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    /** Re-runs verification of an operation in NEEDS_REVIEW (after the operator forgot more). */
    public ForgetOperation reverify(String id) {
        synchronized (this) {
            LiveOperation op = requireInReview(id, "re-verify");
            op.failure = null;
            op.enter(OperationState.VERIFYING);
        }
        worker.submit(id);
        synchronized (this) {
            return view(require(id));
        }
    }

    /**
     * Seals an operation in NEEDS_REVIEW although verification flagged suspects: the operator
     * judged them not residue. The override, its reason code and the count of what it overrode are
     * written into the evidence and the receipt. Refused while derived records await regeneration
     * or a surface failed its checks: those are not judgement calls.
     */
    public ForgetOperation override(String id, String reasonCode) throws IOException {
        return whileWriting(() -> overrideNow(id, reasonCode));
    }

    private ForgetOperation overrideNow(String id, String reasonCode) throws IOException {
        LiveOperation op;
        synchronized (this) {
            op = requireInReview(id, "override");
            ForgetRequest.checkReasonCode(reasonCode);
            if (op.secret.suspects.stream()
                    .anyMatch(s -> s.reason().equals("regeneration-required"))) {
                throw new IllegalStateException(
                        "forget operation "
                                + id
                                + ": derived records await regeneration; regenerate or forget them,"
                                + " then re-verify (an override cannot clear them)");
            }
            if (op.pub.surfaces.stream().anyMatch(s -> !s.clean())) {
                throw new IllegalStateException(
                        "forget operation "
                                + id
                                + ": a surface failed its checks or cannot erase physically; fix it"
                                + " and re-verify (an override covers suspects only)");
            }
        }
        seal.seal(op, reasonCode);
        synchronized (this) {
            return view(op);
        }
    }

    /**
     * Places a legal hold on a subject or a source of a tenant; an operation it covers stops at
     * BLOCKED.
     */
    public LegalHold placeHold(String tenant, ForgetScope scope, String reasonCode)
            throws IOException {
        return whileWriting(
                () -> {
                    synchronized (this) {
                        ensureOpen();
                        ensureLedgerSound();
                        LegalHold h = holds.placeHold(tenant, scope, reasonCode);
                        ctx.refreshHolds();
                        return h;
                    }
                });
    }

    /** Lifts a hold; operations it stopped resume (and seal if nothing else holds them). */
    public void liftHold(String holdId) throws IOException {
        List<String> resume =
                whileWriting(
                        () -> {
                            synchronized (this) {
                                ensureLedgerSound();
                                List<String> r = holds.liftHold(holdId);
                                ctx.refreshHolds();
                                return r;
                            }
                        });
        resume.forEach(worker::submit);
    }

    public synchronized List<LegalHold> holds() {
        return holds.list();
    }

    /**
     * Lifts the fences sealed forgets left on a subject or on record ids of a tenant, with
     * evidence; writes in the scope are accepted again as new records (see {@link Readmissions}).
     */
    public Readmission readmit(String tenant, ForgetScope scope, String reasonCode)
            throws IOException {
        synchronized (this) {
            ensureOpen();
        }
        return whileWriting(() -> readmissions.readmit(tenant, scope, reasonCode));
    }

    /** Every re-admission recorded, oldest first. */
    public List<Readmission> readmissions() {
        return readmissions.list();
    }

    /**
     * Adds a surface; it blocks the scopes of operations still unsealed (a legal hold can keep one
     * open for months) before it takes part in anything else.
     */
    public void registerSurface(ErasureSurface surface) {
        List<LiveOperation> open = new ArrayList<>();
        synchronized (this) {
            for (ErasureSurface s : ctx.surfaces) {
                if (s.name().equals(surface.name())) {
                    throw new IllegalArgumentException(
                            "erasure surface '" + surface.name() + "' is already registered");
                }
            }
            for (LiveOperation op : ctx.operations.values()) {
                if (op.pub.state != OperationState.SEALED && op.blocked != null) {
                    open.add(op);
                }
            }
            ctx.surfaces.add(surface);
        }
        for (LiveOperation op : open) {
            block.blockOn(surface, op, op.blocked);
        }
    }

    public AnchoredLedger ledger() {
        return ctx.ledger;
    }

    /** Records a snapshot so later forgets purge their records from it too. */
    public void registerSnapshot(Path target, CollectionEngine c) throws IOException {
        ctx.snapshots.register(target, c);
    }

    // ---- evidence ----------------------------------------------------------------------------

    /**
     * Re-reads the ledger file and cross-checks it against the anchor and every sealed operation's
     * receipt.
     */
    public synchronized LedgerVerification verifyLedger() throws IOException {
        return ctx.ledger.verify(publicStates());
    }

    public synchronized StoreHealth health() {
        int paused = 0;
        if (ctx.ledger.problem() != null || ctx.fault.tripped()) {
            for (LiveOperation op : ctx.operations.values()) {
                if (!op.pub.state.isSettled()) {
                    paused++;
                }
            }
        }
        return new StoreHealth(
                ctx.ledger.problem() == null && !closing && !ctx.fault.tripped(),
                ctx.ledger.problem(),
                ctx.ledger.head(),
                ctx.ledger.anchoredHead(),
                paused,
                ctx.ledger.reconciledWithoutEvidence(),
                ctx.fault.problem());
    }

    /** See {@link AnchoredLedger#restart}; unfinished operations resume afterwards. */
    public LedgerHead restartLedger(String reasonCode) throws IOException {
        return whileWriting(
                () -> {
                    synchronized (this) {
                        ensureOpen();
                        LedgerHead head = ctx.ledger.restart(reasonCode, publicStates());
                        for (LiveOperation op : ctx.operations.values()) {
                            if (!op.pub.state.isSettled()) {
                                worker.submit(op.pub.id);
                            }
                        }
                        return head;
                    }
                });
    }

    // ---- pausing writes ----------------------------------------------------------------------

    /** A write of the protocol's, run while {@link #writes} is held shared. */
    @FunctionalInterface
    private interface ProtocolWrite<T> {
        T run() throws IOException;
    }

    private <T> T whileWriting(ProtocolWrite<T> write) throws IOException {
        writes.readLock().lock();
        try {
            return write.run();
        } finally {
            writes.readLock().unlock();
        }
    }

    /**
     * Holds every write of the protocol's until the returned pause is closed (on this thread):
     * waits for the ones under way (a mark, an override, a hold, a re-admission, a ledger restart,
     * and the step the worker is in, or until it calls into a registered surface, between two of
     * its writes), and keeps new ones waiting. Searches, gets and the operations' states are not
     * held. The caller must not hold this protocol's monitor, nor a collection's writer mutex (a
     * mark waits for those while it holds its share).
     */
    public Pause pauseWrites() {
        writes.writeLock().lock();
        return () -> writes.writeLock().unlock();
    }

    private List<OperationLog.Public> publicStates() {
        return ctx.operations.values().stream().map(o -> o.pub).toList();
    }

    private void ensureLedgerSound() {
        ctx.ledger.ensureSound();
    }

    // ---- views and helpers ------------------------------------------------------------------

    /** The operation, in NEEDS_REVIEW, for the operator to {@code act} on; under this monitor. */
    private LiveOperation requireInReview(String id, String act) {
        ensureLedgerSound();
        LiveOperation op = require(id);
        if (op.pub.state != OperationState.NEEDS_REVIEW) {
            throw new IllegalStateException(
                    "forget operation "
                            + id
                            + ": expected NEEDS_REVIEW to "
                            + act
                            + ", found "
                            + op.pub.state);
        }
        return op;
    }

    private LiveOperation require(String id) {
        LiveOperation op = ctx.operations.get(id);
        if (op == null) {
            throw new IllegalArgumentException("no forget operation with id " + id);
        }
        return op;
    }

    private ForgetOperation view(LiveOperation op) {
        Map<OperationState, Instant> timeline = new LinkedHashMap<>();
        op.pub.timeline.forEach((s, t) -> timeline.put(s, Instant.EPOCH.plusNanos(t * 1000)));
        List<Suspect> suspects = op.secret == null ? List.of() : List.copyOf(op.secret.suspects);
        String note = op.failure != null && op.pub.note == null ? op.failure : op.pub.note;
        return new ForgetOperation(
                op.pub.id,
                op.pub.tenant,
                op.pub.scopeKind,
                ForgetEvidence.hex(op.pub.scopeHash),
                op.pub.reasonCode,
                op.pub.state,
                timeline,
                op.pub.forgotten,
                op.pub.surfaces,
                suspects,
                op.pub.holds,
                op.pub.receipt,
                note,
                op.pub.outcome == null ? null : ErasureOutcome.valueOf(op.pub.outcome));
    }

    private void ensureOpen() {
        if (closing) {
            throw new IllegalStateException("store is closing: no new forget operations");
        }
    }

    /**
     * Stops the worker after the batch step it is in; unfinished operations resume at the next
     * open.
     */
    @Override
    public void close() throws IOException {
        closing = true;
        stoppedCleanly = worker.stop();
        try {
            ctx.store.log().close();
        } finally {
            ctx.ledger.close();
        }
    }
}
