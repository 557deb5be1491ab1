package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.IntegrityReport;
import java.util.BitSet;

/**
 * Proves the structural invariants of an {@link HnswGraph} and that no removed node survives in it.
 * Returns counts, so the forget protocol can record "checked 120,000 lists, 0 hold a removed node,
 * 0 unreachable" rather than a bare yes.
 *
 * <p>Checks: every list on every layer holds only live slots of at least that layer, no self loops
 * or repeats, within its degree bound; reverse lists match forward lists exactly; the entry point
 * is live and on the top level; every live node is reachable from the entry point on layer 0; freed
 * slots hold zero vector bytes and no links; the ordinal maps agree. In a quantized graph also:
 * every live slot's code is the code of its stored vector, recomputed (so no code can be stale, or
 * belong to a vector that was removed), and every free slot's code is zero bytes. Caller excludes
 * writers while it runs (searches may continue).
 */
final class HnswIntegrityChecker {

    static final String STRUCTURE = "hnsw";
    static final String REMOVED_IN_LIST = "list-holds-removed-or-free-slot";
    static final String OUT_OF_RANGE = "list-holds-invalid-slot";
    static final String LEVEL_MISMATCH = "list-holds-node-below-layer";
    static final String SELF_LOOP = "self-loop";
    static final String DUPLICATE = "duplicate-neighbor";
    static final String DEGREE = "degree-out-of-bounds";
    static final String REVERSE = "reverse-link-mismatch";
    static final String ENTRY_NOT_LIVE = "entry-point-not-live";
    static final String ENTRY_NOT_TOP = "entry-point-not-on-top-level";
    static final String UNREACHABLE = "unreachable-on-layer-0";
    static final String NOT_ZEROED = "freed-slot-not-zeroed";
    static final String FREE_LIST = "free-list-mismatch";
    static final String HALF_REMOVED = "node-left-half-removed";
    static final String SLOT_MAP = "slot-map-mismatch";

    /** Quantized graphs: a live slot's code differs from the code recomputed from its vector. */
    static final String CODE_MISMATCH = "code-not-from-vector";

    /** Quantized graphs: a free slot's code holds a non-zero byte. */
    static final String CODE_NOT_ZEROED = "freed-slot-code-not-zeroed";

    /**
     * Scoped check only: a node that nothing since the last removal put in doubt has no
     * in-neighbour with a smaller label.
     */
    static final String CERTIFICATE = "reachability-certificate-broken";

    private HnswIntegrityChecker() {}

    /**
     * @param ordToSlot the index's ordinal-to-slot map (-1 where not live)
     * @param liveCount the number of live ordinals the index believes it has
     */
    static IntegrityReport check(HnswGraph g, int[] ordToSlot, int liveCount) {
        return check(g, ordToSlot, liveCount, IntegrityReport.builder(STRUCTURE));
    }

