package dev.nepenthe.hnsw;

import java.util.Arrays;

/**
 * The reverse lists of an {@link HnswGraph}: per slot and layer, the slots whose forward list holds
 * it. They make a removal exact (every in-link is found without a search or a scan) and let the
 * reachability certificate read a node's in-neighbours. Only writers and the checker read them; the
 * graph keeps them in step with the forward lists, each under a striped lock of its own.
 */
final class ReverseLinks {
    private static final int STRIPES = 1024;
    private static final int[] EMPTY = new int[0];

    private final Object[] locks = new Object[STRIPES];

    /** Per slot, per layer: {count, sources...}, or null for a layer with none yet. */
    private int[][][] reverse = new int[0][][];

    ReverseLinks() {
        for (int i = 0; i < STRIPES; i++) {
            locks[i] = new Object();
        }
    }

    /** Grows to {@code newCapacity} slots. Caller holds the graph's exclusive lock. */
    void grow(int newCapacity) {
        reverse = Arrays.copyOf(reverse, newCapacity);
    }

    /** Empty lists for a slot just handed out at {@code level}. */
    void allocate(int slot, int level) {
        reverse[slot] = new int[level + 1][];
    }

    /** Drops a freed slot's lists. */
    void clear(int slot) {
        reverse[slot] = null;
    }

    void add(int target, int level, int source) {
        synchronized (locks[target & (STRIPES - 1)]) {
            int[][] perLevel = reverse[target];
            int[] r = perLevel[level];
            if (r == null) {
                r = new int[8];
            } else if (r[0] + 1 == r.length) {
                r = Arrays.copyOf(r, r.length * 2);
            }
            r[1 + r[0]++] = source;
            perLevel[level] = r;
        }
    }

    void remove(int target, int level, int source) {
        synchronized (locks[target & (STRIPES - 1)]) {
            int[] r = reverse[target][level];
            if (r == null) {
                return;
            }
            int n = r[0];
            for (int i = 1; i <= n; i++) {
                if (r[i] == source) {
                    r[i] = r[n];
                    r[n] = 0;
                    r[0] = n - 1;
                    return;
                }
            }
        }
    }

    /** A copy of the slots whose list at {@code level} holds {@code target}. */
    int[] of(int target, int level) {
        synchronized (locks[target & (STRIPES - 1)]) {
            int[][] perLevel = reverse[target];
            int[] r = perLevel == null || level >= perLevel.length ? null : perLevel[level];
            return r == null ? EMPTY : Arrays.copyOfRange(r, 1, 1 + r[0]);
        }
    }

    /**
     * Entries left in the reverse lists of a slot on any layer; a freed slot has none (and no
     * reverse lists at all). Cost: its layers.
     */
    int entries(int slot) {
        synchronized (locks[slot & (STRIPES - 1)]) {
            int[][] perLevel = reverse[slot];
            int n = 0;
            if (perLevel != null) {
                for (int[] r : perLevel) {
                    n += r == null ? 0 : r[0];
                }
            }
            return n;
        }
    }

    int inDegree(int target, int level) {
        synchronized (locks[target & (STRIPES - 1)]) {
            int[] r = reverse[target][level];
            return r == null ? 0 : r[0];
        }
    }

    /** Drops every reverse list; {@link #rebuild} recomputes them from the forward lists. */
    void rebuild(HnswGraph g) {
        int highWater = g.highWater();
        // Only at load, before the graph is published: no locks. Per layer, the in-links are
        // counted, laid out flat by target (a prefix sum of the counts) and then copied into each
        // target's own list, sized to fit. Appending link by link to each target's list instead
        // chased two references per link (the target's table of layers, then its list) at
        // random across a million objects: 6 s of a 1M-node load, against about 1 s this way.
        // The lists come out in the same order: sources ascending.
        int top = -1;
        for (int s = 0; s < highWater; s++) {
            if (g.state(s) == HnswGraph.FREE) {
                reverse[s] = null;
            } else if (reverse[s] != null && reverse[s].length == g.level(s) + 1) {
                Arrays.fill(
                        reverse[s],
                        null); // the table allocate() made: a million fewer objects at 1M
            } else {
                reverse[s] = new int[g.level(s) + 1][];
            }
            if (g.state(s) != HnswGraph.FREE) {
                top = Math.max(top, g.level(s));
            }
        }
        for (int l = 0; l <= top; l++) {
            int[] start = new int[highWater + 1];
            linkPass(g, l, highWater, start, null, null);
            for (int s = 0; s < highWater; s++) {
                start[s + 1] += start[s];
            }
            int[] flat = new int[start[highWater]];
            int[] fill = Arrays.copyOf(start, highWater);
            linkPass(g, l, highWater, null, flat, fill);
            for (int s = 0; s < highWater; s++) {
                int counted = start[s + 1] - start[s];
                if (counted > 0) {
                    // Room for the count, the links, and one more before the first growth.
                    int[] r = new int[Math.max(8, counted + 2)];
                    r[0] = counted;
                    System.arraycopy(flat, start[s], r, 1, counted);
                    reverse[s][l] = r;
                }
            }
        }
    }

    /**
     * The smallest label of the live nodes other than {@code target} that link to it on layer 0,
     * {@link Integer#MAX_VALUE} if there is none; the scan stops at the first label below {@code
     * below} and returns it (the certificate then needs no more). Reads the reverse list in place,
     * where {@link #of} copies it.
     */
    int smallestInLabel(HnswGraph g, int target, int below) {
        synchronized (locks[target & (STRIPES - 1)]) {
            int[][] perLevel = reverse[target];
            int[] r = perLevel == null ? null : perLevel[0];
            int smallest = Integer.MAX_VALUE;
            for (int i = 1, n = r == null ? 0 : r[0]; i <= n; i++) {
                int u = r[i];
                if (u != target && g.isLive(u) && g.label(u) < smallest) {
                    smallest = g.label(u);
                    if (smallest < below) {
                        break;
                    }
                }
            }
            return smallest;
        }
    }

    /**
     * One pass over the links of layer {@code l}, in slot order: with {@code counts}, counts each
     * target's in-links at {@code counts[target + 1]}; else writes each source at {@code
     * flat[fill[target]++]}. One loop for both passes of {@link #rebuild}, so they visit the same
     * links in the same order.
     */
    private static void linkPass(
            HnswGraph g, int l, int highWater, int[] counts, int[] flat, int[] fill) {
        for (int s = 0; s < highWater; s++) {
            if (g.state(s) == HnswGraph.FREE || g.level(s) < l) {
                continue;
            }
            int[] a = g.listArray(s, l);
            int base = g.listBase(s, l);
            for (int i = 0, deg = HnswGraph.degree(a, base); i < deg; i++) {
                int n = a[base + 1 + i];
                if (n < 0) {
                    continue;
                }
                if (counts != null) {
                    counts[n + 1]++;
                } else {
                    flat[fill[n]++] = s;
                }
            }
        }
    }
}
