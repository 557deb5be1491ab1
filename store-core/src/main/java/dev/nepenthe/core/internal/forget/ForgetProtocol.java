package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Filter;
import dev.nepenthe.core.StoreHealth;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.JoinKeys;
import dev.nepenthe.core.internal.engine.RecordAccess;
import dev.nepenthe.core.internal.engine.BackgroundPriority;
import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import dev.nepenthe.core.internal.evidence.EvidenceLedger;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.ErasureOutcome;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.ForgottenScopeException;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import java.util.function.Supplier;
import javax.crypto.AEADBadTagException;

/**
 * The forget protocol: mark, propagate, verify, seal (see DESIGN.md, "The forget protocol").
 *
 * <p>{@link #forget} marks on the caller's thread: it installs the write fence, blocks every
 * read of the scope in every collection and records the operation durably, then returns. One
 * worker thread carries operations on through cleanup, verification and sealing, one at a time;
 * every state change is written to the operation log before the next phase starts, so a crash
 * at any point resumes at the next open, where the marks are re-applied before anything is
 * served.
 *
 * <p>What is stored: the operation log and the evidence ledger hold keyed hashes, counts,
 * states and times. An operation's scope and its probe vectors (copies of the forgotten
 * vectors, which the verification searches with) are sealed under a key of the operation's own
 * that is destroyed when it seals.
 */
public final class ForgetProtocol implements CollectionEngine.WriteFence, Closeable {

    private static final System.Logger LOG = System.getLogger(ForgetProtocol.class.getName());

    private static final class Op {
        final OperationLog.Public pub;
        OperationSecret secret;
        /** The live filter of a metadata scope, for fencing while this process runs. */
        Filter filter;
        String failure;
        /** Sealed, but the collections and surfaces have not dropped its blocks yet: not settled for waiters. */
        boolean releasing;
        /** What the mark blocked, for surfaces registered while the operation is unsealed (memory only). */
        BlockedScope blocked;
        /** Surfaces whose block failed: they may have kept serving the scope, so the operation cannot seal. */
        final Map<String, String> blockFailures = new java.util.concurrent.ConcurrentHashMap<>();

        Op(OperationLog.Public pub, OperationSecret secret) {
            this.pub = pub;
            this.secret = secret;
        }
    }

    /** Write fences: scopes of live operations (plaintext, in memory) and keyed hashes of sealed ones. */
    private record Active(String operation, String tenant, BiPredicate<String, VectorRecord> inScope,
            Set<String> forgottenIds) {}

    private record Fences(List<Active> active, Map<KeyedHash.Hash, String> hashed) {
        static final Fences NONE = new Fences(List.of(), Map.of());
    }

    private final Supplier<List<CollectionEngine>> engines;
    private final ProbePolicy probePolicy;
    private final KeyedHash hashes;
    private final Keystore keystore;
    private final OperationLog log;
    private final AnchoredLedger ledger;
    private final SnapshotRegistry snapshots;
    private final ForgetEvidence evidence;
    private final List<ErasureSurface> surfaces = new CopyOnWriteArrayList<>();
    private final ExecutorService worker;
    private final ForkJoinPool parallel;
    private final Map<String, Op> ops = new LinkedHashMap<>();
    private final Map<KeyedHash.Hash, String> byIdempotency = new HashMap<>();
    private volatile Fences fences = Fences.NONE;
    private volatile boolean closing;
    private ReconciliationReport reconciliation = new ReconciliationReport(0, 0, 0);

    /** What reconciliation did at open: sealed operations re-verified, records removed again, operations resumed. */
    public record ReconciliationReport(int sealedChecked, int resurrectedRemoved, int resumed) {}

    public ForgetProtocol(Path keysFolder, KeyedHash hashes, Keystore keystore, SigningKey signer,
            Supplier<List<CollectionEngine>> collections, int workerNice, ProbePolicy probePolicy) throws IOException {
        this.engines = collections;
        this.probePolicy = probePolicy;
        this.hashes = hashes;
        this.keystore = keystore;
        this.snapshots = new SnapshotRegistry(keysFolder.resolve("snapshots.registry"), hashes);
        this.evidence = new ForgetEvidence(hashes, signer);
        this.log = OperationLog.open(keysFolder.resolve("operations"));
        AnchoredLedger l;
        try {
            l = AnchoredLedger.open(keysFolder.resolve("evidence").resolve("ledger.bin"), signer, log);
        } catch (IOException | RuntimeException e) {
            log.close();
            throw e;
        }
        this.ledger = l;
        this.parallel = new ForkJoinPool(Runtime.getRuntime().availableProcessors(), pool -> {
            ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
            t.setName("nepenthe-forget-parallel-" + t.getPoolIndex());
            t.setDaemon(true);
            return t;
        }, null, false);
        this.worker = Executors.newSingleThreadExecutor(r -> {
            // Searches come first: the worker runs at a lower OS priority (measured: search p99
            // while forgets run, BENCHMARKS.md).
            Thread t = new Thread(() -> {
                if (workerNice > 0) {
                    BackgroundPriority.lowerCurrentThread(workerNice);
                }
                r.run();
            }, "nepenthe-forget");
            t.setDaemon(true);
            return t;
        });
    }

    // ---- start-up: load, re-mark, reconcile, resume ------------------------------------------

