package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.forget.ErasureLevel;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.roaringbitmap.RoaringBitmap;

/**
 * CLEANUP, for a batch of operations of one tenant (see {@link BatchQueue}): removes each
 * operation's scope and provenance closure from every collection, across collections where {@code
 * derivedFrom} names a record in another (every operation's probe vectors saved durably first),
 * with one removal per collection for the whole batch (one journal entry and log append, one index
 * removal with repair, one rewrite of the segments), one index residue purge (or rebuild at
 * REBUILD) and one text merge per collection; then purges registered snapshots and every registered
 * surface for each operation, and records what each operation's own records were.
 */
final class CleanupPhase {

    private static final RoaringBitmap NONE = new RoaringBitmap();

    private final ForgetContext ctx;
    private final LegalHolds holds;

    CleanupPhase(ForgetContext ctx, LegalHolds holds) {
        this.ctx = ctx;
        this.holds = holds;
    }

    /**
     * Holds and CLEANUP for operations BLOCKED or in CLEANUP, oldest first. Each ends held, in
     * VERIFYING with its own records, counts and fences, or stopped on a failure of its own part
     * (the hold check, snapshots, surfaces). A failure of a shared part throws: every operation of
     * the batch then stays where it was.
     *
     * @return the operations left for a later batch because the batch's record bound was reached
     *     (oldest first; the first of them may have passed its hold check and be in CLEANUP, the
     *     others are as they came)
     */
    List<LiveOperation> cleanup(List<LiveOperation> batch) throws IOException {
        List<CollectionEraser> cs = ctx.collections();
        // 1. Resolve, oldest operation first: a record two scopes name goes to the older one, as
        //    it would if they ran one after the other. The operation that would take the batch
        //    past its record bound waits for the next batch with every younger one, so no younger
        //    operation claims what an older one names; the oldest always goes.
        List<LiveOperation> admitted = new ArrayList<>();
        List<LiveOperation> deferred = List.of();
        List<Map<String, CollectionEraser.Resolved>> resolutions = new ArrayList<>();
        Map<String, RoaringBitmap> taken = new HashMap<>();
        int records = 0;
        for (int i = 0; i < batch.size(); i++) {
            LiveOperation op = batch.get(i);
            // Holds are checked just before an operation's records are resolved, so a hold placed
            // while it waited in the queue still stops it.
            boolean[] free = {true};
            if (stateOf(op) == OperationState.BLOCKED
                    && (!ctx.onItsOwn(op, () -> free[0] = holds.checkHolds(op)) || !free[0])) {
                continue; // held (saved with its evidence), or stopped on a failure of its own
            }
            Map<String, CollectionEraser.Resolved> mine = resolveAcrossCollections(op, cs, taken);
            int n = 0;
            for (CollectionEraser.Resolved r : mine.values()) {
                n += r.entries().size();
            }
            if (!admitted.isEmpty() && records + n > BatchQueue.MAX_RECORDS) {
                deferred = List.copyOf(batch.subList(i, batch.size()));
                break;
            }
            admitted.add(op);
            resolutions.add(mine);
            records += n;
            mine.forEach(
                    (name, r) ->
                            r.entries()
                                    .forEach(
                                            e ->
                                                    taken.computeIfAbsent(
                                                                    name, k -> new RoaringBitmap())
                                                            .add(e.ordinal())));
        }
        if (admitted.isEmpty()) {
            return deferred; // every one of them held, or stopped
        }
        // The first operation left for later may just have passed its hold check: its CLEANUP
        // state is saved with the batch's.
        List<LiveOperation> saved = new ArrayList<>(admitted);
        if (!deferred.isEmpty()) {
            saved.add(deferred.get(0));
        }
        // 2. Every operation's probe vectors, and what it is about to remove, durable in its own
        //    private part before anything is deleted (no lock: the records are hidden, and only
        //    this batch removes them). One fsync for the batch.
        synchronized (ctx.monitor) {
            for (int i = 0; i < admitted.size(); i++) {
                LiveOperation op = admitted.get(i);
                Set<String> known = new HashSet<>();
                op.secret.removed.forEach(
                        f -> known.add(f.collection() + '\0' + f.removed().record().id()));
                for (Map.Entry<String, CollectionEraser.Resolved> e :
                        resolutions.get(i).entrySet()) {
                    String collection = e.getKey();
                    for (CollectionEraser.Removed r : e.getValue().removed()) {
                        if (known.add(collection + '\0' + r.record().id())) {
                            op.secret.removed.add(new OperationSecret.Forgotten(collection, r));
                        }
                    }
                    op.secret.suspects.removeIf(
                            s ->
                                    s.reason().equals("regeneration-required")
                                            && s.collection().equals(collection));
                    op.secret.suspects.addAll(e.getValue().heldForRegeneration());
                    e.getValue().identifiers().forEach(op.secret::addFound);
                }
            }
            ctx.saveAll(saved, true);
            // Writes deriving from what is about to go are refused from here, in every
            // collection, not only once the cleanup is done.
            ctx.refreshFences();
        }
        ctx.crashPoint("cleanup-before-delete");
        // 3. One removal per collection for the whole batch.
        for (CollectionEraser c : cs) {
            List<Entry> union = new ArrayList<>();
            for (Map<String, CollectionEraser.Resolved> mine : resolutions) {
                union.addAll(mine.get(c.name()).entries());
            }
            if (!union.isEmpty()) {
                c.remove(union);
                SharedPasses.removal();
            }
        }
        resolutions.clear();
        SharedPasses.cleaned(admitted.size());
        ctx.crashPoint("cleanup-after-delete");
        // 4. Once per collection: the index's residue purge (an IVF-PQ retrain) or, at REBUILD,
        //    a rebuild from the survivors, and the text index's merge. What they purged counts
        //    for the operations that removed records there, never for one that found nothing.
        Map<LiveOperation, Map<String, Long>> purged = new LinkedHashMap<>();
        admitted.forEach(op -> purged.put(op, new HashMap<>()));
        for (CollectionEraser c : cs) {
            Map<LiveOperation, List<CollectionEraser.Removed>> mine = removedIn(c.name(), admitted);
            if (!mine.isEmpty() && admitted.get(0).pub.level == ErasureLevel.REBUILD) {
                // A fresh build from the survivors: no link or codebook chosen while a forgotten
                // vector was present survives.
                c.engine().rebuildIndex();
            } else if (c.purgeIndexResidue()) {
                mine.keySet()
                        .forEach(
                                op ->
                                        purged.get(op)
                                                .merge(
                                                        "collection:" + c.name() + "/index",
                                                        1L,
                                                        Long::sum));
            }
            if (!mine.isEmpty()) {
                List<CollectionEraser.Removed> union = new ArrayList<>();
                mine.values().forEach(union::addAll);
                if (c.purgeText(union) >= 0) {
                    mine.forEach(
                            (op, rs) ->
                                    purged.get(op)
                                            .put(
                                                    "collection:" + c.name() + "/text",
                                                    (long) CollectionEraser.textDocuments(rs)));
                }
            }
        }
        // 5. Per operation, each on its own: registered snapshots and surfaces (each is asked
        //    about one operation), then its own outcome.
        List<LiveOperation> done = new ArrayList<>();
        for (LiveOperation op : admitted) {
            Map<String, Long> mine = purged.get(op);
            boolean ok =
                    ctx.onItsOwn(
                            op,
                            () -> {
                                mine.put(
                                        "snapshots",
                                        (long)
                                                ctx.snapshots.purge(
                                                        op.pub.tenant,
                                                        op.secret.removed,
                                                        ctx.engines.get()));
                                ForgottenRecords forgotten = op.forgottenRecords();
                                try {
                                    for (ErasureSurface s : ctx.surfaces) {
                                        mine.put(s.name(), ctx.atSurface(() -> s.purge(forgotten)));
                                    }
                                } finally {
                                    LiveOperation.wipe(forgotten);
                                }
                            });
            if (ok) {
                done.add(op);
            }
        }
        synchronized (ctx.monitor) {
            for (LiveOperation op : done) {
                op.pub.purged.clear();
                op.pub.purged.putAll(purged.get(op));
                op.pub.forgotten.clear();
                for (OperationSecret.Forgotten f : op.secret.removed) {
                    op.pub.forgotten.merge(f.collection(), 1, Integer::sum);
                    op.pub.fences.add(
                            ctx.hashes.fenceRecord(
                                    f.collection(), op.pub.tenant, f.removed().record().id()));
                }
                op.enter(OperationState.VERIFYING);
            }
            ctx.saveAll(done, true);
            ctx.refreshFences();
        }
        ctx.crashPoint("cleanup-recorded");
        return deferred;
    }

