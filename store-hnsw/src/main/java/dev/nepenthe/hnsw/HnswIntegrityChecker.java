package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.IntegrityReport;
import java.util.BitSet;

/**
 * Proves the structural invariants of an {@link HnswGraph} and that no removed node survives in
 * it. Returns counts, so the forget protocol can record "checked 120,000 lists, 0 hold a
 * removed node, 0 unreachable" rather than a bare yes.
 *
 * <p>Checks: every list on every layer holds only live slots of at least that layer, no self
 * loops or repeats, within its degree bound; reverse lists match forward lists exactly; the
 * entry point is live and on the top level; every live node is reachable from the entry point
 * on layer 0; freed slots hold zero vector bytes and no links; the ordinal maps agree.
 * Caller excludes writers while it runs (searches may continue).
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

    private HnswIntegrityChecker() {}

    /**
     * @param ordToSlot the index's ordinal-to-slot map (-1 where not live)
     * @param liveCount the number of live ordinals the index believes it has
     */
    static IntegrityReport check(HnswGraph g, int[] ordToSlot, int liveCount) {
        IntegrityReport.Builder r = IntegrityReport.builder(STRUCTURE);
        for (String v : new String[] {REMOVED_IN_LIST, OUT_OF_RANGE, LEVEL_MISMATCH, SELF_LOOP, DUPLICATE, DEGREE,
            REVERSE, ENTRY_NOT_LIVE, ENTRY_NOT_TOP, UNREACHABLE, NOT_ZEROED, FREE_LIST, HALF_REMOVED, SLOT_MAP}) {
            r.expect(v);
        }
        int hw = g.highWater();
        int live = 0;
        int free = 0;
        int maxLevel = -1;
        long lists = 0;
        long edges = 0;
        long reverseEntries = 0;
        long forwardPrint = 0;
        long reversePrint = 0;
        int[] seenInList = new int[hw];
        int stamp = 0;
        for (int s = 0; s < hw; s++) {
            byte state = g.state(s);
            if (state == HnswGraph.FREE) {
                free++;
                checkFreed(g, s, r);
                continue;
            }
            if (state == HnswGraph.DELETING) {
                r.violation(HALF_REMOVED, "slot " + s + " is marked for removal but still allocated");
            }
            live++;
            int level = g.level(s);
            maxLevel = Math.max(maxLevel, level);
            int ord = g.ordinal(s);
            if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != s) {
                r.violation(SLOT_MAP, "slot " + s + " names ordinal " + ord + " which does not map back");
            }
            for (int l = 0; l <= level; l++) {
                lists++;
                int deg = g.degree(s, l);
                if (deg < 0 || deg > g.maxDegree(l)) {
                    r.violation(DEGREE, "slot " + s + " layer " + l + " degree " + deg + " outside [0, "
                            + g.maxDegree(l) + "]");
                    continue;
                }
                // A fresh stamp per list makes the repeat checks O(1) per entry.
                int fwdStamp = ++stamp;
                int[] list = g.listArray(s, l);
                int base = g.listBase(s, l) + 1;
                for (int i = 0; i < deg; i++) {
                    int n = list[base + i];
                    edges++;
                    if (n < 0) {
                        r.violation(OUT_OF_RANGE, "slot " + s + " layer " + l + " holds -1 below its degree");
                        continue;
                    }
                    if (n >= hw) {
                        r.violation(OUT_OF_RANGE, "slot " + s + " layer " + l + " links to slot " + n
                                + " beyond the high-water mark " + hw);
                        continue;
                    }
                    if (n == s) {
                        r.violation(SELF_LOOP, "slot " + s + " layer " + l);
                    }
                    if (g.state(n) != HnswGraph.LIVE) {
                        r.violation(REMOVED_IN_LIST, "slot " + s + " layer " + l + " links to "
                                + (g.state(n) == HnswGraph.FREE ? "free" : "removed") + " slot " + n);
                    } else if (g.level(n) < l) {
                        r.violation(LEVEL_MISMATCH, "slot " + s + " layer " + l + " links to slot " + n
                                + " of level " + g.level(n));
                    }
                    if (seenInList[n] == fwdStamp) {
                        r.violation(DUPLICATE, "slot " + s + " layer " + l + " lists slot " + n + " twice");
                    }
                    seenInList[n] = fwdStamp;
                    forwardPrint += edgePrint(s, n, l);
                }
                // Reverse lists must be exactly the transposed edges. Summing a 64-bit mix of every
                // edge from both sides compares the two multisets in one sequential pass (looking
                // each reverse entry up in its source's list costs a cache miss per edge); only when
                // the sums or counts differ does the exact pass below look for the culprits.
                int revStamp = ++stamp;
                int[] rev = g.reverseNeighbors(s, l);
                reverseEntries += rev.length;
                for (int from : rev) {
                    reversePrint += edgePrint(from, s, l);
                    if (from < 0 || from >= hw || g.state(from) == HnswGraph.FREE || g.level(from) < l) {
                        r.violation(REVERSE, "reverse list of slot " + s + " on layer " + l + " names slot " + from
                                + " which does not link to it");
                    } else if (seenInList[from] == revStamp) {
                        r.violation(REVERSE, "reverse list of slot " + s + " on layer " + l + " names slot " + from
                                + " twice");
                    } else {
                        seenInList[from] = revStamp;
                    }
                }
            }
        }
        if (reverseEntries != edges) {
            r.violation(REVERSE, "reverse lists hold " + reverseEntries + " entries for " + edges + " edges");
        }
        if (reverseEntries != edges || forwardPrint != reversePrint) {
            int found = exactReverseCheck(g, hw, r);
            if (found == 0) {
                r.violation(REVERSE, "reverse lists and forward lists differ (edge fingerprints disagree)");
            }
        }
        if (free != g.freeCount()) {
            r.violation(FREE_LIST, "free list holds " + g.freeCount() + " slots, " + free + " slots are free");
        }
        int mapped = 0;
        for (int ord = 0; ord < ordToSlot.length; ord++) {
            int s = ordToSlot[ord];
            if (s >= 0) {
                mapped++;
                if (s >= hw || g.state(s) == HnswGraph.FREE || g.ordinal(s) != ord) {
                    r.violation(SLOT_MAP, "ordinal " + ord + " points at slot " + s + " which does not name it");
                }
            }
        }
        if (mapped != live || live != liveCount) {
            r.violation(SLOT_MAP, "ordinal map has " + mapped + " entries, graph " + live + " live slots, index counts "
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
                    r.violation(ENTRY_NOT_TOP, "entry slot " + ep + " has level " + g.level(ep) + " (recorded "
                            + HnswGraph.entryLevel(entry) + "), top level is " + maxLevel);
                }
                BitSet seen = reachableOnLayer0(g, ep, hw);
                for (int slot = 0; slot < hw; slot++) {
                    if (g.state(slot) != HnswGraph.FREE) {
                        if (seen.get(slot)) {
                            reachable++;
                        } else {
                            r.violation(UNREACHABLE, "slot " + slot + " (ordinal " + g.ordinal(slot) + ")");
                        }
                    }
                }
            }
        } else if (ep >= 0) {
            r.violation(ENTRY_NOT_LIVE, "graph has no live node but entry point is slot " + ep);
        }
        return r.checked("live-nodes", live).checked("lists", lists).checked("edges", edges)
                .checked("free-slots", free).checked("reachable-on-layer-0", reachable).build();
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

    /** The slow, exact comparison, run only when the fingerprints disagree: names each bad entry. */
    private static int exactReverseCheck(HnswGraph g, int hw, IntegrityReport.Builder r) {
        int found = 0;
        for (int s = 0; s < hw; s++) {
            if (g.state(s) == HnswGraph.FREE) {
                continue;
            }
            for (int l = 0; l <= g.level(s); l++) {
                for (int from : g.reverseNeighbors(s, l)) {
                    if (from >= 0 && from < hw && g.state(from) != HnswGraph.FREE && g.level(from) >= l
                            && !linksTo(g, from, l, s)) {
                        found++;
                        r.violation(REVERSE, "reverse list of slot " + s + " on layer " + l + " names slot " + from
                                + " which does not link to it");
                    }
                }
                int deg = g.degree(s, l);
                for (int i = 0; i < deg; i++) {
                    int n = g.neighbor(s, l, i);
                    if (n >= 0 && n < hw && g.state(n) != HnswGraph.FREE && g.level(n) >= l
                            && !HnswGraph.contains(g.reverseNeighbors(n, l), g.reverseNeighbors(n, l).length, s)) {
                        found++;
                        r.violation(REVERSE, "edge " + s + " -> " + n + " on layer " + l + " missing from the reverse list");
                    }
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
        float[] v = g.vectors();
        int off = g.vectorOffset(s);
        for (int i = 0; i < g.dim; i++) {
            if (v[off + i] != 0f) {
                r.violation(NOT_ZEROED, "free slot " + s + " still holds vector bytes");
                return;
            }
        }
        if (g.degree(s, 0) != 0 || g.level(s) != -1 || g.ordinal(s) != -1) {
            r.violation(NOT_ZEROED, "free slot " + s + " still holds links, a level or an ordinal");
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