    /**
     * Loads every operation, re-applies the marks of the live ones, re-verifies the sealed ones
     * against what the store now holds (removing anything that came back, as a restored snapshot
     * could bring it), then resumes the unfinished ones on the worker. Runs before the store
     * serves.
     */
    public synchronized void start() throws IOException {
        for (OperationLog.Stored s : log.operations().values()) {
            OperationSecret secret = null;
            if (s.sealedPrivate() != null) {
                secret = openSecret(s.pub().id, s.sealedPrivate());
            }
            Op op = new Op(s.pub(), secret);
            ops.put(op.pub.id, op);
            byIdempotency.put(op.pub.idempotency, op.pub.id);
            if (op.pub.state == OperationState.SEALED) {
                // A crash between sealing and destroying the operation's key: finish it.
                keystore.destroy(operationKeyId(op.pub.id));
                op.secret = null;
            } else if (secret == null) {
                throw new CorruptFileException(keystoreFile(), "forget operation " + op.pub.id + " is unfinished ("
                        + op.pub.state + ") but its private part cannot be read (its key is missing)");
            }
        }
        ledger.checkAtOpen(publicStates());
        for (CollectionEngine c : engines.get()) {
            c.setFence(this);
        }
        refreshFences();
        int resumed = 0;
        for (Op op : ops.values()) {
            if (op.pub.state != OperationState.SEALED) {
                blockEverywhere(op);
            }
        }
        reconciliation = new ReconciliationReport(countSealed(), reconcile(), 0);
        for (Op op : ops.values()) {
            if (!op.pub.state.isSettled() && ledger.problem() == null) {
                resumed++;
                submit(op.pub.id);
            }
        }
        reconciliation = new ReconciliationReport(reconciliation.sealedChecked(), reconciliation.resurrectedRemoved(),
                resumed);
    }

    /** The collections as the forget engine works on them (a view made per call: collections come and go). */
    private List<CollectionEraser> collections() {
        return engines.get().stream().map(CollectionEraser::new).toList();
    }

    private Path keystoreFile() {
        return keystore.file();
    }

    private int countSealed() {
        return (int) ops.values().stream().filter(o -> o.pub.state == OperationState.SEALED).count();
    }

    public synchronized ReconciliationReport reconciliation() {
        return reconciliation;
    }

    /** A collection created while the store runs joins the fences. */
    public void adopt(CollectionEngine c) {
        c.setFence(this);
    }

    /**
     * Re-verifies sealed operations against the live records: any record a sealed operation's
     * fences name is removed again, and the removal is recorded as evidence. Returns how many.
     */
    public int reconcile() throws IOException {
        Map<KeyedHash.Hash, String> hashed = fences.hashed();
        if (hashed.isEmpty()) {
            return 0;
        }
        int removed = 0;
        Set<String> operations = new java.util.TreeSet<>();
        for (CollectionEraser c : collections()) {
            removed += c.removeWhere(r -> {
                String op = fencedBy(hashed, c.name(), r);
                if (op != null) {
                    operations.add(op);
                    return true;
                }
                return false;
            });
        }
        if (removed > 0 && ledger.problem() != null) {
            // Removing what came back is never wrong; its evidence waits for a sound ledger.
            ledger.countUnrecorded(removed);
            LOG.log(Level.WARNING, "reconciliation removed {0} records that sealed forget operations had erased; the"
                    + " evidence ledger is damaged, so no entry records it", removed);
        } else if (removed > 0) {
            Map<String, Object> body = new TreeMap<>();
            body.put("type", "reconciliation");
            body.put("removed", removed);
            body.put("operations", List.copyOf(operations));
            body.put("policy", ForgetEvidence.POLICY);
            appendEvidence(body);
            LOG.log(Level.WARNING, "reconciliation removed {0} records that sealed forget operations had erased"
                    + " (a restored snapshot or a lost journal brought them back)", removed);
        }
        return removed;
    }

    // ---- the API -----------------------------------------------------------------------------

    /**
     * Marks the request's scope and returns the operation (BLOCKED, or a later state when the
     * idempotency key names an existing operation). Cleanup, verification and sealing go on in
     * the background; see {@link #await}.
     */
    public ForgetOperation forget(ForgetRequest request) throws IOException {
        Op op;
        synchronized (this) {
            ensureOpen();
            ensureLedgerSound();
            double threshold = probePolicy.effective(request.probeThreshold());
            request.identifiers().forEach(JoinKeys.Identifier::of); // refuses an identifier with nothing to match
            KeyedHash.Hash idem = hashes.of("forget-idempotency", request.tenant(), request.idempotencyKey());
            KeyedHash.Hash requestHash = requestHash(request, threshold);
            String existing = byIdempotency.get(idem);
            if (existing != null) {
                Op old = ops.get(existing);
                if (!old.pub.requestHash.equals(requestHash)) {
                    throw new IllegalArgumentException("idempotency key already used by forget operation " + existing
                            + " for a different request; expected the same tenant, scope, reason, threshold and level,"
                            + " or a new key");
                }
                return view(old);
            }
            OperationLog.Public pub = new OperationLog.Public();
            pub.id = "fop-" + HexFormat.of().formatHex(dev.nepenthe.core.internal.io.ChecksummedFiles.newFileId()).substring(0, 20);
            pub.tenant = request.tenant();
            pub.scopeKind = request.scope().kind();
            pub.scopeHash = scopeHash(request.tenant(), request.scope());
            pub.reasonCode = request.reasonCode();
            pub.idempotency = idem;
            pub.requestHash = requestHash;
            pub.threshold = threshold;
            pub.level = request.level();
            pub.tenantKnown = collections().stream().anyMatch(c -> c.engine().hasTenant(request.tenant()));
            pub.state = OperationState.RECEIVED;
            pub.timeline.put(OperationState.RECEIVED, nowMicros());
            OperationSecret secret = new OperationSecret();
            secret.scope = request.scope();
            secret.identifiers.addAll(request.identifiers());
            pub.identifiers = request.identifiers().size();
            op = new Op(pub, secret);
            if (request.scope() instanceof ForgetScope.Metadata m) {
                op.filter = m.filter();
            }
            pub.fences.addAll(scopeFences(request.tenant(), request.scope()));
            // 1. The fence: from here on no write in scope is stored.
            ops.put(pub.id, op);
            byIdempotency.put(idem, pub.id);
            refreshFences();
        }
        // 2. Block every read of the scope. A metadata filter is resolved to record ids now
        //    (until then the fence tests the filter itself).
        if (op.filter != null) {
            Map<String, Set<String>> resolved = new TreeMap<>();
            for (CollectionEraser c : collections()) {
                Set<String> ids = new HashSet<>();
                c.recordsInScope(op.pub.tenant, r -> op.filter.test(r.metadata()), null).forEach(r -> ids.add(r.id()));
                if (!ids.isEmpty()) {
                    resolved.put(c.name(), Set.copyOf(ids));
                }
            }
            synchronized (this) {
                op.secret.resolved = resolved;
                refreshFences();
            }
        }
        blockEverywhere(op);
        // 3. Durable before it returns: a crash now resumes the operation at the next open.
        synchronized (this) {
            op.pub.state = OperationState.BLOCKED;
            op.pub.timeline.put(OperationState.BLOCKED, nowMicros());
            save(op, true);
        }
        ForgetOperation marked;
        synchronized (this) {
            marked = view(op);
        }
        ForgetCrash.point("after-mark");
        submit(op.pub.id);
        return marked;
    }

