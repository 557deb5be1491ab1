package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.IntegrityReport;
import java.util.Arrays;
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

    /** The violations both checkers can report, in report order; each adds its own after them. */
    private static final String[] COMMON_VIOLATIONS = {
        REMOVED_IN_LIST,
        OUT_OF_RANGE,
        LEVEL_MISMATCH,
        SELF_LOOP,
        DUPLICATE,
        DEGREE,
        REVERSE,
        ENTRY_NOT_LIVE,
        ENTRY_NOT_TOP,
        UNREACHABLE
    };

    private HnswIntegrityChecker() {}

    /** Declares the common violations, then {@code more}, as what {@code r} checked for. */
    static void expect(IntegrityReport.Builder r, String... more) {
        for (String v : COMMON_VIOLATIONS) {
            r.expect(v);
        }
        for (String v : more) {
            r.expect(v);
        }
    }

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
        expect(r, NOT_ZEROED, FREE_LIST, HALF_REMOVED, SLOT_MAP);
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
            checkAllocated(g, s, state, ordToSlot, r);
            live++;
            if (codes != null) {
                codes.check(s);
            }
            int level = g.level(s);
            maxLevel = Math.max(maxLevel, level);
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
            int found = ListScan.exactReverseCheck(g, hw, r);
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
                            entryLevels(g, ep, HnswGraph.entryLevel(entry))
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
     * Full check on behalf of {@link ScopedRemovalCheck#check} when a scoped proof cannot be made;
     * {@code reason} names why, as a checked count, so the report says what it is.
     */
    static IntegrityReport fallBack(
            HnswGraph g, int[] ordToSlot, int liveCount, String reason, long count) {
        return check(
                g, ordToSlot, liveCount, IntegrityReport.builder(STRUCTURE).checked(reason, count));
    }

    /**
     * The checks of an allocated slot both checkers make: not left half removed, and its ordinal
     * maps back to it.
     */
    static void checkAllocated(
            HnswGraph g, int s, byte state, int[] ordToSlot, IntegrityReport.Builder r) {
        if (state == HnswGraph.DELETING) {
            r.violation(HALF_REMOVED, "slot " + s + " is marked for removal but still allocated");
        }
        int ord = g.ordinal(s);
        if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != s) {
            r.violation(
                    SLOT_MAP, "slot " + s + " names ordinal " + ord + " which does not map back");
        }
    }

    /** How a violation names one link: "slot s layer l links to slot n". */
    static String link(int s, int l, int n) {
        return "slot " + s + " layer " + l + " links to slot " + n;
    }

    /**
     * How a violation names one reverse entry: "reverse list of slot s on layer l names slot f".
     */
    static String reverseEntry(int s, int l, int from) {
        return "reverse list of slot " + s + " on layer " + l + " names slot " + from;
    }

    /** How a violation names an entry point whose level is not as recorded or expected. */
    static String entryLevels(HnswGraph g, int ep, int recorded) {
        return "entry slot " + ep + " has level " + g.level(ep) + " (recorded " + recorded;
    }

    /** The distinct values of a bag, ascending. */
    static int[] sortedUnique(IntBag bag) {
        int[] a = bag.toArray();
        Arrays.sort(a);
        int k = 0;
        for (int i = 0; i < a.length; i++) {
            if (k == 0 || a[k - 1] != a[i]) {
                a[k++] = a[i];
            }
        }
        return Arrays.copyOf(a, k);
    }

    static void checkFreed(HnswGraph g, int s, IntegrityReport.Builder r) {
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

    static BitSet reachableOnLayer0(HnswGraph g, int ep, int hw) {
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
