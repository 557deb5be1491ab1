package dev.nepenthe.hnsw;

import static dev.nepenthe.hnsw.HnswIntegrityChecker.CERTIFICATE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.ENTRY_NOT_LIVE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.ENTRY_NOT_TOP;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.HALF_REMOVED;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.NOT_ZEROED;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.OUT_OF_RANGE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.SLOT_MAP;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.STRUCTURE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.UNREACHABLE;

import dev.nepenthe.core.index.IntegrityReport;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The scoped proof that removals left nothing behind: {@link HnswIntegrityChecker}'s checks, run
 * only where the removals' {@link RemovalTrace}s say they changed the graph, with reachability
 * proven by the certificate's labels instead of a walk. Apart from the full checker because its
 * premise and its cost differ (see {@link #check}). Caller excludes writers.
 */
final class ScopedRemovalCheck {
    private ScopedRemovalCheck() {}

    /**
     * Proves that the removals {@code traces} describe left nothing behind, looking only where they
     * changed the graph:
     *
     * <ul>
     *   <li>each removed ordinal maps to no slot, or (re-added) to a live slot naming it, which is
     *       checked like a touched node;
     *   <li>each old slot is free, zeroed, without links or in-links, or was handed out again and
     *       is checked like a touched node;
     *   <li>each touched node that is live passes the full checker's per-list checks on every
     *       layer, both ways (forward entries have their reverse entries and back): so no list that
     *       linked to a removed slot still does, as every such list was in the removed node's
     *       reverse lists;
     *   <li>the entry point is live and on its recorded level, and no touched node is above it;
     *   <li>reachability from the reachability certificate (see {@link
     *       ReachabilityCertifier#certifyReachability}): each touched node, and each node put in
     *       doubt since the last removal, has a live in-neighbour with a smaller label; a node put
     *       in doubt since that has none settles it by a layer-0 walk.
     * </ul>
     *
     * Premise, which only the full check proves: the reverse lists were exact when the nodes were
     * removed (a list that linked to a removed node without being in its reverse list is not looked
     * at); the report counts it as {@code premise-reverse-lists-exact}. When the labels are not
     * valid (an insert moved the entry point since the last removal) the full check runs instead.
     * Cost: the touched nodes times their degree times (degree + in-degree) per layer, plus a copy
     * of the pending-certificate bitmap when it is not empty, plus a layer-0 walk only when a node
     * put in doubt since the removal cannot be certified locally. Caller excludes writers.
     */
    static IntegrityReport check(
            HnswGraph g, int[] ordToSlot, int liveCount, List<RemovalTrace> traces) {
        int hw = g.highWater();
        long entry = g.entry();
        int ep = HnswGraph.entrySlot(entry);
        if (ep >= 0 && !g.labelsValid()) {
            return HnswIntegrityChecker.fallBack(
                    g, ordToSlot, liveCount, "scoped-fallback-labels-invalid", 1);
        }
        IntegrityReport.Builder r = IntegrityReport.builder(STRUCTURE);
        HnswIntegrityChecker.expect(r, CERTIFICATE, NOT_ZEROED, HALF_REMOVED, SLOT_MAP);
        CodeCheck codes = CodeCheck.of(g, r);
        IntBag scope = new IntBag();
        Set<int[]> batches = Collections.newSetFromMap(new IdentityHashMap<>());
        long freed = 0;
        long reused = 0;
        long liveAgain = 0;
        for (RemovalTrace t : traces) {
            int ord = t.ordinal();
            int now = ord < ordToSlot.length ? ordToSlot[ord] : -1;
            if (now >= 0) {
                if (now >= hw || g.state(now) == HnswGraph.FREE || g.ordinal(now) != ord) {
                    r.violation(
                            SLOT_MAP,
                            "re-added ordinal "
                                    + ord
                                    + " points at slot "
                                    + now
                                    + " which does not name it");
                } else {
                    liveAgain++;
                    scope.add(now);
                }
            }
            int old = t.slot();
            byte state = old < hw ? g.state(old) : HnswGraph.FREE;
            if (state == HnswGraph.FREE) {
                freed++;
                HnswIntegrityChecker.checkFreed(g, old, r);
            } else {
                if (g.ordinal(old) == ord && now != old) {
                    r.violation(SLOT_MAP, "slot " + old + " still names removed ordinal " + ord);
                }
                reused++;
                scope.add(old);
            }
            if (batches.add(t.touched())) {
                for (int x : t.touched()) {
                    scope.add(x);
                }
            }
        }
        int[] slots = HnswIntegrityChecker.sortedUnique(scope);
        ListScan scan = new ListScan(g, hw, r, null);
        IntBag liveInScope = new IntBag(slots.length);
        long freeInScope = 0;
        int entryLevel = HnswGraph.entryLevel(entry);
        for (int s : slots) {
            if (s < 0 || s >= hw) {
                r.violation(
                        OUT_OF_RANGE,
                        "a removal touched slot " + s + " beyond the high-water mark " + hw);
                continue;
            }
            byte state = g.state(s);
            if (state == HnswGraph.FREE) {
                // Freed by a later removal: it must hold nothing either.
                freeInScope++;
                HnswIntegrityChecker.checkFreed(g, s, r);
                continue;
            }
            HnswIntegrityChecker.checkAllocated(g, s, state, ordToSlot, r);
            if (g.level(s) > entryLevel) {
                r.violation(
                        ENTRY_NOT_TOP,
                        "slot "
                                + s
                                + " has level "
                                + g.level(s)
                                + ", above the entry point's "
                                + entryLevel);
            }
            if (codes != null) {
                codes.check(s); // a slot handed out again must carry its new vector's code
            }
            for (int l = 0; l <= g.level(s); l++) {
                if (scan.scan(s, l)) {
                    ListScan.exactReverseCheck(g, hw, s, l, r);
                }
            }
            liveInScope.add(s);
        }
        long certified = 0;
        long pendingChecked = 0;
        long walks = 0;
        if (ep < 0) {
            if (liveInScope.size() > 0) {
                r.violation(
                        ENTRY_NOT_LIVE,
                        "no entry point, but slot " + liveInScope.get(0) + " is live");
            }
        } else if (ep >= hw || g.state(ep) != HnswGraph.LIVE) {
            r.violation(ENTRY_NOT_LIVE, "entry point is slot " + ep);
        } else {
            if (g.level(ep) != entryLevel) {
                r.violation(
                        ENTRY_NOT_TOP, HnswIntegrityChecker.entryLevels(g, ep, entryLevel) + ")");
            }
            // Every node outside these two groups kept the in-neighbour with a smaller label the
            // last removal certified, so a chain of smaller labels from any of them ends at the
            // entry point once each node of the groups has such an in-neighbour too.
            BitSet pending = g.pendingCertificates();
            IntBag doubtful = new IntBag();
            for (int i = 0; i < liveInScope.size(); i++) {
                int s = liveInScope.get(i);
                certified++;
                certify(g, s, ep, pending.get(s), doubtful, r);
            }
            for (int s = pending.nextSetBit(0); s >= 0; s = pending.nextSetBit(s + 1)) {
                if (s < hw && g.isLive(s) && Arrays.binarySearch(slots, s) < 0) {
                    pendingChecked++;
                    certify(g, s, ep, true, doubtful, r);
                }
            }
            if (doubtful.size() > 0) {
                // Put in doubt by a write since the removal, legitimately: only a walk can tell.
                walks++;
                BitSet reached = HnswIntegrityChecker.reachableOnLayer0(g, ep, hw);
                for (int i = 0; i < doubtful.size(); i++) {
                    int s = doubtful.get(i);
                    if (!reached.get(s)) {
                        r.violation(UNREACHABLE, "slot " + s + " (ordinal " + g.ordinal(s) + ")");
                    }
                }
            }
        }
        if (codes != null) {
            r.checked("scoped-codes-recomputed", codes.recomputed);
        }
        return r.checked("scoped-removed", traces.size())
                .checked("scoped-freed-slots", freed)
                .checked("scoped-reused-slots", reused)
                .checked("scoped-live-again", liveAgain)
                .checked("scoped-lists", scan.lists)
                .checked("scoped-edges", scan.edges)
                .checked("scoped-reverse-entries", scan.reverseEntries)
                .checked("scoped-touched-free", freeInScope)
                .checked("scoped-certified", certified)
                .checked("scoped-pending-certified", pendingChecked)
                .checked("scoped-reachability-walks", walks)
                .checked("premise-reverse-lists-exact", 1)
                .build();
    }

    /**
     * Checks one live node's reachability certificate: a live in-neighbour on layer 0 with a
     * smaller label. A node with no live in-neighbour is unreachable; one whose in-neighbours all
     * have larger labels breaks the certificate, unless a write since the last removal put it in
     * doubt ({@code pending}), and then it goes to {@code doubtful} for a walk.
     */
    private static void certify(
            HnswGraph g,
            int s,
            int ep,
            boolean pending,
            IntBag doubtful,
            IntegrityReport.Builder r) {
        if (s == ep) {
            return;
        }
        boolean linked = false;
        int label = g.label(s);
        for (int u : g.reverseNeighbors(s, 0)) {
            if (u != s && g.isLive(u)) {
                linked = true;
                if (g.label(u) < label) {
                    return;
                }
            }
        }
        if (!linked) {
            r.violation(
                    UNREACHABLE,
                    "slot "
                            + s
                            + " (ordinal "
                            + g.ordinal(s)
                            + ") has no live in-neighbour on layer 0");
        } else if (pending) {
            doubtful.add(s);
        } else {
            r.violation(
                    CERTIFICATE,
                    "slot "
                            + s
                            + " (ordinal "
                            + g.ordinal(s)
                            + ", label "
                            + label
                            + ") has no in-neighbour with a smaller label");
        }
    }
}
