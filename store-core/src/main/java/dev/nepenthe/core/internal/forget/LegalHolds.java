package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Legal holds: placed on a subject or a source of a tenant (stored as keyed hashes), lifted with
 * evidence, and checked at BLOCKED, where a hold on any record in scope stops the operation in
 * COMPLETED_WITH_EXCEPTION with its data kept and blocked until the hold lifts.
 */
final class LegalHolds {

    private final ForgetContext ctx;

    LegalHolds(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /**
     * Places a hold (the caller holds the monitor and has checked that the store is open and the
     * ledger sound).
     */
    LegalHold placeHold(String tenant, ForgetScope scope, String reasonCode) throws IOException {
        Objects.requireNonNull(tenant, "hold tenant");
        ForgetRequest.checkReasonCode(reasonCode);
        KeyedHash.Hash h =
                switch (scope) {
                    case ForgetScope.Subject s -> ctx.hashes.holdSubject(tenant, s.subject());
                    case ForgetScope.Source s ->
                            ctx.hashes.holdSource(tenant, s.sourceKind(), s.sourceId());
                    default ->
                            throw new IllegalArgumentException(
                                    "legal hold scope: expected a subject or a source, got "
                                            + scope.kind());
                };
        String id =
                "hold-" + HexFormat.of().formatHex(ChecksummedFiles.newFileId()).substring(0, 16);
        OperationLog.StoredHold hold =
                new OperationLog.StoredHold(
                        id, tenant, scope.kind(), h, reasonCode, System.currentTimeMillis(), 0);
        ctx.store.saveHold(hold);
        ctx.appendEvidence(
                Map.of(
                        "type",
                        "legal-hold",
                        "hold",
                        id,
                        "tenant",
                        ForgetEvidence.hex(ctx.hashes.keyed().tenant(tenant)),
                        "scope",
                        Map.of("kind", scope.kind(), "hash", ForgetEvidence.hex(h)),
                        "reason",
                        reasonCode,
                        "event",
                        "placed",
                        "policy",
                        ForgetEvidence.POLICY));
        return toHold(hold);
    }

    /**
     * Lifts an active hold with evidence; returns the operations it stopped, moved back to BLOCKED
     * for the worker to resume. The caller holds the monitor.
     */
    List<String> liftHold(String holdId) throws IOException {
        List<String> resume = new ArrayList<>();
        OperationLog.StoredHold h = ctx.store.holds().get(holdId);
        if (h == null || h.liftedAt() > 0) {
            throw new IllegalArgumentException(
                    "legal hold "
                            + holdId
                            + ": expected an active hold, found "
                            + (h == null ? "none" : "it lifted already"));
        }
        ctx.store.saveHold(
                new OperationLog.StoredHold(
                        h.id(),
                        h.tenant(),
                        h.scopeKind(),
                        h.hash(),
                        h.reasonCode(),
                        h.placedAt(),
                        System.currentTimeMillis()));
        ctx.appendEvidence(
                Map.of(
                        "type",
                        "legal-hold",
                        "hold",
                        holdId,
                        "event",
                        "lifted",
                        "policy",
                        ForgetEvidence.POLICY));
        for (LiveOperation op : ctx.operations.values()) {
            if (op.pub.state == OperationState.COMPLETED_WITH_EXCEPTION
                    && op.pub.holds.contains(holdId)) {
                op.pub.holds.clear();
                op.pub.note = null;
                op.enter(OperationState.BLOCKED);
                ctx.save(op, false);
                resume.add(op.pub.id);
            }
        }
        return resume;
    }

    /** Every hold, active or lifted. */
    List<LegalHold> list() {
        return ctx.store.holds().values().stream().map(LegalHolds::toHold).toList();
    }

    /**
     * BLOCKED: a legal hold on any record in scope stops the operation here, data kept and blocked
     * (saved, with evidence). Otherwise the operation enters CLEANUP in memory; the cleanup saves
     * that state with its first save, before anything is deleted (a crash before it resumes the
     * operation at BLOCKED, which checks the holds again).
     *
     * @return true when no hold stops it and it is in CLEANUP
     */
    boolean checkHolds(LiveOperation op) throws IOException {
        Set<String> holding = new TreeSet<>();
        String tenant = op.pub.tenant;
        if (ctx.held.anyActive(tenant)) {
            if (op.secret.scope instanceof ForgetScope.Subject s) {
                ctx.held.addHoldsOnSubject(tenant, s.subject(), holding);
            }
            if (op.secret.scope instanceof ForgetScope.Source s) {
                ctx.held.addHoldsOnSource(tenant, s.sourceKind(), s.sourceId(), holding);
            }
            for (CollectionEraser c : ctx.collections()) {
                for (VectorRecord r :
                        c.recordsInScope(tenant, op.scopeTest(c.name()), op.subjectHint())) {
                    ctx.held.addHoldsOn(tenant, r, holding);
                }
            }
        }
        synchronized (ctx.monitor) {
            if (!holding.isEmpty()) {
                op.pub.holds.clear();
                op.pub.holds.addAll(holding);
                op.pub.note =
                        "held by "
                                + String.join(", ", holding)
                                + ": data kept, retrieval blocked; lifting the"
                                + " hold resumes the operation";
                op.enter(OperationState.COMPLETED_WITH_EXCEPTION);
                ctx.appendEvidence(ctx.evidence.body(op.pub, "held", null));
                ctx.save(op, false);
                return false;
            }
            op.enter(OperationState.CLEANUP);
            return true;
        }
    }

    static LegalHold toHold(OperationLog.StoredHold h) {
        return new LegalHold(
                h.id(),
                h.tenant(),
                h.scopeKind(),
                HexFormat.of().formatHex(h.hash().bytes()),
                h.reasonCode(),
                Instant.ofEpochMilli(h.placedAt()),
                h.liftedAt() == 0 ? null : Instant.ofEpochMilli(h.liftedAt()));
    }
}