    private OperationState stateOf(LiveOperation op) {
        synchronized (ctx.monitor) {
            return op.pub.state;
        }
    }

    /**
     * The records each operation removed from one collection, for the operations that removed any
     * there.
     */
    private static Map<LiveOperation, List<CollectionEraser.Removed>> removedIn(
            String collection, List<LiveOperation> ops) {
        Map<LiveOperation, List<CollectionEraser.Removed>> out = new LinkedHashMap<>();
        for (LiveOperation op : ops) {
            for (OperationSecret.Forgotten f : op.secret.removed) {
                if (f.collection().equals(collection)) {
                    out.computeIfAbsent(op, k -> new ArrayList<>()).add(f.removed());
                }
            }
        }
        return out;
    }

    /**
     * One operation's scope and provenance closure in every collection, resolved (nothing is
     * deleted yet). The closure crosses collections ({@code "@<collection>/<id>"} in {@code
     * derivedFrom}): a collection is resolved again while one of its records names a record
     * resolved or held elsewhere since its last pass, so a chain A, B, A takes three passes and an
     * operation without references one (plus a lookup per record it resolved in each collection). A
     * resumed operation starts from what it removed and holds already.
     *
     * @param taken per collection, what older operations of the batch resolved
     * @return per collection, everything this operation resolved there over all passes
     */
    private Map<String, CollectionEraser.Resolved> resolveAcrossCollections(
            LiveOperation op, List<CollectionEraser> cs, Map<String, RoaringBitmap> taken)
            throws IOException {
        Set<String> reached = new HashSet<>();
        synchronized (ctx.monitor) {
            op.secret.removed.forEach(
                    f -> reached.add(f.collection() + '\0' + f.removed().record().id()));
            op.secret.suspects.stream()
                    .filter(s -> s.reason().equals("regeneration-required"))
                    .forEach(s -> reached.add(s.collection() + '\0' + s.recordId()));
        }
        Map<String, CollectionEraser.Resolved> mine = new LinkedHashMap<>();
        Map<String, RoaringBitmap> resolvedHere = new HashMap<>();
        List<CollectionEraser> pass = cs;
        while (!pass.isEmpty()) {
            Set<String> grown = new HashSet<>();
            for (CollectionEraser c : pass) {
                RoaringBitmap excluded =
                        RoaringBitmap.or(
                                taken.getOrDefault(c.name(), NONE),
                                resolvedHere.getOrDefault(c.name(), NONE));
                CollectionEraser.Resolved r =
                        c.resolve(
                                op.pub.id,
                                op.pub.tenant,
                                op.scopeTest(c.name()),
                                op.subjectHint(),
                                c.engine().spec().provenance() == CollectionSpec.Provenance.CASCADE,
                                Set.copyOf(reached),
                                excluded);
                r.entries()
                        .forEach(
                                e ->
                                        resolvedHere
                                                .computeIfAbsent(c.name(), k -> new RoaringBitmap())
                                                .add(e.ordinal()));
                mine.merge(c.name(), r, CleanupPhase::merge);
                for (String k : r.reached()) {
                    if (reached.add(k)) {
                        grown.add(k);
                    }
                }
            }
            List<CollectionEraser> again = new ArrayList<>();
            if (!grown.isEmpty()) {
                for (CollectionEraser c : cs) {
                    if (c.derivesFromAny(op.pub.tenant, grown)) {
                        again.add(c);
                    }
                }
            }
            pass = again;
        }
        return mine;
    }

    /**
     * Two passes' resolutions in one collection: entries add up, a held record is listed once (the
     * later pass's).
     */
    private static CollectionEraser.Resolved merge(
            CollectionEraser.Resolved a, CollectionEraser.Resolved b) {
        List<Entry> entries = new ArrayList<>(a.entries());
        entries.addAll(b.entries());
        List<CollectionEraser.Removed> removed = new ArrayList<>(a.removed());
        removed.addAll(b.removed());
        Map<String, Suspect> held = new LinkedHashMap<>();
        a.heldForRegeneration().forEach(sp -> held.put(sp.recordId(), sp));
        b.heldForRegeneration().forEach(sp -> held.put(sp.recordId(), sp));
        // A record held in one pass and resolved for removal in a later one is not held.
        entries.forEach(e -> held.remove(e.record().id()));
        Set<String> reached = new HashSet<>(a.reached());
        reached.addAll(b.reached());
        List<OperationSecret.Found> identifiers = new ArrayList<>(a.identifiers());
        identifiers.addAll(b.identifiers());
        return new CollectionEraser.Resolved(
                entries, removed, List.copyOf(held.values()), reached, identifiers);
    }
}
