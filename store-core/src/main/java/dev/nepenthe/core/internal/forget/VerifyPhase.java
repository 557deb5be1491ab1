package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.internal.engine.DerivedFromRef;
import dev.nepenthe.core.internal.engine.JoinKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * VERIFYING: every surface proves its purge (the index's scoped integrity check, a byte scan of
 * the storage, the snapshots, each registered surface); the negative-space probe searches each
 * forgotten vector against every surviving record of the tenant (through a collection's index
 * where the tenant is large there, see {@link CollectionEraser#probe}); join keys and declared
 * identifiers are looked up; the fence is shown to have held. Clean, the operation goes on to
 * seal; otherwise it rests in NEEDS_REVIEW, listing what was found.
 */
final class VerifyPhase {

    private final ForgetContext ctx;

    VerifyPhase(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /**
     * VERIFYING: every surface proves its purge; the probe searches each forgotten vector against
     * every surviving record of the tenant; join keys; the fence held. Returns true when clean
     * (the caller seals); otherwise enters NEEDS_REVIEW, listing what was found by id and score.
     */
    boolean verify(LiveOperation op) throws IOException {
        String tenant = op.pub.tenant;
        Map<String, List<CollectionEraser.Removed>> byCollection = new HashMap<>();
        List<CollectionEraser.Removed> all = new ArrayList<>();
        for (OperationSecret.Forgotten f : op.secret.removed) {
            byCollection.computeIfAbsent(f.collection(), k -> new ArrayList<>()).add(f.removed());
            all.add(f.removed());
        }
        List<SurfaceOutcome> outcomes = new ArrayList<>();
        List<Suspect> suspects = new ArrayList<>();
        List<ProbeRun> probes = new ArrayList<>();
        Set<String> removedIds = new HashSet<>();
        all.forEach(r -> removedIds.add(r.record().id()));
        Set<String> joinNames = new HashSet<>(removedIds);
        if (op.secret.scope instanceof ForgetScope.Subject s) {
            joinNames.add(s.subject());
        }
        int leaked = 0;
        List<JoinKeys.Identifier> identifiers = op.secret.identifiers.stream().map(JoinKeys.Identifier::of).toList();
        List<CollectionEraser> cs = ctx.collections();
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
                SurfaceOutcome text = c.verifyText(mine, op.pub.purged.getOrDefault("collection:" + c.name() + "/text", 0L));
                if (text != null) {
                    outcomes.add(text);
                }
            }
            leaked += c.recordsInScope(tenant, op.scopeTest(c.name()), op.subjectHint()).size();
            CollectionEraser.Probe probe = c.probe(tenant, all, op.pub.threshold, op.pub.approximateAbove, op.pub.exactProbe);
            suspects.addAll(probe.suspects());
            if (probe.run() != null) {
                probes.add(probe.run());
            }
            suspects.addAll(c.lexicalProbe(tenant, all));
            suspects.addAll(c.joinKeys(tenant, joinNames, derivedNames(op.secret.removed, c.name()), identifiers));
        }
        outcomes.add(new SurfaceOutcome("fence", ErasureClass.PHYSICAL, 0, cs.size(),
                leaked == 0 ? List.of() : List.of(leaked + " records in scope are live after cleanup: a write got past the mark"),
                null));
        outcomes.add(ctx.snapshots.verify(op.pub.tenant, op.secret.removed, ctx.engines.get(),
                op.pub.purged.getOrDefault("snapshots", 0L)));
        ForgottenRecords forgotten = op.forgottenRecords();
        for (ErasureSurface s : ctx.surfaces) {
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
        LiveOperation.wipe(forgotten);
        // Derived records held for regeneration stay suspects until they are gone.
        List<Suspect> regeneration = new ArrayList<>();
        List<Suspect> held;
        synchronized (ctx.monitor) {
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
        synchronized (ctx.monitor) {
            op.pub.surfaces.clear();
            op.pub.surfaces.addAll(outcomes);
            op.pub.probes.clear();
            op.pub.probes.addAll(probes);
            op.secret.suspects.clear();
            op.secret.suspects.addAll(found);
            op.pub.suspects = found.size();
            if (!clean) {
                long failing = outcomes.stream().filter(o -> !o.clean()).count();
                op.pub.note = found.size() + " suspects, " + failing + " surfaces not clean: forget more (or regenerate)"
                        + " and re-verify, or override the suspects with a recorded reason";
                op.enter(OperationState.NEEDS_REVIEW);
                ctx.appendEvidence(ctx.evidence.body(op.pub, "needs-review", null));
                ctx.save(op, true);
                return false;
            }
        }
        return true;
    }

    /**
     * How a record of {@code collection} names a forgotten record in its {@code derivedFrom}: by
     * its id when it was in the same collection, and as {@code "@<collection>/<id>"} from anywhere.
     */
    private static Set<String> derivedNames(List<OperationSecret.Forgotten> removed, String collection) {
        Set<String> out = new HashSet<>();
        for (OperationSecret.Forgotten f : removed) {
            out.add(DerivedFromRef.spell(f.collection(), f.removed().record().id()));
            if (f.collection().equals(collection)) {
                out.add(f.removed().record().id());
            }
        }
        return out;
    }
}
