package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureOutcome;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;

/**
 * SEALED: destroys the subject's data keys, appends the evidence, issues the receipt, destroys the
 * operation's own key (its scope and probe vectors become unreadable), wipes the store's copies of
 * the forgotten records, and releases the blocks.
 */
final class SealPhase {

    private static final System.Logger LOG = System.getLogger(SealPhase.class.getName());

    private final ForgetContext ctx;

    SealPhase(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /**
     * SEALED: destroy the subject's keys, append the evidence, issue the receipt, then destroy the
     * operation's own key (its scope and probe vectors become unreadable).
     */
    void seal(LiveOperation op, String overrideReason) throws IOException {
        List<String> problems = new ArrayList<>();
        int destroyed = 0;
        boolean subjectScope = op.secret.scope instanceof ForgetScope.Subject;
        if (op.secret.scope instanceof ForgetScope.Subject s) {
            for (CollectionEraser c : ctx.collections()) {
                int result = c.destroySubjectKey(op.pub.tenant, s.subject());
                if (result < 0) {
                    problems.add(
                            "collection "
                                    + c.name()
                                    + ": the subject's key is still in the keystore");
                } else {
                    destroyed += result;
                }
            }
        }
        ctx.crashPoint("after-key-destroyed");
        synchronized (ctx.monitor) {
            op.pub.surfaces.removeIf(o -> o.surface().equals("keystore"));
            String statement;
            if (!subjectScope) {
                statement =
                        "record-level scope: the subject's key stays for its other records; copies"
                            + " in snapshots this store did not take are dropped by the tombstone"
                            + " journal if ever restored";
            } else if (destroyed > 0) {
                statement =
                        "the subject's data keys are destroyed: every copy of its records encrypted"
                            + " under them (old log generations, snapshots, data backups) is"
                            + " unreadable without a keystore copy taken before this forget (see"
                            + " STORAGE.md, keystore backups)";
            } else {
                statement = "the keystore held no data key of the subject: nothing to destroy";
            }
            op.pub.surfaces.add(
                    new SurfaceOutcome(
                            "keystore",
                            ErasureClass.PHYSICAL,
                            destroyed,
                            subjectScope ? ctx.collections().size() : 0,
                            problems,
                            statement));
            if (!problems.isEmpty()) {
                op.pub.note = "sealing failed: " + String.join("; ", problems);
                op.enter(OperationState.NEEDS_REVIEW);
                ctx.appendEvidence(ctx.evidence.body(op.pub, "needs-review", null, op.batch));
                ctx.save(op, true);
                return;
            }
            OperationState before = op.pub.state;
            Long beforeSealedAt = op.pub.timeline.get(OperationState.SEALED);
            String beforeNote = op.pub.note;
            op.enter(OperationState.SEALED);
            op.pub.outcome = outcome(op, destroyed).name();
            op.pub.ledgerEpoch = ctx.ledger.epoch();
            try {
                LedgerEntry entry = ctx.ledger.sealedEntry(op.pub.id);
                if (entry == null) {
                    entry =
                            ctx.appendEvidence(
                                    ctx.evidence.body(op.pub, "sealed", overrideReason, op.batch));
                }
                op.pub.receipt = ctx.evidence.receipt(op.pub, entry, overrideReason, op.batch);
                op.pub.note =
                        overrideReason == null
                                ? null
                                : "sealed by override (" + overrideReason + ")";
                ctx.save(op, false);
            } catch (IOException | RuntimeException e) {
                // Not sealed until the evidence and the operation are durable: no one may see
                // SEALED without its receipt. The operation resumes here at the next open.
                op.pub.state = before;
                if (beforeSealedAt == null) {
                    op.pub.timeline.remove(OperationState.SEALED);
                } else {
                    op.pub.timeline.put(OperationState.SEALED, beforeSealedAt);
                }
                op.pub.outcome = null;
                op.pub.receipt = null;
                op.pub.note = beforeNote;
                throw e;
            }
            ctx.crashPoint("sealed-before-key");
            ctx.store.destroyKey(op.pub.id);
            ctx.store.saveDestroyed(op);
            // The store's copies of the forgotten records are wiped, not left for the collector.
            op.secret.removed.forEach(f -> RecordAccess.wipe(f.removed().record()));
            op.secret = null; // the in-memory copies of scope and probe go with the key
            op.blocked = null;
            op.releasing = true;
            ctx.refreshFences();
        }
        try {
            for (CollectionEraser c : ctx.collections()) {
                c.unblock(op.pub.id);
            }
            for (ErasureSurface s : ctx.surfaces) {
                try {
                    ctx.runAtSurface(() -> s.release(op.pub.id));
                } catch (RuntimeException e) {
                    LOG.log(
                            Level.WARNING,
                            "erasure surface "
                                    + s.name()
                                    + " failed to release sealed operation "
                                    + op.pub.id
                                    + " ("
                                    + e.getClass().getSimpleName()
                                    + ")");
                }
            }
        } finally {
            synchronized (ctx.monitor) {
                op.releasing = false;
                ctx.monitor.notifyAll();
            }
        }
    }

    /**
     * What the receipt may claim: ERASED only when something was found and removed (a record, a
     * key, an item a surface purged); otherwise nothing was there to erase.
     */
    private static ErasureOutcome outcome(LiveOperation op, int keysDestroyed) {
        boolean removed =
                op.pub.forgotten.values().stream().anyMatch(n -> n > 0)
                        || op.pub.purged.values().stream().anyMatch(n -> n > 0)
                        || keysDestroyed > 0;
        if (removed) {
            return ErasureOutcome.ERASED;
        }
        return op.pub.tenantKnown ? ErasureOutcome.NOTHING_FOUND : ErasureOutcome.UNKNOWN_TENANT;
    }
}
