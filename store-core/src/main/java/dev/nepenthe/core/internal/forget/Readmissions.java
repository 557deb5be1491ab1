package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.Readmission;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.forget.OperationLog.StoredReadmission;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Re-admission of a subject, or of record ids, that sealed forgets fenced. It lifts those
 * operations' fences (the ones naming the scope), so writes in the scope are accepted again, as new
 * records. What keeps the forgotten records from coming back is a version floor taken in every
 * collection: a record a lifted fence names is still one the forget erased when its version is
 * below the floor (reconciliation removes it), and every later write gets a version above it (the
 * floor is journaled, so a restore of older files cannot number writes below it).
 *
 * <p>In three steps, each durable before the next: (1) a floor in every collection; (2) the intent,
 * pending, with its floors, in the operation log; (3) the evidence entry, then the re-admission
 * complete in the operation log, and only then are the fences lifted. A crash in between leaves it
 * pending (or, before 2, not at all) and the fences up; the next open finishes a pending one before
 * the store serves, without a second ledger entry. The ledger entry holds keyed hashes, the reason
 * code, the time and the operations whose fences were lifted; never the subject or an id.
 */
final class Readmissions {

    private final ForgetContext ctx;

    Readmissions(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Re-admits a subject or record ids of a tenant (the caller checked that the store is open).
     *
     * @throws IllegalArgumentException if the scope is neither a subject nor records, the reason
     *     code is malformed, or no sealed forget fences the scope (or every fence is lifted
     *     already)
     * @throws IllegalStateException if a forget of the scope is still unsealed, or the ledger is
     *     damaged
     */
    Readmission readmit(String tenant, ForgetScope scope, String reasonCode) throws IOException {
        Objects.requireNonNull(tenant, "re-admission tenant");
        Objects.requireNonNull(scope, "re-admission scope");
        ForgetRequest.checkReasonCode(reasonCode);
        Set<KeyedHash.Hash> targets = targets(tenant, scope);
        KeyedHash.Hash scopeHash = ctx.hashes.scope(tenant, scope);
        synchronized (ctx.monitor) {
            liftsFor(
                    tenant, scope, scopeHash,
                    targets); // refuses early, before any floor is journaled
        }
        // 1. A floor in every collection. Refused below after all, a floor is harmless: it only
        //    numbers later writes higher, and a subject it marks re-admitted has no key left to
        // keep.
        String subject = scope instanceof ForgetScope.Subject s ? s.subject() : null;
        Map<String, Long> floors = new TreeMap<>();
        for (CollectionEraser c : ctx.collections()) {
            floors.put(c.engine().id(), c.reserveVersionFloor(tenant, subject));
        }
        // 2. The intent, durable: the next open finishes it if we stop before 3.
        StoredReadmission pending;
        synchronized (ctx.monitor) {
            ctx.ledger.ensureSound();
            pending =
                    new StoredReadmission(
                            "rad-"
                                    + HexFormat.of()
                                            .formatHex(ChecksummedFiles.newFileId())
                                            .substring(0, 20),
                            tenant,
                            scope.kind(),
                            scopeHash,
                            reasonCode,
                            LiveOperation.nowMicros(),
                            liftsFor(tenant, scope, scopeHash, targets),
                            floors,
                            -1,
                            null);
            ctx.store.saveReadmission(pending);
        }
        ctx.crashPoint("readmit-recorded");
        return complete(pending);
    }

    /**
     * The sealed operations' fences a re-admission of the scope lifts, none lifted before; the
     * caller holds the monitor.
     *
     * @throws IllegalStateException if a forget of the scope is not sealed, or the ledger is
     *     damaged
     * @throws IllegalArgumentException if there is nothing left to lift
     */
    private List<StoredReadmission.Lift> liftsFor(
            String tenant,
            ForgetScope scope,
            KeyedHash.Hash scopeHash,
            Set<KeyedHash.Hash> targets) {
        ctx.ledger.ensureSound();
        String what = scope instanceof ForgetScope.Subject ? "this subject" : "these record ids";
        for (LiveOperation op : ctx.operations.values()) {
            if (op.pub.tenant.equals(tenant)
                    && op.pub.state != OperationState.SEALED
                    && !lifted(op, scope, scopeHash, targets).isEmpty()) {
                throw new IllegalStateException(
                        "re-admission in tenant '"
                                + tenant
                                + "': forget operation "
                                + op.pub.id
                                + " of "
                                + what
                                + " is "
                                + op.pub.state
                                + "; expected every forget of the scope sealed"
                                + " (re-admit once it seals)");
            }
        }
        Set<StoredReadmission.Lift> taken = new HashSet<>();
        for (StoredReadmission r : ctx.store.readmissions().values()) {
            taken.addAll(r.lifts());
        }
        Set<String> takenBy = new TreeSet<>();
        List<StoredReadmission.Lift> lifts = new ArrayList<>();
        for (LiveOperation op : ctx.operations.values()) {
            if (!op.pub.tenant.equals(tenant) || op.pub.state != OperationState.SEALED) {
                continue;
            }
            for (KeyedHash.Hash h : lifted(op, scope, scopeHash, targets)) {
                StoredReadmission.Lift l = new StoredReadmission.Lift(op.pub.id, h);
                if (taken.add(l)) {
                    lifts.add(l);
                } else {
                    takenBy.addAll(liftedBy(l));
                }
            }
        }
        if (lifts.isEmpty()) {
            throw new IllegalArgumentException(
                    "re-admission in tenant '"
                            + tenant
                            + "' (scope hash "
                            + ForgetEvidence.hex(scopeHash).substring(0, 16)
                            + "): expected "
                            + what
                            + " fenced by a sealed"
                            + " forget, found "
                            + (takenBy.isEmpty()
                                    ? "no sealed forget that fences it"
                                    : "its fences lifted already by "
                                            + String.join(", ", takenBy)));
        }
        return lifts;
    }

    /**
     * Finishes re-admissions a crash left pending; at open, before anything is served, with a sound
     * ledger.
     */
    void finishPending() throws IOException {
        List<StoredReadmission> pending;
        synchronized (ctx.monitor) {
            pending =
                    ctx.store.readmissions().values().stream().filter(r -> !r.complete()).toList();
        }
        for (StoredReadmission r : pending) {
            complete(r);
        }
    }

    /** Every re-admission recorded, oldest first. */
    List<Readmission> list() {
        synchronized (ctx.monitor) {
            return ctx.store.readmissions().values().stream().map(Readmissions::view).toList();
        }
    }

    /**
     * 3. The evidence (unless a crash came after its append), then the re-admission complete in the
     * operation log, and only then the fences lifted. No write in the scope can have landed since
     * the floors were taken: the fences were up until now.
     */
    private Readmission complete(StoredReadmission r) throws IOException {
        synchronized (ctx.monitor) {
            LedgerEntry entry = entryOf(r.id());
            if (entry == null) {
                entry = ctx.appendEvidence(body(r));
            }
            ctx.crashPoint("readmit-appended");
            StoredReadmission done =
                    new StoredReadmission(
                            r.id(),
                            r.tenant(),
                            r.scopeKind(),
                            r.scopeHash(),
                            r.reasonCode(),
                            r.atMicros(),
                            r.lifts(),
                            r.floors(),
                            entry.seq(),
                            entry.hashHex());
            ctx.store.saveReadmission(done);
            ctx.refreshFences();
            return view(done);
        }
    }

    /**
     * The ledger entry of a re-admission, when a crash came after its append (a pass over the
     * entries).
     */
    private LedgerEntry entryOf(String id) {
        String marker = "\"readmission\":\"" + id + "\"";
        for (LedgerEntry e : ctx.ledger.audit().entries()) {
            if (e.body().contains(marker) && e.body().contains("\"type\":\"readmission\"")) {
                return e;
            }
        }
        return null;
    }

    /**
     * The evidence: who (keyed hashes of tenant and scope), what (the operations whose fences are
     * lifted, how many fences, how many collections took a floor), when, why. No subject, no id.
     */
    private Map<String, Object> body(StoredReadmission r) {
        Map<String, Object> b = new TreeMap<>();
        b.put("type", "readmission");
        b.put("readmission", r.id());
        b.put("tenant", ForgetEvidence.hex(ctx.hashes.keyed().tenant(r.tenant())));
        b.put("scope", Map.of("kind", r.scopeKind(), "hash", ForgetEvidence.hex(r.scopeHash())));
        b.put("reason", r.reasonCode());
        b.put("at", Instant.EPOCH.plusNanos(r.atMicros() * 1000).toString());
        b.put("lifts", operations(r));
        b.put("fencesLifted", r.lifts().size());
        b.put("collections", r.floors().size());
        b.put("policy", ForgetEvidence.POLICY);
        return b;
    }

    /**
     * Which of an operation's fences a re-admission of {@code scope} lifts: every fence of a forget
     * of the same subject (the subject's and the ids of the records it removed, so they may be
     * written again), or the fences naming the re-admitted ids.
     */
    private static Set<KeyedHash.Hash> lifted(
            LiveOperation op,
            ForgetScope scope,
            KeyedHash.Hash scopeHash,
            Set<KeyedHash.Hash> targets) {
        Set<KeyedHash.Hash> out = new LinkedHashSet<>();
        if (scope instanceof ForgetScope.Subject
                && op.pub.scopeKind.equals(scope.kind())
                && op.pub.scopeHash.equals(scopeHash)) {
            out.addAll(op.pub.fences);
            return out;
        }
        for (KeyedHash.Hash h : op.pub.fences) {
            if (targets.contains(h)) {
                out.add(h);
            }
        }
        return out;
    }

    /**
     * The keyed hashes a scope's fences carry: the subject's, or each id's in every collection and
     * in all of them.
     */
    private Set<KeyedHash.Hash> targets(String tenant, ForgetScope scope) {
        Set<KeyedHash.Hash> out = new HashSet<>();
        switch (scope) {
            case ForgetScope.Subject s -> out.add(ctx.hashes.fenceSubject(tenant, s.subject()));
            case ForgetScope.Records r -> {
                List<String> names =
                        ctx.collections().stream().map(CollectionEraser::name).toList();
                for (String id : r.ids()) {
                    out.add(ctx.hashes.fenceRecord("*", tenant, id));
                    for (String c : names) {
                        out.add(ctx.hashes.fenceRecord(c, tenant, id));
                    }
                }
            }
            default ->
                    throw new IllegalArgumentException(
                            "re-admission scope: expected a subject or record ids, got "
                                    + scope.kind()
                                    + " (a source or metadata forget's fences stay)");
        }
        return out;
    }

    private List<String> liftedBy(StoredReadmission.Lift l) {
        List<String> out = new ArrayList<>();
        for (StoredReadmission r : ctx.store.readmissions().values()) {
            if (r.lifts().contains(l)) {
                out.add(r.id() + (r.complete() ? "" : " (pending)"));
            }
        }
        return out;
    }

    private static List<String> operations(StoredReadmission r) {
        return List.copyOf(
                new TreeSet<>(r.lifts().stream().map(StoredReadmission.Lift::operation).toList()));
    }

    private static Readmission view(StoredReadmission r) {
        return new Readmission(
                r.id(),
                r.tenant(),
                r.scopeKind(),
                ForgetEvidence.hex(r.scopeHash()),
                r.reasonCode(),
                Instant.EPOCH.plusNanos(r.atMicros() * 1000),
                operations(r),
                r.complete() ? new LedgerHead(r.ledgerSeq(), r.ledgerHash()) : null);
    }
}
