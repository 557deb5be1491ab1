package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CLEANUP: removes the scope and its provenance closure from every collection, across
 * collections where {@code derivedFrom} names a record in another (the probe vectors saved
 * durably first), purges index residue (or rebuilds the index at REBUILD), then purges
 * registered snapshots and every registered surface, and records what each purged.
 */
final class CleanupPhase {

    private final ForgetContext ctx;

    CleanupPhase(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /**
     * CLEANUP: remove the scope and its provenance closure from every collection (probe vectors
     * saved durably first), purge index residue, purge registered snapshots and every
     * registered surface.
     */
    void cleanup(LiveOperation op) throws IOException {
        purgeScopeAndProvenance(op);
        ForgetCrash.point("cleanup-after-delete");
        Map<String, Long> purged = new HashMap<>();
        Set<String> touched = new HashSet<>();
        op.secret.removed.forEach(f -> touched.add(f.collection()));
        for (CollectionEraser c : ctx.collections()) {
            if (op.pub.level == ErasureLevel.REBUILD && touched.contains(c.name())) {
                // A fresh build from the survivors: no link or codebook chosen while a forgotten
                // vector was present survives.
                c.engine().rebuildIndex();
            } else if (c.purgeIndexResidue()) {
                purged.merge("collection:" + c.name() + "/index", 1L, Long::sum);
            }
            if (touched.contains(c.name())) {
                List<CollectionEraser.Removed> mine = op.secret.removed.stream()
                        .filter(f -> f.collection().equals(c.name())).map(OperationSecret.Forgotten::removed).toList();
                int merged = c.purgeText(mine);
                if (merged >= 0) {
                    purged.put("collection:" + c.name() + "/text", (long) merged);
                }
            }
        }
        purged.put("snapshots", (long) ctx.snapshots.purge(op.pub.tenant, op.secret.removed, ctx.engines.get()));
        ForgottenRecords forgotten = op.forgottenRecords();
        try {
            for (ErasureSurface s : ctx.surfaces) {
                purged.put(s.name(), s.purge(forgotten));
            }
        } finally {
            LiveOperation.wipe(forgotten);
        }
        synchronized (ctx.monitor) {
            op.pub.purged.clear();
            op.pub.purged.putAll(purged);
            op.pub.forgotten.clear();
            for (OperationSecret.Forgotten f : op.secret.removed) {
                op.pub.forgotten.merge(f.collection(), 1, Integer::sum);
                op.pub.fences.add(ctx.hashes.fenceRecord(f.collection(), op.pub.tenant, f.removed().record().id()));
            }
            op.enter(OperationState.VERIFYING);
            ctx.save(op, true);
            ctx.refreshFences();
        }
    }

    /**
     * Removes the scope and its provenance closure from every collection. The closure crosses
     * collections ({@code "@<collection>/<id>"} in {@code derivedFrom}): a collection is resolved
     * again while one of its records names a record removed or held elsewhere since its last
     * pass, so a chain A, B, A takes three passes and an operation without references one (plus a
     * lookup per record it removed in each collection). A resumed operation starts from what it
     * removed and holds already.
     */
    private void purgeScopeAndProvenance(LiveOperation op) throws IOException {
        Set<String> reached = new HashSet<>();
        synchronized (ctx.monitor) {
            op.secret.removed.forEach(f -> reached.add(f.collection() + '\0' + f.removed().record().id()));
            op.secret.suspects.stream().filter(s -> s.reason().equals("regeneration-required"))
                    .forEach(s -> reached.add(s.collection() + '\0' + s.recordId()));
        }
        List<CollectionEraser> pass = ctx.collections();
        while (!pass.isEmpty()) {
            Set<String> grown = new HashSet<>();
            for (CollectionEraser c : pass) {
                CollectionEraser.Cleanup done = c.purge(op.pub.id, op.pub.tenant, op.scopeTest(c.name()), op.subjectHint(),
                        c.engine().spec().provenance() == CollectionSpec.Provenance.CASCADE, Set.copyOf(reached), doomed -> {
                            synchronized (ctx.monitor) {
                                Set<String> known = new HashSet<>();
                                op.secret.removed.forEach(f -> known.add(f.collection() + '\0' + f.removed().record().id()));
                                for (CollectionEraser.Removed r : doomed) {
                                    if (known.add(c.name() + '\0' + r.record().id())) {
                                        op.secret.removed.add(new OperationSecret.Forgotten(c.name(), r));
                                    }
                                }
                                ctx.save(op, true);
                                // Writes deriving from what is about to go are refused from here,
                                // in every collection, not only once the cleanup is done.
                                ctx.refreshFences();
                            }
                            ForgetCrash.point("cleanup-before-delete");
                        });
                synchronized (ctx.monitor) {
                    op.secret.suspects.removeIf(s -> s.reason().equals("regeneration-required") && s.collection().equals(c.name()));
                    op.secret.suspects.addAll(done.heldForRegeneration());
                }
                for (String k : done.reached()) {
                    if (reached.add(k)) {
                        grown.add(k);
                    }
                }
            }
            List<CollectionEraser> again = new ArrayList<>();
            if (!grown.isEmpty()) {
                for (CollectionEraser c : ctx.collections()) {
                    if (c.derivesFromAny(op.pub.tenant, grown)) {
                        again.add(c);
                    }
                }
            }
            pass = again;
        }
    }
}