    public synchronized Optional<ForgetOperation> operation(String id) {
        Op op = ops.get(id);
        return op == null ? Optional.empty() : Optional.of(view(op));
    }

    public synchronized List<ForgetOperation> operations(Predicate<ForgetOperation> filter) {
        List<ForgetOperation> out = new ArrayList<>();
        for (Op op : ops.values()) {
            ForgetOperation v = view(op);
            if (filter.test(v)) {
                out.add(v);
            }
        }
        return out;
    }

    /**
     * Waits until the operation rests in a settled state (or stopped on a failure, which its
     * note names) and returns it.
     *
     * @throws IllegalStateException if it is still running after {@code timeout}
     */
    public ForgetOperation await(String id, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (true) {
                Op op = ops.get(id);
                if (op == null) {
                    throw new IllegalArgumentException("no forget operation with id " + id);
                }
                if ((op.pub.state.isSettled() && !op.releasing) || op.failure != null) {
                    return view(op);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("forget operation " + id + " is still " + op.pub.state + " after "
                            + timeout);
                }
                wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    /** Re-runs verification of an operation in NEEDS_REVIEW (after the operator forgot more). */
    public ForgetOperation reverify(String id) {
        synchronized (this) {
            ensureLedgerSound();
            Op op = require(id);
            if (op.pub.state != OperationState.NEEDS_REVIEW) {
                throw new IllegalStateException("forget operation " + id + ": expected NEEDS_REVIEW to re-verify, found "
                        + op.pub.state);
            }
            op.failure = null;
            enter(op, OperationState.VERIFYING);
        }
        submit(id);
        synchronized (this) {
            return view(require(id));
        }
    }

    /**
     * Seals an operation in NEEDS_REVIEW although verification flagged suspects: the operator
     * judged them not residue. The override, its reason code and the count of what it overrode
     * are written into the evidence and the receipt. Refused while derived records await
     * regeneration or a surface failed its checks: those are not judgement calls.
     */
    public ForgetOperation override(String id, String reasonCode) throws IOException {
        Op op;
        synchronized (this) {
            ensureLedgerSound();
            op = require(id);
            if (op.pub.state != OperationState.NEEDS_REVIEW) {
                throw new IllegalStateException("forget operation " + id + ": expected NEEDS_REVIEW to override, found "
                        + op.pub.state);
            }
            ForgetRequest.checkReasonCode(reasonCode);
            if (op.secret.suspects.stream().anyMatch(s -> s.reason().equals("regeneration-required"))) {
                throw new IllegalStateException("forget operation " + id + ": derived records await regeneration;"
                        + " regenerate or forget them, then re-verify (an override cannot clear them)");
            }
            if (op.pub.surfaces.stream().anyMatch(s -> !s.clean())) {
                throw new IllegalStateException("forget operation " + id + ": a surface failed its checks or cannot"
                        + " erase physically; fix it and re-verify (an override covers suspects only)");
            }
        }
        seal(op, reasonCode);
        synchronized (this) {
            return view(op);
        }
    }

    public synchronized LegalHold placeHold(String tenant, ForgetScope scope, String reasonCode) throws IOException {
        ensureOpen();
        ensureLedgerSound();
        java.util.Objects.requireNonNull(tenant, "hold tenant");
        ForgetRequest.checkReasonCode(reasonCode);
        KeyedHash.Hash h = switch (scope) {
            case ForgetScope.Subject s -> holdSubject(tenant, s.subject());
            case ForgetScope.Source s -> holdSource(tenant, s.sourceKind(), s.sourceId());
            default -> throw new IllegalArgumentException("legal hold scope: expected a subject or a source, got "
                    + scope.kind());
        };
        String id = "hold-" + HexFormat.of().formatHex(dev.nepenthe.core.internal.io.ChecksummedFiles.newFileId()).substring(0, 16);
        OperationLog.StoredHold hold = new OperationLog.StoredHold(id, tenant, scope.kind(), h, reasonCode,
                System.currentTimeMillis(), 0);
        log.saveHold(hold);
        appendEvidence(Map.of("type", "legal-hold", "hold", id, "tenant", hex(hashes.tenant(tenant)), "scope",
                Map.of("kind", scope.kind(), "hash", hex(h)), "reason", reasonCode, "event", "placed", "policy", ForgetEvidence.POLICY));
        return toHold(hold);
    }

    /** Lifts a hold; operations it stopped resume (and seal if nothing else holds them). */
    public void liftHold(String holdId) throws IOException {
        List<String> resume = new ArrayList<>();
        synchronized (this) {
            ensureLedgerSound();
            OperationLog.StoredHold h = log.holds().get(holdId);
            if (h == null || h.liftedAt() > 0) {
                throw new IllegalArgumentException("legal hold " + holdId + ": expected an active hold, found "
                        + (h == null ? "none" : "it lifted already"));
            }
            log.saveHold(new OperationLog.StoredHold(h.id(), h.tenant(), h.scopeKind(), h.hash(), h.reasonCode(),
                    h.placedAt(), System.currentTimeMillis()));
            appendEvidence(Map.of("type", "legal-hold", "hold", holdId, "event", "lifted", "policy", ForgetEvidence.POLICY));
            for (Op op : ops.values()) {
                if (op.pub.state == OperationState.COMPLETED_WITH_EXCEPTION && op.pub.holds.contains(holdId)) {
                    op.pub.holds.clear();
                    op.pub.note = null;
                    enter(op, OperationState.BLOCKED);
                    save(op, false);
                    resume.add(op.pub.id);
                }
            }
        }
        resume.forEach(this::submit);
    }

    public synchronized List<LegalHold> holds() {
        return log.holds().values().stream().map(ForgetProtocol::toHold).toList();
    }

    /**
     * Adds a surface; it blocks the scopes of operations still unsealed (a legal hold can keep
     * one open for months) before it takes part in anything else.
     */
    public void registerSurface(ErasureSurface surface) {
        List<Op> open = new ArrayList<>();
        synchronized (this) {
            for (ErasureSurface s : surfaces) {
                if (s.name().equals(surface.name())) {
                    throw new IllegalArgumentException("erasure surface '" + surface.name() + "' is already registered");
                }
            }
            for (Op op : ops.values()) {
                if (op.pub.state != OperationState.SEALED && op.blocked != null) {
                    open.add(op);
                }
            }
            surfaces.add(surface);
        }
        for (Op op : open) {
            blockOn(surface, op, op.blocked);
        }
    }

    public AnchoredLedger ledger() {
        return ledger;
    }

    /** Records a snapshot so later forgets purge their records from it too. */
    public void registerSnapshot(Path target, CollectionEngine c) throws IOException {
        snapshots.register(target, c);
    }

    // ---- the fence ---------------------------------------------------------------------------

    @Override
    public void check(String collection, List<VectorRecord> batch) {
        Fences f = fences;
        if (f.active().isEmpty() && f.hashed().isEmpty()) {
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            VectorRecord r = batch.get(i);
            for (Active a : f.active()) {
                if (!a.tenant().equals(r.tenant())) {
                    continue;
                }
                if (a.inScope().test(collection, r)) {
                    throw new ForgottenScopeException(a.operation(), i, "it falls in the scope of a forget");
                }
                if (a.forgottenIds().contains(collection + '\0' + r.id())) {
                    throw new ForgottenScopeException(a.operation(), i, "its id is that of a forgotten record");
                }
                for (String d : r.derivedFrom()) {
                    if (a.forgottenIds().contains(collection + '\0' + d)) {
                        throw new ForgottenScopeException(a.operation(), i, "its derivedFrom names a forgotten record");
                    }
                }
            }
            if (!f.hashed().isEmpty()) {
                String op = fencedBy(f.hashed(), collection, r);
                if (op != null) {
                    throw new ForgottenScopeException(op, i, "it, or a record it derives from, was forgotten");
                }
            }
        }
    }

    /** The sealed operation whose keyed-hash fences name this record (or what it derives from), or null. */
    private String fencedBy(Map<KeyedHash.Hash, String> hashed, String collection, VectorRecord r) {
        if (r.subject() != null) {
            String op = hashed.get(fenceSubject(r.tenant(), r.subject()));
            if (op != null) {
                return op;
            }
        }
        if (r.source() != null) {
            String op = hashed.get(fenceSource(r.tenant(), r.source().kind(), r.source().id(), null));
            if (op == null) {
                op = hashed.get(fenceSource(r.tenant(), r.source().kind(), r.source().id(), r.source().version()));
            }
            if (op != null) {
                return op;
            }
        }
        List<String> ids = new ArrayList<>(r.derivedFrom());
        ids.add(r.id());
        for (String id : ids) {
            String op = hashed.get(fenceRecord("*", r.tenant(), id));
            if (op == null) {
                op = hashed.get(fenceRecord(collection, r.tenant(), id));
            }
            if (op != null) {
                return op;
            }
        }
        return null;
    }

    private synchronized void refreshFences() {
        List<Active> active = new ArrayList<>();
        Map<KeyedHash.Hash, String> hashed = new HashMap<>();
        for (Op op : ops.values()) {
            if (op.pub.state == OperationState.SEALED) {
                op.pub.fences.forEach(h -> hashed.put(h, op.pub.id));
                continue;
            }
            Set<String> forgottenIds = new HashSet<>();
            for (OperationSecret.Forgotten f : op.secret.removed) {
                forgottenIds.add(f.collection() + '\0' + f.removed().record().id());
            }
            // Capture what the predicate reads: sealing replaces the operation's secret while a
            // writer may still hold these fences.
            OperationSecret secret = op.secret;
            Filter filter = op.filter;
            BiPredicate<String, VectorRecord> inScope = (coll, r) -> scopeTest(secret, coll).test(r)
                    || (filter != null && filter.test(r.metadata()));
            active.add(new Active(op.pub.id, op.pub.tenant, inScope, forgottenIds));
        }
        fences = new Fences(List.copyOf(active), Map.copyOf(hashed));
    }

    private static Predicate<VectorRecord> scopeTest(Op op, String collection) {
        return scopeTest(op.secret, collection);
    }

    private static Predicate<VectorRecord> scopeTest(OperationSecret secret, String collection) {
        Map<String, Set<String>> resolved = secret.resolved;
        if (resolved != null) {
            Set<String> ids = resolved.getOrDefault(collection, Set.of());
            return r -> ids.contains(r.id());
        }
        ForgetScope scope = secret.scope;
        return scope == null ? r -> false : scope::matches;
    }

    private static String subjectHint(Op op) {
        return op.secret.scope instanceof ForgetScope.Subject s ? s.subject() : null;
    }

    /** The mark: every collection hides the scope, then every registered surface blocks it. */
    private void blockEverywhere(Op op) {
        Map<String, Set<String>> ids = new HashMap<>();
        for (CollectionEraser c : collections()) {
            Set<String> hidden = new HashSet<>(c.block(op.pub.id, op.pub.tenant, scopeTest(op, c.name()), subjectHint(op)));
            for (Suspect s : op.secret.suspects) {
                if (s.reason().equals("regeneration-required") && s.collection().equals(c.name())) {
                    hidden.addAll(c.block(op.pub.id, op.pub.tenant, r -> r.id().equals(s.recordId()), null));
                }
            }
            // Records the cleanup already removed stay blocked too (a resumed operation).
            for (OperationSecret.Forgotten f : op.secret.removed) {
                if (f.collection().equals(c.name())) {
                    hidden.add(f.removed().record().id());
                }
            }
            if (!hidden.isEmpty()) {
                ids.put(c.name(), hidden);
            }
        }
        BlockedScope scope = new BlockedScope(op.pub.id, op.pub.tenant, subjectHint(op), ids);
        synchronized (this) {
            op.blocked = scope;
        }
        for (ErasureSurface s : surfaces) {
            blockOn(s, op, scope);
        }
    }

    private void blockOn(ErasureSurface s, Op op, BlockedScope scope) {
        try {
            s.block(scope);
        } catch (IOException | RuntimeException e) {
            // Never the scope or the message (a surface's message may quote what it holds).
            op.blockFailures.put(s.name(), e.getClass().getSimpleName());
            LOG.log(Level.ERROR, "erasure surface " + s.name() + " failed to block forget operation " + op.pub.id + " ("
                    + e.getClass().getSimpleName() + "): it may serve the scope; the operation cannot seal");
        }
    }

    // ---- the worker --------------------------------------------------------------------------

    private void submit(String id) {
        if (closing) {
            return;
        }
        // The phases run in the forget's own pool, so that their parallel streams (the probe on
        // more than two cores, a REBUILD's index rebuild) stay out of the common pool: the pool's
        // threads are started from the worker and inherit its lower priority, while the common
        // pool's threads, shared with the application, never do.
        worker.execute(() -> parallel.submit(() -> advance(id)).join());
    }

    private void advance(String id) {
        Op op;
        synchronized (this) {
            op = ops.get(id);
        }
        try {
            while (!closing) {
                OperationState s;
                synchronized (this) {
                    s = op.pub.state;
                }
                switch (s) {
                    case BLOCKED -> checkHolds(op);
                    case CLEANUP -> cleanup(op);
                    case VERIFYING -> {
                        // Sealing starts after verify's frame is gone: its locals hold the
                        // forgotten records, which must not outlive SEALED (heap dumps).
                        if (verify(op)) {
                            seal(op, null);
                        }
                    }
                    default -> {
                        return;
                    }
                }
            }
        } catch (ForgetCrash.Simulated crash) {
            synchronized (this) {
                op.failure = crash.getMessage();
                notifyAll();
            }
        } catch (Throwable t) {
            // Messages of the store's exceptions name files, counts and ids of operations, never content.
            LOG.log(Level.ERROR, "forget operation " + id + " stopped in " + op.pub.state + ": " + t);
            synchronized (this) {
                op.failure = t.getClass().getSimpleName() + ": " + t.getMessage();
                op.pub.note = "stopped in " + op.pub.state + " (" + op.failure + "); it resumes at the next open";
                notifyAll();
            }
        }
    }

    /** BLOCKED: a legal hold on any record in scope stops the operation here, data kept and blocked. */
    private void checkHolds(Op op) throws IOException {
        Map<KeyedHash.Hash, String> active = new HashMap<>();
        synchronized (this) {
            for (OperationLog.StoredHold h : log.holds().values()) {
                if (h.liftedAt() == 0 && h.tenant().equals(op.pub.tenant)) {
                    active.put(h.hash(), h.id());
                }
            }
        }
        Set<String> holding = new java.util.TreeSet<>();
        if (!active.isEmpty()) {
            String tenant = op.pub.tenant;
            if (op.secret.scope instanceof ForgetScope.Subject s) {
                addIfHeld(active, holdSubject(tenant, s.subject()), holding);
            }
            if (op.secret.scope instanceof ForgetScope.Source s) {
                addIfHeld(active, holdSource(tenant, s.sourceKind(), s.sourceId()), holding);
            }
            for (CollectionEraser c : collections()) {
                for (VectorRecord r : c.recordsInScope(tenant, scopeTest(op, c.name()), subjectHint(op))) {
                    if (r.subject() != null) {
                        addIfHeld(active, holdSubject(tenant, r.subject()), holding);
                    }
                    if (r.source() != null) {
                        addIfHeld(active, holdSource(tenant, r.source().kind(), r.source().id()), holding);
                    }
                }
            }
        }
        synchronized (this) {
            if (!holding.isEmpty()) {
                op.pub.holds.clear();
                op.pub.holds.addAll(holding);
                op.pub.note = "held by " + String.join(", ", holding) + ": data kept, retrieval blocked; lifting the"
                        + " hold resumes the operation";
                enter(op, OperationState.COMPLETED_WITH_EXCEPTION);
                appendEvidence(evidence.body(op.pub, "held", null));
                save(op, false);
                return;
            }
            enter(op, OperationState.CLEANUP);
            save(op, false);
        }
    }

    private static void addIfHeld(Map<KeyedHash.Hash, String> active, KeyedHash.Hash h, Set<String> out) {
        String id = active.get(h);
        if (id != null) {
            out.add(id);
        }
    }

    /**
     * CLEANUP: remove the scope and its provenance closure from every collection (probe vectors
     * saved durably first), purge index residue, purge registered snapshots and every
     * registered surface.
     */
    private void cleanup(Op op) throws IOException {
        for (CollectionEraser c : collections()) {
            CollectionEraser.Cleanup done = c.purge(op.pub.id, op.pub.tenant, scopeTest(op, c.name()), subjectHint(op),
                    c.engine().spec().provenance() == CollectionSpec.Provenance.CASCADE, doomed -> {
                        synchronized (this) {
                            Set<String> known = new HashSet<>();
                            op.secret.removed.forEach(f -> known.add(f.collection() + '\0' + f.removed().record().id()));
                            for (CollectionEraser.Removed r : doomed) {
                                if (known.add(c.name() + '\0' + r.record().id())) {
                                    op.secret.removed.add(new OperationSecret.Forgotten(c.name(), r));
                                }
                            }
                            save(op, true);
                        }
                        ForgetCrash.point("cleanup-before-delete");
                    });
            synchronized (this) {
                op.secret.suspects.removeIf(s -> s.reason().equals("regeneration-required") && s.collection().equals(c.name()));
                op.secret.suspects.addAll(done.heldForRegeneration());
            }
        }
        ForgetCrash.point("cleanup-after-delete");
        Map<String, Long> purged = new HashMap<>();
        Set<String> touched = new HashSet<>();
        op.secret.removed.forEach(f -> touched.add(f.collection()));
        for (CollectionEraser c : collections()) {
            if (op.pub.level == ErasureLevel.REBUILD && touched.contains(c.name())) {
                // A fresh build from the survivors: no link or codebook chosen while a forgotten
                // vector was present survives.
                c.engine().rebuildIndex();
            } else if (c.purgeIndexResidue()) {
                purged.merge("collection:" + c.name() + "/index", 1L, Long::sum);
            }
        }
        purged.put("snapshots", (long) snapshots.purge(op.pub.tenant, op.secret.removed, engines.get()));
        ForgottenRecords forgotten = forgottenRecords(op);
        try {
            for (ErasureSurface s : surfaces) {
                purged.put(s.name(), s.purge(forgotten));
            }
        } finally {
            wipe(forgotten);
        }
        synchronized (this) {
            op.pub.purged.clear();
            op.pub.purged.putAll(purged);
            op.pub.forgotten.clear();
            for (OperationSecret.Forgotten f : op.secret.removed) {
                op.pub.forgotten.merge(f.collection(), 1, Integer::sum);
                op.pub.fences.add(fenceRecord(f.collection(), op.pub.tenant, f.removed().record().id()));
            }
            enter(op, OperationState.VERIFYING);
            save(op, true);
            refreshFences();
        }
    }

    /**
     * VERIFYING: every surface proves its purge; the probe searches each forgotten vector against
     * every surviving record of the tenant; join keys; the fence held. Returns true when clean
     * (the caller seals); otherwise enters NEEDS_REVIEW, listing what was found by id and score.
     */
    private boolean verify(Op op) throws IOException {
        String tenant = op.pub.tenant;
        Map<String, List<CollectionEraser.Removed>> byCollection = new HashMap<>();
        List<CollectionEraser.Removed> all = new ArrayList<>();
        for (OperationSecret.Forgotten f : op.secret.removed) {
            byCollection.computeIfAbsent(f.collection(), k -> new ArrayList<>()).add(f.removed());
            all.add(f.removed());
        }
        List<SurfaceOutcome> outcomes = new ArrayList<>();
        List<Suspect> suspects = new ArrayList<>();
        Set<String> removedIds = new HashSet<>();
        all.forEach(r -> removedIds.add(r.record().id()));
        Set<String> joinNames = new HashSet<>(removedIds);
        if (op.secret.scope instanceof ForgetScope.Subject s) {
            joinNames.add(s.subject());
        }
        int leaked = 0;
        List<JoinKeys.Identifier> identifiers = op.secret.identifiers.stream().map(JoinKeys.Identifier::of).toList();
        List<CollectionEraser> cs = collections();
        for (CollectionEraser c : cs) {
            List<CollectionEraser.Removed> mine = byCollection.getOrDefault(c.name(), List.of());
            // The integrity checker walks a whole index: run it where this forget removed
            // something, so a forget costs what its scope costs, not what the store holds.
            SurfaceOutcome index = mine.isEmpty() ? c.untouchedIndex() : c.verifyIndex(mine, mine.size());
            if (op.pub.level == ErasureLevel.REBUILD && !mine.isEmpty()) {
                index = new SurfaceOutcome(index.surface(), index.erasureClass(), index.purged(), index.checked(),
                        index.problems(), "index rebuilt from the surviving records after the removal: no influence of"
                                + " the forgotten records remains in it");
            }
            outcomes.add(index);
            if (!mine.isEmpty()) {
                outcomes.add(c.verifyStorage(mine));
            }
            leaked += c.recordsInScope(tenant, scopeTest(op, c.name()), subjectHint(op)).size();
            suspects.addAll(c.probe(tenant, all, op.pub.threshold));
            suspects.addAll(c.joinKeys(tenant, joinNames, removedIds, identifiers));
        }
        outcomes.add(new SurfaceOutcome("fence", ErasureClass.PHYSICAL, 0, cs.size(),
                leaked == 0 ? List.of() : List.of(leaked + " records in scope are live after cleanup: a write got past the mark"),
                null));
        outcomes.add(snapshots.verify(op.pub.tenant, op.secret.removed, engines.get(),
                op.pub.purged.getOrDefault("snapshots", 0L)));
        ForgottenRecords forgotten = forgottenRecords(op);
        for (ErasureSurface s : surfaces) {
            String blockFailure = op.blockFailures.get(s.name());
            if (blockFailure != null) {
                outcomes.add(new SurfaceOutcome(s.name(), s.erasureClass(), 0, 0,
                        List.of("did not block the scope at the mark (" + blockFailure + "): it may have served it"), null));
                continue;
            }
            try {
                outcomes.add(s.verify(forgotten, op.pub.purged.getOrDefault(s.name(), 0L)));
            } catch (IOException | RuntimeException e) {
                outcomes.add(new SurfaceOutcome(s.name(), s.erasureClass(), 0, 0,
                        List.of("cannot verify: " + e.getClass().getSimpleName()), null));
            }
        }
        wipe(forgotten);
        // Derived records held for regeneration stay suspects until they are gone.
        List<Suspect> regeneration = new ArrayList<>();
        List<Suspect> held;
        synchronized (this) {
            held = op.secret.suspects.stream().filter(s -> s.reason().equals("regeneration-required")).toList();
        }
        for (Suspect s : held) {
            for (CollectionEraser c : cs) {
                if (c.name().equals(s.collection()) && c.isLive(tenant, s.recordId())) {
                    regeneration.add(s);
                }
            }
        }
        List<Suspect> found = new ArrayList<>(regeneration);
        found.addAll(suspects);
        boolean clean = found.isEmpty() && outcomes.stream().allMatch(SurfaceOutcome::clean);
        ForgetCrash.point("verify-done");
        synchronized (this) {
            op.pub.surfaces.clear();
            op.pub.surfaces.addAll(outcomes);
            op.secret.suspects.clear();
            op.secret.suspects.addAll(found);
            op.pub.suspects = found.size();
            if (!clean) {
                long failing = outcomes.stream().filter(o -> !o.clean()).count();
                op.pub.note = found.size() + " suspects, " + failing + " surfaces not clean: forget more (or regenerate)"
                        + " and re-verify, or override the suspects with a recorded reason";
                enter(op, OperationState.NEEDS_REVIEW);
                appendEvidence(evidence.body(op.pub, "needs-review", null));
                save(op, true);
                return false;
            }
        }
        return true;
    }

    /**
     * SEALED: destroy the subject's keys, append the evidence, issue the receipt, then destroy
     * the operation's own key (its scope and probe vectors become unreadable).
     */
    private void seal(Op op, String overrideReason) throws IOException {
        List<String> problems = new ArrayList<>();
        int destroyed = 0;
        boolean subjectScope = op.secret.scope instanceof ForgetScope.Subject;
        if (op.secret.scope instanceof ForgetScope.Subject s) {
            for (CollectionEraser c : collections()) {
                int result = c.destroySubjectKey(op.pub.tenant, s.subject());
                if (result < 0) {
                    problems.add("collection " + c.name() + ": the subject's key is still in the keystore");
                } else {
                    destroyed += result;
                }
            }
        }
        ForgetCrash.point("after-key-destroyed");
        synchronized (this) {
            op.pub.surfaces.removeIf(o -> o.surface().equals("keystore"));
            String statement;
            if (!subjectScope) {
                statement = "record-level scope: the subject's key stays for its other records; copies in snapshots"
                        + " this store did not take are dropped by the tombstone journal if ever restored";
            } else if (destroyed > 0) {
                statement = "the subject's data keys are destroyed: every copy of its records encrypted under them (old"
                        + " log generations, snapshots, data backups) is unreadable without a keystore copy taken"
                        + " before this forget (see STORAGE.md, keystore backups)";
            } else {
                statement = "the keystore held no data key of the subject: nothing to destroy";
            }
            op.pub.surfaces.add(new SurfaceOutcome("keystore", ErasureClass.PHYSICAL, destroyed,
                    subjectScope ? collections().size() : 0, problems, statement));
            if (!problems.isEmpty()) {
                op.pub.note = "sealing failed: " + String.join("; ", problems);
                enter(op, OperationState.NEEDS_REVIEW);
                appendEvidence(evidence.body(op.pub, "needs-review", null));
                save(op, true);
                return;
            }
            enter(op, OperationState.SEALED);
            op.pub.outcome = outcome(op, destroyed).name();
            op.pub.ledgerEpoch = ledger.epoch();
            LedgerEntry entry = sealEntry(op.pub.id);
            if (entry == null) {
                entry = appendEvidence(evidence.body(op.pub, "sealed", overrideReason));
            }
            op.pub.receipt = evidence.receipt(op.pub, entry, overrideReason);
            op.pub.note = overrideReason == null ? null : "sealed by override (" + overrideReason + ")";
            save(op, false);
            ForgetCrash.point("sealed-before-key");
            keystore.destroy(operationKeyId(op.pub.id));
            log.save(op.pub, OperationLog.DESTROYED);
            // The store's copies of the forgotten records are wiped, not left for the collector.
            op.secret.removed.forEach(f -> RecordAccess.wipe(f.removed().record()));
            op.secret = null; // the in-memory copies of scope and probe go with the key
            op.blocked = null;
            op.releasing = true;
            refreshFences();
        }
        try {
            for (CollectionEraser c : collections()) {
                c.unblock(op.pub.id);
            }
            for (ErasureSurface s : surfaces) {
                try {
                    s.release(op.pub.id);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "erasure surface " + s.name() + " failed to release sealed operation "
                            + op.pub.id + " (" + e.getClass().getSimpleName() + ")");
                }
            }
        } finally {
            synchronized (this) {
                op.releasing = false;
                notifyAll();
            }
        }
    }

    /**
     * What the receipt may claim: ERASED only when something was found and removed (a record, a
     * key, an item a surface purged); otherwise nothing was there to erase.
     */
    private static ErasureOutcome outcome(Op op, int keysDestroyed) {
        boolean removed = op.pub.forgotten.values().stream().anyMatch(n -> n > 0)
                || op.pub.purged.values().stream().anyMatch(n -> n > 0) || keysDestroyed > 0;
        if (removed) {
            return ErasureOutcome.ERASED;
        }
        return op.pub.tenantKnown ? ErasureOutcome.NOTHING_FOUND : ErasureOutcome.UNKNOWN_TENANT;
    }

    private LedgerEntry sealEntry(String id) {
        return ledger.sealedEntry(id);
    }

    // ---- evidence ----------------------------------------------------------------------------

    private synchronized LedgerEntry appendEvidence(Map<String, Object> body) throws IOException {
        return ledger.append(body);
    }

    /** Re-reads the ledger file and cross-checks it against the anchor and every sealed operation's receipt. */
    public synchronized LedgerVerification verifyLedger() throws IOException {
        return ledger.verify(publicStates());
    }

    public synchronized StoreHealth health() {
        int paused = 0;
        if (ledger.problem() != null) {
            for (Op op : ops.values()) {
                if (!op.pub.state.isSettled()) {
                    paused++;
                }
            }
        }
        return new StoreHealth(ledger.problem() == null && !closing, ledger.problem(), ledger.head(), ledger.anchoredHead(),
                paused, ledger.reconciledWithoutEvidence());
    }

    /** See {@link AnchoredLedger#restart}; unfinished operations resume afterwards. */
    public synchronized LedgerHead restartLedger(String reasonCode) throws IOException {
        ensureOpen();
        LedgerHead head = ledger.restart(reasonCode, publicStates());
        for (Op op : ops.values()) {
            if (!op.pub.state.isSettled()) {
                submit(op.pub.id);
            }
        }
        return head;
    }

    private List<OperationLog.Public> publicStates() {
        return ops.values().stream().map(o -> o.pub).toList();
    }

    private void ensureLedgerSound() {
        ledger.ensureSound();
    }

    // ---- persistence of the private part -----------------------------------------------------

    private void save(Op op, boolean withSecret) throws IOException {
        log.save(op.pub, withSecret ? sealSecret(op) : null);
        notifyAll();
    }

    private KeyedHash.Hash operationKeyId(String id) {
        return hashes.of("forget-operation-key", id);
    }

    private byte[] sealSecret(Op op) throws IOException {
        DataKey key = keystore.getOrCreate(operationKeyId(op.pub.id));
        byte[] plain = op.secret.encode();
        try {
            return RecordCipher.seal(key, op.pub.id.getBytes(StandardCharsets.UTF_8), plain);
        } finally {
            java.util.Arrays.fill(plain, (byte) 0);
        }
    }

    private OperationSecret openSecret(String id, byte[] sealed) throws IOException {
        DataKey key = keystore.find(operationKeyId(id));
        if (key == null) {
            return null;
        }
        byte[] plain = null;
        try {
            plain = RecordCipher.open(key, id.getBytes(StandardCharsets.UTF_8), sealed);
            return OperationSecret.decode(plain);
        } catch (AEADBadTagException e) {
            throw new CorruptFileException(keystoreFile(), "forget operation " + id + ": its private part does not"
                    + " decrypt (changed bytes, or another master key)", e);
        } finally {
            if (plain != null) {
                java.util.Arrays.fill(plain, (byte) 0);
            }
        }
    }

    // ---- hashes ------------------------------------------------------------------------------

    private KeyedHash.Hash scopeHash(String tenant, ForgetScope scope) {
        return switch (scope) {
            case ForgetScope.Subject s -> hashes.of("forget-scope-subject", tenant, s.subject());
            case ForgetScope.Records r -> hashes.of("forget-scope-records", tenant, String.join("\0", new java.util.TreeSet<>(r.ids())));
            case ForgetScope.Source s -> hashes.of("forget-scope-source", tenant, s.sourceKind(), s.sourceId(),
                    s.version() == null ? "*" : Long.toString(s.version()));
            case ForgetScope.Metadata m -> hashes.of("forget-scope-metadata", tenant, m.filter().toString());
        };
    }

    private KeyedHash.Hash requestHash(ForgetRequest r, double threshold) {
        return hashes.of("forget-request", scopeHash(r.tenant(), r.scope()).toString(), r.reasonCode(),
                Double.toString(threshold), r.level().name(),
                String.join("\0", new java.util.TreeSet<>(r.identifiers())));
    }

    private List<KeyedHash.Hash> scopeFences(String tenant, ForgetScope scope) {
        return switch (scope) {
            case ForgetScope.Subject s -> List.of(fenceSubject(tenant, s.subject()));
            case ForgetScope.Records r -> r.ids().stream().map(id -> fenceRecord("*", tenant, id)).toList();
            case ForgetScope.Source s -> List.of(fenceSource(tenant, s.sourceKind(), s.sourceId(), s.version()));
            case ForgetScope.Metadata m -> List.of();
        };
    }

    private KeyedHash.Hash fenceSubject(String tenant, String subject) {
        return hashes.of("fence-subject", tenant, subject);
    }

    private KeyedHash.Hash fenceSource(String tenant, String kind, String id, Long version) {
        return hashes.of("fence-source", tenant, kind, id, version == null ? "*" : Long.toString(version));
    }

    private KeyedHash.Hash fenceRecord(String collection, String tenant, String id) {
        return hashes.of("fence-record", collection, tenant, id);
    }

    private KeyedHash.Hash holdSubject(String tenant, String subject) {
        return hashes.of("hold-subject", tenant, subject);
    }

    private KeyedHash.Hash holdSource(String tenant, String kind, String id) {
        return hashes.of("hold-source", tenant, kind, id);
    }

    private static String hex(KeyedHash.Hash h) {
        return ForgetEvidence.hex(h);
    }

    // ---- views and helpers ------------------------------------------------------------------

    private ForgottenRecords forgottenRecords(Op op) {
        List<ForgottenRecords.Item> items = new ArrayList<>();
        for (OperationSecret.Forgotten f : op.secret.removed) {
            items.add(new ForgottenRecords.Item(f.collection(), f.removed().record().id(), f.removed().ordinal(),
                    f.removed().record().vector()));
        }
        return new ForgottenRecords(op.pub.id, op.pub.tenant, subjectHint(op), items);
    }

    /** The vector copies handed to surfaces are wiped once they have been called. */
    private static void wipe(ForgottenRecords forgotten) {
        for (ForgottenRecords.Item i : forgotten.items()) {
            java.util.Arrays.fill(i.vector(), 0f);
        }
    }

    private void enter(Op op, OperationState s) {
        op.pub.state = s;
        op.pub.timeline.put(s, nowMicros());
    }

    private Op require(String id) {
        Op op = ops.get(id);
        if (op == null) {
            throw new IllegalArgumentException("no forget operation with id " + id);
        }
        return op;
    }

    private ForgetOperation view(Op op) {
        Map<OperationState, Instant> timeline = new LinkedHashMap<>();
        op.pub.timeline.forEach((s, t) -> timeline.put(s, Instant.EPOCH.plusNanos(t * 1000)));
        List<Suspect> suspects = op.secret == null ? List.of() : List.copyOf(op.secret.suspects);
        String note = op.failure != null && op.pub.note == null ? op.failure : op.pub.note;
        return new ForgetOperation(op.pub.id, op.pub.tenant, op.pub.scopeKind, hex(op.pub.scopeHash), op.pub.reasonCode,
                op.pub.state, timeline, op.pub.forgotten, op.pub.surfaces, suspects, op.pub.holds, op.pub.receipt, note,
                op.pub.outcome == null ? null : ErasureOutcome.valueOf(op.pub.outcome));
    }

    private static LegalHold toHold(OperationLog.StoredHold h) {
        return new LegalHold(h.id(), h.tenant(), h.scopeKind(), HexFormat.of().formatHex(h.hash().bytes()), h.reasonCode(),
                Instant.ofEpochMilli(h.placedAt()), h.liftedAt() == 0 ? null : Instant.ofEpochMilli(h.liftedAt()));
    }

    private static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }

    private void ensureOpen() {
        if (closing) {
            throw new IllegalStateException("store is closing: no new forget operations");
        }
    }

    /** Stops the worker after the phase it is in; unfinished operations resume at the next open. */
    @Override
    public void close() throws IOException {
        closing = true;
        worker.shutdown();
        try {
            if (!worker.awaitTermination(2, TimeUnit.MINUTES)) {
                LOG.log(Level.WARNING, "the forget worker did not stop within 2 minutes; closing anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        parallel.shutdown();
        try {
            log.close();
        } finally {
            ledger.close();
        }
    }
}