    /**
     * The full check, into a builder that may already say why it runs (a scoped check's fallback).
     */
    private static IntegrityReport check(
            HnswGraph g, int[] ordToSlot, int liveCount, IntegrityReport.Builder r) {
        for (String v :
                new String[] {
                    REMOVED_IN_LIST,
                    OUT_OF_RANGE,
                    LEVEL_MISMATCH,
                    SELF_LOOP,
                    DUPLICATE,
                    DEGREE,
                    REVERSE,
                    ENTRY_NOT_LIVE,
                    ENTRY_NOT_TOP,
                    UNREACHABLE,
                    NOT_ZEROED,
                    FREE_LIST,
                    HALF_REMOVED,
                    SLOT_MAP
                }) {
            r.expect(v);
        }
        CodeCheck codes = CodeCheck.of(g, r);
        int hw = g.highWater();
        int live = 0;
        int free = 0;
        int maxLevel = -1;
        ListScan scan = new ListScan(g, hw, r, new int[hw]);
        for (int s = 0; s < hw; s++) {
            byte state = g.state(s);
            if (state == HnswGraph.FREE) {
                free++;
                checkFreed(g, s, r);
                continue;
            }
            if (state == HnswGraph.DELETING) {
                r.violation(
                        HALF_REMOVED, "slot " + s + " is marked for removal but still allocated");
            }
            live++;
            if (codes != null) {
                codes.check(s);
            }
            int level = g.level(s);
            maxLevel = Math.max(maxLevel, level);
            int ord = g.ordinal(s);
            if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != s) {
                r.violation(
                        SLOT_MAP,
                        "slot " + s + " names ordinal " + ord + " which does not map back");
            }
            for (int l = 0; l <= level; l++) {
                scan.scan(s, l);
            }
        }
        // Reverse lists must be exactly the transposed edges. Summing a 64-bit mix of every edge
        // from both sides (ListScan) compares the two multisets in one sequential pass (looking
        // each reverse entry up in its source's list costs a cache miss per edge); only when the
        // sums or counts differ does the exact pass look for the culprits.
        if (scan.reverseEntries != scan.edges) {
            r.violation(
                    REVERSE,
                    "reverse lists hold "
                            + scan.reverseEntries
                            + " entries for "
                            + scan.edges
                            + " edges");
        }
        if (scan.reverseEntries != scan.edges || scan.forwardPrint != scan.reversePrint) {
            int found = exactReverseCheck(g, hw, r);
            if (found == 0) {
                r.violation(
                        REVERSE,
                        "reverse lists and forward lists differ (edge fingerprints disagree)");
            }
        }
        if (free != g.freeCount()) {
            r.violation(
                    FREE_LIST,
                    "free list holds " + g.freeCount() + " slots, " + free + " slots are free");
        }
        int mapped = 0;
        for (int ord = 0; ord < ordToSlot.length; ord++) {
            int s = ordToSlot[ord];
            if (s >= 0) {
                mapped++;
                if (s >= hw || g.state(s) == HnswGraph.FREE || g.ordinal(s) != ord) {
                    r.violation(
                            SLOT_MAP,
                            "ordinal " + ord + " points at slot " + s + " which does not name it");
                }
            }
        }
        if (mapped != live || live != liveCount) {
            r.violation(
                    SLOT_MAP,
                    "ordinal map has "
                            + mapped
                            + " entries, graph "
                            + live
                            + " live slots, index counts "
                            + liveCount);
        }
        long entry = g.entry();
        int ep = HnswGraph.entrySlot(entry);
        long reachable = 0;
        if (live > 0) {
            if (ep < 0 || ep >= hw || g.state(ep) != HnswGraph.LIVE) {
                r.violation(ENTRY_NOT_LIVE, "entry point is slot " + ep);
            } else {
                if (g.level(ep) != maxLevel || HnswGraph.entryLevel(entry) != maxLevel) {
                    r.violation(
                            ENTRY_NOT_TOP,
                            "entry slot "
                                    + ep
                                    + " has level "
                                    + g.level(ep)
                                    + " (recorded "
                                    + HnswGraph.entryLevel(entry)
                                    + "), top level is "
                                    + maxLevel);
                }
                BitSet seen = reachableOnLayer0(g, ep, hw);
                for (int slot = 0; slot < hw; slot++) {
                    if (g.state(slot) != HnswGraph.FREE) {
                        if (seen.get(slot)) {
                            reachable++;
                        } else {
                            r.violation(
                                    UNREACHABLE,
                                    "slot " + slot + " (ordinal " + g.ordinal(slot) + ")");
                        }
                    }
                }
            }
        } else if (ep >= 0) {
            r.violation(ENTRY_NOT_LIVE, "graph has no live node but entry point is slot " + ep);
        }
        if (codes != null) {
            r.checked("codes-recomputed", codes.recomputed);
        }
        return r.checked("live-nodes", live)
                .checked("lists", scan.lists)
                .checked("edges", scan.edges)
                .checked("free-slots", free)
                .checked("reachable-on-layer-0", reachable)
                .build();
    }

    /**
     * The per-list checks both checkers run: degree bounds; every forward entry a live slot of at
     * least the list's layer, not the node itself, not repeated; every reverse entry a slot that
     * could link here, not repeated. Sums what it saw, including a fingerprint of the edges from
     * each side, so the full checker can compare forward and reverse lists in bulk.
     */
    private static final class ListScan {
        private final HnswGraph g;
        private final int hw;
        private final IntegrityReport.Builder r;

        /** Per-slot stamps, a fresh stamp per list: O(1) repeat checks for the full checker. */
        private final int[] seen;

        private int stamp;
        long lists;
        long edges;
        long reverseEntries;
        long forwardPrint;
        long reversePrint;

        /**
         * @param seen an int per slot below {@code hw}, or null to find repeats by scanning the
         *     list.
         */
        ListScan(HnswGraph g, int hw, IntegrityReport.Builder r, int[] seen) {
            this.g = g;
            this.hw = hw;
            this.r = r;
            this.seen = seen;
        }

        /**
         * Checks the list of {@code s} on layer {@code l} and its reverse list. Cost: its degree
         * plus its in-degree (squared when scanning for repeats, for the scoped checker's few
         * lists).
         *
         * @return false when the degree is out of bounds, so the entries could not be read
         */
        boolean scan(int s, int l) {
            lists++;
            int deg = g.degree(s, l);
            if (deg < 0 || deg > g.maxDegree(l)) {
                r.violation(
                        DEGREE,
                        "slot "
                                + s
                                + " layer "
                                + l
                                + " degree "
                                + deg
                                + " outside [0, "
                                + g.maxDegree(l)
                                + "]");
                return false;
            }
            int fwdStamp = ++stamp;
            int[] list = g.listArray(s, l);
            int base = g.listBase(s, l) + 1;
            for (int i = 0; i < deg; i++) {
                int n = list[base + i];
                edges++;
                if (n < 0) {
                    r.violation(
                            OUT_OF_RANGE,
                            "slot " + s + " layer " + l + " holds -1 below its degree");
                    continue;
                }
                if (n >= hw) {
                    r.violation(
                            OUT_OF_RANGE,
                            "slot "
                                    + s
                                    + " layer "
                                    + l
                                    + " links to slot "
                                    + n
                                    + " beyond the high-water mark "
                                    + hw);
                    continue;
                }
                if (n == s) {
                    r.violation(SELF_LOOP, "slot " + s + " layer " + l);
                }
                if (g.state(n) != HnswGraph.LIVE) {
                    r.violation(
                            REMOVED_IN_LIST,
                            "slot "
                                    + s
                                    + " layer "
                                    + l
                                    + " links to "
                                    + (g.state(n) == HnswGraph.FREE ? "free" : "removed")
                                    + " slot "
                                    + n);
                } else if (g.level(n) < l) {
                    r.violation(
                            LEVEL_MISMATCH,
                            "slot "
                                    + s
                                    + " layer "
                                    + l
                                    + " links to slot "
                                    + n
                                    + " of level "
                                    + g.level(n));
                }
                if (seen != null ? seen[n] == fwdStamp : containsBetween(list, base, base + i, n)) {
                    r.violation(
                            DUPLICATE, "slot " + s + " layer " + l + " lists slot " + n + " twice");
                }
                if (seen != null) {
                    seen[n] = fwdStamp;
                }
                forwardPrint += edgePrint(s, n, l);
            }
            int revStamp = ++stamp;
            int[] rev = g.reverseNeighbors(s, l);
            reverseEntries += rev.length;
            for (int i = 0; i < rev.length; i++) {
                int from = rev[i];
                reversePrint += edgePrint(from, s, l);
                if (from < 0
                        || from >= hw
                        || g.state(from) == HnswGraph.FREE
                        || g.level(from) < l) {
                    r.violation(
                            REVERSE,
                            "reverse list of slot "
                                    + s
                                    + " on layer "
                                    + l
                                    + " names slot "
                                    + from
                                    + " which does not link to it");
                } else if (seen != null
                        ? seen[from] == revStamp
                        : containsBetween(rev, 0, i, from)) {
                    r.violation(
                            REVERSE,
                            "reverse list of slot "
                                    + s
                                    + " on layer "
                                    + l
                                    + " names slot "
                                    + from
                                    + " twice");
                } else if (seen != null) {
                    seen[from] = revStamp;
                }
            }
            return true;
        }

        private static boolean containsBetween(int[] a, int from, int to, int v) {
            for (int i = from; i < to; i++) {
                if (a[i] == v) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Full check on behalf of {@link #checkRemoval} when a scoped proof cannot be made; {@code
     * reason} names why, as a checked count, so the report says what it is.
     */
    static IntegrityReport fallBack(
            HnswGraph g, int[] ordToSlot, int liveCount, String reason, long count) {
        return check(
                g, ordToSlot, liveCount, IntegrityReport.builder(STRUCTURE).checked(reason, count));
    }

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
     *       HnswRepairer#certifyReachability}): each touched node, and each node put in doubt since
     *       the last removal, has a live in-neighbour with a smaller label; a node put in doubt
     *       since that has none settles it by a layer-0 walk.
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
    static IntegrityReport checkRemoval(
            HnswGraph g, int[] ordToSlot, int liveCount, java.util.List<RemovalTrace> traces) {
        int hw = g.highWater();
        long entry = g.entry();
        int ep = HnswGraph.entrySlot(entry);
        if (ep >= 0 && !g.labelsValid()) {
            return fallBack(g, ordToSlot, liveCount, "scoped-fallback-labels-invalid", 1);
        }
        IntegrityReport.Builder r = IntegrityReport.builder(STRUCTURE);
        for (String v :
                new String[] {
                    REMOVED_IN_LIST,
                    OUT_OF_RANGE,
                    LEVEL_MISMATCH,
                    SELF_LOOP,
                    DUPLICATE,
                    DEGREE,
                    REVERSE,
                    ENTRY_NOT_LIVE,
                    ENTRY_NOT_TOP,
                    UNREACHABLE,
                    CERTIFICATE,
                    NOT_ZEROED,
                    HALF_REMOVED,
                    SLOT_MAP
                }) {
            r.expect(v);
        }
        CodeCheck codes = CodeCheck.of(g, r);
        IntBag scope = new IntBag();
        java.util.Set<int[]> batches =
                java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
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
                checkFreed(g, old, r);
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
        int[] slots = sortedUnique(scope);
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
                checkFreed(g, s, r);
                continue;
            }
            if (state == HnswGraph.DELETING) {
                r.violation(
                        HALF_REMOVED, "slot " + s + " is marked for removal but still allocated");
            }
            int ord = g.ordinal(s);
            if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != s) {
                r.violation(
                        SLOT_MAP,
                        "slot " + s + " names ordinal " + ord + " which does not map back");
            }
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
                    exactReverseCheck(g, hw, s, l, r);
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
                        ENTRY_NOT_TOP,
                        "entry slot "
                                + ep
                                + " has level "
                                + g.level(ep)
                                + " (recorded "
                                + entryLevel
                                + ")");
            }
            // Every node outside these two groups kept the in-neighbour with a smaller label the
            // last removal certified, so a chain of smaller labels from any of them ends at the
            // entry point once each node of the groups has such an in-neighbour too.
            java.util.BitSet pending = g.pendingCertificates();
            IntBag doubtful = new IntBag();
            for (int i = 0; i < liveInScope.size(); i++) {
                int s = liveInScope.get(i);
                certified++;
                certify(g, s, ep, pending.get(s), doubtful, r);
            }
            for (int s = pending.nextSetBit(0); s >= 0; s = pending.nextSetBit(s + 1)) {
                if (s < hw && g.isLive(s) && java.util.Arrays.binarySearch(slots, s) < 0) {
                    pendingChecked++;
                    certify(g, s, ep, true, doubtful, r);
                }
            }
            if (doubtful.size() > 0) {
                // Put in doubt by a write since the removal, legitimately: only a walk can tell.
                walks++;
                BitSet reached = reachableOnLayer0(g, ep, hw);
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

    /** The distinct values of a bag, ascending. */
    static int[] sortedUnique(IntBag bag) {
        int[] a = bag.toArray();
        java.util.Arrays.sort(a);
        int k = 0;
        for (int i = 0; i < a.length; i++) {
            if (k == 0 || a[k - 1] != a[i]) {
                a[k++] = a[i];
            }
        }
        return java.util.Arrays.copyOf(a, k);
    }

    /** A well-mixed 64-bit value of one directed edge on one layer (the murmur3 finaliser). */
    private static long edgePrint(int from, int to, int level) {
        long x = ((long) from << 32) ^ (to & 0xFFFFFFFFL) ^ ((long) level * 0xC2B2AE3D27D4EB4FL);
        x ^= x >>> 33;
        x *= 0xFF51AFD7ED558CCDL;
        x ^= x >>> 33;
        x *= 0xC4CEB9FE1A85EC53L;
        x ^= x >>> 33;
        return x;
    }

    /**
     * The slow, exact comparison, run only when the fingerprints disagree: names each bad entry.
     */
    private static int exactReverseCheck(HnswGraph g, int hw, IntegrityReport.Builder r) {
        int found = 0;
        for (int s = 0; s < hw; s++) {
            if (g.state(s) == HnswGraph.FREE) {
                continue;
            }
            for (int l = 0; l <= g.level(s); l++) {
                found += exactReverseCheck(g, hw, s, l, r);
            }
        }
        return found;
    }

    /**
     * One list both ways: every slot its reverse list names links to it, and every node it links to
     * names it in its reverse list. Cost: its degree times (degree + in-degree).
     *
     * @return how many bad entries it named
     */
    private static int exactReverseCheck(
            HnswGraph g, int hw, int s, int l, IntegrityReport.Builder r) {
        int found = 0;
        for (int from : g.reverseNeighbors(s, l)) {
            if (from >= 0
                    && from < hw
                    && g.state(from) != HnswGraph.FREE
                    && g.level(from) >= l
                    && !linksTo(g, from, l, s)) {
                found++;
                r.violation(
                        REVERSE,
                        "reverse list of slot "
                                + s
                                + " on layer "
                                + l
                                + " names slot "
                                + from
                                + " which does not link to it");
            }
        }
        int deg = g.degree(s, l);
        for (int i = 0; i < deg; i++) {
            int n = g.neighbor(s, l, i);
            if (n >= 0 && n < hw && g.state(n) != HnswGraph.FREE && g.level(n) >= l) {
                int[] rev = g.reverseNeighbors(n, l);
                if (!HnswGraph.contains(rev, rev.length, s)) {
                    found++;
                    r.violation(
                            REVERSE,
                            "edge "
                                    + s
                                    + " -> "
                                    + n
                                    + " on layer "
                                    + l
                                    + " missing from the reverse list");
                }
            }
        }
        return found;
    }

    private static boolean linksTo(HnswGraph g, int from, int level, int target) {
        int[] list = g.listArray(from, level);
        int at = g.listBase(from, level);
        int end = at + 1 + HnswGraph.degree(list, at);
        for (int i = at + 1; i < end; i++) {
            if (list[i] == target) {
                return true;
            }
        }
        return false;
    }

    private static void checkFreed(HnswGraph g, int s, IntegrityReport.Builder r) {
        if (!g.store().vectorIsZero(s)) {
            r.violation(NOT_ZEROED, "free slot " + s + " still holds vector bytes");
            return;
        }
        if (g.degree(s, 0) != 0 || g.level(s) != -1 || g.ordinal(s) != -1 || g.hasUpperLists(s)) {
            r.violation(NOT_ZEROED, "free slot " + s + " still holds links, a level or an ordinal");
        }
        if (g.reverseEntries(s) != 0) {
            r.violation(
                    NOT_ZEROED,
                    "free slot " + s + " still has " + g.reverseEntries(s) + " in-links recorded");
        }
        Int8Codes codec = g.store().codec();
        if (codec != null) {
            byte[] code = new byte[codec.stride()];
            g.store().copyCode(s, code);
            for (int i = 0; i < code.length; i++) {
                if (code[i] != 0) {
                    r.violation(
                            CODE_NOT_ZEROED,
                            "free slot "
                                    + s
                                    + " still holds code bytes (byte "
                                    + i
                                    + " is "
                                    + code[i]
                                    + ")");
                    return;
                }
            }
        }
    }

    /**
     * Recomputes live slots' codes from their stored vectors and compares them byte for byte,
     * padding and corrections included. Cost per slot: one encoding (two passes over the vector).
     */
    private static final class CodeCheck {
        private final HnswGraph g;
        private final Int8Codes codec;
        private final IntegrityReport.Builder r;
        private final byte[] expected;
        private final byte[] stored;
        private final float[] vector;
        long recomputed;

        private CodeCheck(HnswGraph g, Int8Codes codec, IntegrityReport.Builder r) {
            this.g = g;
            this.codec = codec;
            this.r = r;
            this.expected = new byte[codec.stride()];
            this.stored = new byte[codec.stride()];
            this.vector = new float[g.dim];
        }

        /** Null for a graph without codes; else declares the code violations in the report. */
        static CodeCheck of(HnswGraph g, IntegrityReport.Builder r) {
            Int8Codes codec = g.store().codec();
            if (codec == null) {
                return null;
            }
            r.expect(CODE_MISMATCH);
            r.expect(CODE_NOT_ZEROED);
            return new CodeCheck(g, codec, r);
        }

        void check(int s) {
            recomputed++;
            g.store().copyVector(s, vector);
            codec.encode(vector, 0, expected, 0);
            g.store().copyCode(s, stored);
            for (int i = 0; i < expected.length; i++) {
                if (stored[i] != expected[i]) {
                    r.violation(
                            CODE_MISMATCH,
                            "slot "
                                    + s
                                    + " (ordinal "
                                    + g.ordinal(s)
                                    + "): code byte "
                                    + i
                                    + " is "
                                    + stored[i]
                                    + ", its vector codes to "
                                    + expected[i]);
                    return;
                }
            }
        }
    }

    private static BitSet reachableOnLayer0(HnswGraph g, int ep, int hw) {
        BitSet seen = new BitSet(hw);
        int[] stack = new int[hw + 1];
        int top = 0;
        stack[top++] = ep;
        seen.set(ep);
        while (top > 0) {
            int s = stack[--top];
            for (int n : g.neighbors(s, 0)) {
                if (n < hw && !seen.get(n)) {
                    seen.set(n);
                    stack[top++] = n;
                }
            }
        }
        return seen;
    }
}
