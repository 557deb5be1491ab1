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
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * VERIFYING: every surface proves its purge (the index's scoped integrity check, a byte scan of the
 * storage, the snapshots, each registered surface); the negative-space probe searches each
 * forgotten vector against every surviving record of the tenant (through a collection's index where
 * the tenant is large there, see {@link ResidueProbe#probe}); join keys and declared identifiers
 * are looked up; the fence is shown to have held. Clean, the operation goes on to seal; otherwise
 * it rests in NEEDS_REVIEW, listing what was found.
 *
 * <p>For a batch (see {@link BatchQueue}) the structure checks run once per collection over every
 * record the batch removed there ({@link #shareChecks}): the index's integrity check and the text
 * index's walk. Everything about one operation's own records stays its own: which of them are still
 * indexed, the byte scan for their hashes, the probe, the lexical probe, join keys, the fence,
 * snapshots and surfaces.
 */
final class VerifyPhase {

    private final ForgetContext ctx;

    VerifyPhase(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /**
     * What a batch's shared checks found, as each operation's outcome per collection, with the
     * citation of the checks it shared. Holds outcomes and counts only, never a record: it lives
     * while the batch's operations seal one after another.
     */
    static final class Shared {
        private final IdentityHashMap<LiveOperation, Map<String, SurfaceOutcome>> index =
                new IdentityHashMap<>();
        private final IdentityHashMap<LiveOperation, Map<String, SurfaceOutcome>> text =
                new IdentityHashMap<>();
        private final IdentityHashMap<LiveOperation, List<BatchCitation.SharedCheck>> cited =
                new IdentityHashMap<>();
        private final String batch;

        private Shared(String batch) {
            this.batch = batch;
        }

        /** The checks the operation shared with others, or null when it shared none. */
        BatchCitation citation(LiveOperation op) {
            List<BatchCitation.SharedCheck> checks = cited.get(op);
            return checks == null ? null : new BatchCitation(batch, checks);
        }
    }

    /**
     * The structure checks of a batch, once per collection the batch removed records from: the
     * index's proof of every removal there, and the text index's walk for every forgotten text.
     * Each operation's outcome is taken from them here: which of its own records are still indexed,
     * its own counts. When the shared text walk finds residue, each operation's own walk decides
     * whose it is; a failing index check fails every operation it covered (it cannot say whose
     * removal it was), which is never a false seal.
     */
    Shared shareChecks(List<LiveOperation> batch) throws IOException {
        Shared shared =
                new Shared(
                        "fbt-"
                                + HexFormat.of()
                                        .formatHex(ChecksummedFiles.newFileId())
                                        .substring(0, 20));
        for (CollectionEraser c : ctx.collections()) {
            Map<LiveOperation, List<CollectionEraser.Removed>> mine = new LinkedHashMap<>();
            List<CollectionEraser.Removed> union = new ArrayList<>();
            for (LiveOperation op : batch) {
                for (OperationSecret.Forgotten f : op.secret.removed) {
                    if (f.collection().equals(c.name())) {
                        mine.computeIfAbsent(op, k -> new ArrayList<>()).add(f.removed());
                        union.add(f.removed());
                    }
                }
            }
            if (union.isEmpty()) {
                continue;
            }
            int k = mine.size();
            SurfaceProofs.IndexProof proof = c.proofs().proveIndex(union);
            SharedPasses.check();
            mine.forEach(
                    (op, rs) ->
                            shared.index
                                    .computeIfAbsent(op, x -> new HashMap<>())
                                    .put(c.name(), SurfaceProofs.indexOutcome(proof, rs, k)));
            SurfaceOutcome all = c.proofs().verifyText(union, 0);
            for (Map.Entry<LiveOperation, List<CollectionEraser.Removed>> e : mine.entrySet()) {
                LiveOperation op = e.getKey();
                List<CollectionEraser.Removed> rs = e.getValue();
                List<BatchCitation.SharedCheck> cite =
                        shared.cited.computeIfAbsent(op, x -> new ArrayList<>());
                if (k > 1) {
                    cite.add(
                            new BatchCitation.SharedCheck(
                                    proof.surface(),
                                    k,
                                    union.size(),
                                    proof.checkerChecked(),
                                    proof.report().isClean() && !proof.residue()));
                }
                if (all == null) {
                    continue;
                }
                long purged = op.pub.purged.getOrDefault("collection:" + c.name() + "/text", 0L);
                SurfaceOutcome own;
                if (k == 1) {
                    own =
                            new SurfaceOutcome(
                                    all.surface(),
                                    all.erasureClass(),
                                    purged,
                                    all.checked(),
                                    all.problems(),
                                    all.residual());
                } else if (all.clean()) {
                    // The walk found none of the batch's terms or documents, so none of this
                    // operation's: its own counts are its terms and records.
                    long terms =
                            rs.stream().flatMap(r -> r.textTerms().stream()).distinct().count();
                    own =
                            new SurfaceOutcome(
                                    all.surface(),
                                    all.erasureClass(),
                                    purged,
                                    terms + rs.size(),
                                    List.of(),
                                    null);
                    cite.add(
                            new BatchCitation.SharedCheck(
                                    all.surface(),
                                    k,
                                    union.size(),
                                    all.checked() - union.size(),
                                    true));
                } else {
                    own = c.proofs().verifyText(rs, purged);
                }
                shared.text.computeIfAbsent(op, x -> new HashMap<>()).put(c.name(), own);
            }
        }
        shared.cited.values().removeIf(List::isEmpty);
        return shared;
    }

    /**
     * VERIFYING: every surface proves its purge; the probe searches each forgotten vector against
     * every surviving record of the tenant; join keys; the fence held. Returns true when clean (the
     * caller seals); otherwise enters NEEDS_REVIEW, listing what was found by id and score.
     *
     * @param shared the batch's structure checks ({@link #shareChecks}), which cover this operation
     */
    boolean verify(LiveOperation op, Shared shared) throws IOException {
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
        // The request's identifiers, then those read from the subject's own records at cleanup
        // (under the keys their collections declare): all looked for alike, each named on the
        // receipt by keyed hash and where it came from.
        List<JoinKeys.Identifier> identifiers = new ArrayList<>();
        List<OperationLog.Sought> sought = new ArrayList<>();
        for (String declared : op.secret.identifiers) {
            JoinKeys.Identifier id = JoinKeys.Identifier.of(declared);
            identifiers.add(id);
            sought.add(new OperationLog.Sought(ctx.hashes.identifier(tenant, id), "request"));
        }
        for (OperationSecret.Found f : op.secret.found) {
            JoinKeys.Identifier id = JoinKeys.Identifier.of(f.value());
            identifiers.add(id);
            sought.add(new OperationLog.Sought(ctx.hashes.identifier(tenant, id), f.source()));
        }
        List<CollectionEraser> cs = ctx.collections();
        for (CollectionEraser c : cs) {
            List<CollectionEraser.Removed> mine = byCollection.getOrDefault(c.name(), List.of());
            // The integrity checker walks a whole index: run it where this forget removed
            // something, so a forget costs what its scope costs, not what the store holds.
            SurfaceOutcome index =
                    mine.isEmpty()
                            ? c.proofs().untouchedIndex()
                            : shared.index.getOrDefault(op, Map.of()).get(c.name());
            if (index == null) {
                throw new IllegalStateException(
                        "forget operation "
                                + op.pub.id
                                + ": its batch's checks do not cover"
                                + " collection "
                                + c.name());
            }
            if (op.pub.level == ErasureLevel.REBUILD && !mine.isEmpty()) {
                index =
                        new SurfaceOutcome(
                                index.surface(),
                                index.erasureClass(),
                                index.purged(),
                                index.checked(),
                                index.problems(),
                                "index rebuilt from the surviving records after the removal: no"
                                        + " influence of the forgotten records remains in it");
            }
            outcomes.add(index);
            if (!mine.isEmpty()) {
                outcomes.add(c.proofs().verifyStorage(mine));
                SurfaceOutcome text = shared.text.getOrDefault(op, Map.of()).get(c.name());
                if (text != null) {
                    outcomes.add(text);
                }
            }
            leaked += c.recordsInScope(tenant, op.scopeTest(c.name()), op.subjectHint()).size();
            ResidueProbe.Probe probe =
                    c.probes()
                            .probe(
                                    tenant,
                                    all,
                                    op.pub.threshold,
                                    op.pub.approximateAbove,
                                    op.pub.exactProbe);
            suspects.addAll(probe.suspects());
            if (probe.run() != null) {
                probes.add(probe.run());
            }
            suspects.addAll(c.probes().lexicalProbe(tenant, all));
            suspects.addAll(
                    c.probes()
                            .joinKeys(
                                    tenant,
                                    joinNames,
                                    derivedNames(op.secret.removed, c.name()),
                                    identifiers));
        }
        outcomes.add(
                new SurfaceOutcome(
                        "fence",
                        ErasureClass.PHYSICAL,
                        0,
                        cs.size(),
                        leaked == 0
                                ? List.of()
                                : List.of(
                                        leaked
                                                + " records in scope are live after cleanup: a"
                                                + " write got past the mark"),
                        null));
        outcomes.add(
                ctx.snapshots.verify(
                        op.pub.tenant,
                        op.secret.removed,
                        ctx.engines.get(),
                        op.pub.purged.getOrDefault("snapshots", 0L)));
        ForgottenRecords forgotten = op.forgottenRecords();
        for (ErasureSurface s : ctx.surfaces) {
            String blockFailure = op.blockFailures.get(s.name());
            if (blockFailure != null) {
                outcomes.add(
                        new SurfaceOutcome(
                                s.name(),
                                s.erasureClass(),
                                0,
                                0,
                                List.of(
                                        "did not block the scope at the mark ("
                                                + blockFailure
                                                + "): it may have served it"),
                                null));
                continue;
            }
            try {
                long purged = op.pub.purged.getOrDefault(s.name(), 0L);
                outcomes.add(ctx.atSurface(() -> s.verify(forgotten, purged)));
            } catch (IOException | RuntimeException e) {
                outcomes.add(
                        new SurfaceOutcome(
                                s.name(),
                                s.erasureClass(),
                                0,
                                0,
                                List.of("cannot verify: " + e.getClass().getSimpleName()),
                                null));
            }
        }
        LiveOperation.wipe(forgotten);
        // Derived records held for regeneration stay suspects until they are gone.
        List<Suspect> regeneration = new ArrayList<>();
        List<Suspect> held;
        synchronized (ctx.monitor) {
            held =
                    op.secret.suspects.stream()
                            .filter(s -> s.reason().equals("regeneration-required"))
                            .toList();
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
        ctx.crashPoint("verify-done");
        synchronized (ctx.monitor) {
            op.batch = shared.citation(op);
            op.pub.surfaces.clear();
            op.pub.surfaces.addAll(outcomes);
            op.pub.probes.clear();
            op.pub.probes.addAll(probes);
            op.pub.sought.clear();
            op.pub.sought.addAll(sought);
            op.secret.suspects.clear();
            op.secret.suspects.addAll(found);
            op.pub.suspects = found.size();
            if (!clean) {
                long failing = outcomes.stream().filter(o -> !o.clean()).count();
                op.pub.note =
                        found.size()
                                + " suspects, "
                                + failing
                                + " surfaces not clean: forget more (or regenerate)"
                                + " and re-verify, or override the suspects with a recorded reason";
                op.enter(OperationState.NEEDS_REVIEW);
                ctx.appendEvidence(ctx.evidence.body(op.pub, "needs-review", null, op.batch));
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
    private static Set<String> derivedNames(
            List<OperationSecret.Forgotten> removed, String collection) {
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
