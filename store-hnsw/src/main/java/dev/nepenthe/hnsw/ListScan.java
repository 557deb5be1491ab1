package dev.nepenthe.hnsw;

import static dev.nepenthe.hnsw.HnswIntegrityChecker.DEGREE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.DUPLICATE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.LEVEL_MISMATCH;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.OUT_OF_RANGE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.REMOVED_IN_LIST;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.REVERSE;
import static dev.nepenthe.hnsw.HnswIntegrityChecker.SELF_LOOP;

import dev.nepenthe.core.index.IntegrityReport;

/**
 * The per-list checks both checkers run: degree bounds; every forward entry a live slot of at least
 * the list's layer, not the node itself, not repeated; every reverse entry a slot that could link
 * here, not repeated. Sums what it saw, including a fingerprint of the edges from each side, so the
 * full checker can compare forward and reverse lists in bulk.
 */
final class ListScan {
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
     * @param seen an int per slot below {@code hw}, or null to find repeats by scanning the list.
     */
    ListScan(HnswGraph g, int hw, IntegrityReport.Builder r, int[] seen) {
        this.g = g;
        this.hw = hw;
        this.r = r;
        this.seen = seen;
    }

    /**
     * Checks the list of {@code s} on layer {@code l} and its reverse list. Cost: its degree plus
     * its in-degree (squared when scanning for repeats, for the scoped checker's few lists).
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
                        OUT_OF_RANGE, "slot " + s + " layer " + l + " holds -1 below its degree");
                continue;
            }
            if (n >= hw) {
                r.violation(
                        OUT_OF_RANGE,
                        HnswIntegrityChecker.link(s, l, n) + " beyond the high-water mark " + hw);
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
                        HnswIntegrityChecker.link(s, l, n) + " of level " + g.level(n));
            }
            if (seen != null ? seen[n] == fwdStamp : containsBetween(list, base, base + i, n)) {
                r.violation(DUPLICATE, "slot " + s + " layer " + l + " lists slot " + n + " twice");
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
            if (from < 0 || from >= hw || g.state(from) == HnswGraph.FREE || g.level(from) < l) {
                r.violation(
                        REVERSE,
                        HnswIntegrityChecker.reverseEntry(s, l, from)
                                + " which does not link to it");
            } else if (seen != null ? seen[from] == revStamp : containsBetween(rev, 0, i, from)) {
                r.violation(REVERSE, HnswIntegrityChecker.reverseEntry(s, l, from) + " twice");
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
    static int exactReverseCheck(HnswGraph g, int hw, IntegrityReport.Builder r) {
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
    static int exactReverseCheck(HnswGraph g, int hw, int s, int l, IntegrityReport.Builder r) {
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
                        HnswIntegrityChecker.reverseEntry(s, l, from)
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
}
