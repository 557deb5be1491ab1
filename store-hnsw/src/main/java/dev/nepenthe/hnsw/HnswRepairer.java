package dev.nepenthe.hnsw;

import java.util.BitSet;

/**
 * Removes nodes from an {@link HnswGraph} for real: every in-link is dropped and every node
 * that lost one has its list re-selected, so afterwards no list anywhere holds a removed slot.
 *
 * <p>In-links come from the graph's reverse lists rather than from a search toward the node
 * (as IP-DiskANN does). A search finds most in-neighbours, not all; one it misses is a ghost
 * edge that keeps the removed vector's slot in the graph, which is exactly what a physical
 * delete must rule out. The reverse lists cost one int per edge and a little work on every
 * list change, and turn "find who links to x" into a lookup whose answer is complete.
 *
 * <p>Runs with inserts and other removals excluded (the index's writer gate); searches go on
 * concurrently and may still route through a node being removed, but never return it.
 */
final class HnswRepairer {

    private final HnswGraph g;
    private final int repairEf;
    private final BitSet removing = new BitSet();
    private final BitSet queued = new BitSet();

    /** Counters of the last {@link #remove} call, for tests and benchmarks. */
    long repairedLists;
    long reconnected;

    HnswRepairer(HnswGraph g, int repairEf) {
        this.g = g;
        this.repairEf = repairEf;
    }

    /**
     * Unlinks {@code slots[0, n)} and repairs their neighbourhoods. The caller frees the slots
     * afterwards (under the exclusive lock, so no running search still holds one).
     */
    void remove(int[] slots, int n) {
        repairedLists = 0;
        reconnected = 0;
        removing.clear();
        int maxLevel = -1;
        // 1. Mark: from here on no search puts these slots in a result.
        for (int i = 0; i < n; i++) {
            g.markDeleting(slots[i]);
            removing.set(slots[i]);
            maxLevel = Math.max(maxLevel, g.level(slots[i]));
        }
        // 2. Move the entry point off a removed node before any repair search starts from it.
        int oldEntry = HnswGraph.entrySlot(g.entry());
        if (oldEntry >= 0 && removing.get(oldEntry)) {
            chooseNewEntry();
        }
        HnswSearcher.Scratch s = HnswSearcher.scratch();
        for (int l = maxLevel; l >= 0; l--) {
            // 3. Collect the nodes that link to a removed node on this layer (shared across the batch).
            IntBag affected = new IntBag();
            queued.clear();
            for (int i = 0; i < n; i++) {
                int x = slots[i];
                if (g.level(x) < l) {
                    continue;
                }
                for (int a : g.reverseNeighbors(x, l)) {
                    if (!removing.get(a) && !queued.get(a)) {
                        queued.set(a);
                        affected.add(a);
                    }
                }
            }
            IntBag lostInLink = new IntBag();
            // 4. Re-select each affected list from candidates without the removed nodes.
            for (int i = 0; i < affected.size(); i++) {
                repairList(affected.get(i), l, s, lostInLink);
            }
            // 5. Drop the removed nodes' own lists (and with them their out-neighbours' reverse entries).
            for (int i = 0; i < n; i++) {
                int x = slots[i];
                if (g.level(x) >= l) {
                    g.replaceList(x, l, new int[0], 0, lostInLink);
                }
            }
            // 6. A node whose last in-link just went is unreachable on this layer: link it again.
            for (int i = 0; i < lostInLink.size(); i++) {
                int b = lostInLink.get(i);
                if (!removing.get(b) && g.isLive(b) && g.level(b) >= l && g.inDegree(b, l) == 0
                        && b != HnswGraph.entrySlot(g.entry())) {
                    reconnect(b, l, s);
                }
            }
        }
    }

    /**
     * Re-selects the list of {@code a} on {@code level}. Candidates: its surviving neighbours,
     * the surviving neighbours of each removed node it linked to, and what a short beam search
     * (ef = repairEf) seeded with both finds around it.
     */
    private void repairList(int a, int level, HnswSearcher.Scratch s, IntBag lostInLink) {
        int[] current = g.neighbors(a, level);
        IntBag seeds = new IntBag(current.length * 4);
        IntBag survivors = new IntBag(current.length);
        for (int c : current) {
            if (!removing.get(c)) {
                seeds.add(c);
                survivors.add(c);
            } else {
                for (int d : g.neighbors(c, level)) {
                    if (d != a && !removing.get(d)) {
                        seeds.add(d);
                    }
                }
            }
        }
        float[] query = g.vectorCopy(a);
        s.begin(g.capacity());
        s.visited.visit(a);
        int[] entries = seeds.toArray();
        if (entries.length == 0) {
            // Every neighbour is being removed: start from the top as an insertion would.
            int ep = HnswSearcher.descend(g, query, g.entry(), level, s);
            entries = ep < 0 || ep == a ? entries : new int[] {ep};
        }
        HnswSearcher.searchLayer(g, query, entries, entries.length, Math.max(repairEf, g.maxDegree(level)), level,
                null, a, Long.MAX_VALUE, s);
        int m = s.results.size();
        int[] cand = new int[m];
        float[] scores = new float[m];
        for (int i = m - 1; i >= 0; i--) {
            scores[i] = s.results.topScore();
            cand[i] = s.results.pop();
        }
        int max = g.maxDegree(level);
        int[] out = new int[max];
        int k = NeighborSelector.select(g, cand, scores, m, max, out);
        // Surviving neighbours the heuristic passed over stay while there is room: each is an
        // in-link of another node, and dropping in-links is how a repair would strand nodes.
        for (int i = 0; i < survivors.size() && k < max; i++) {
            int c = survivors.get(i);
            if (!HnswGraph.contains(out, k, c)) {
                out[k++] = c;
            }
        }
        // The list keeps its old length: a removed neighbour's place goes to the closest
        // candidate not yet chosen, so degrees (and with them recall) do not erode as removals add up.
        for (int i = 0; i < m && k < current.length; i++) {
            if (!HnswGraph.contains(out, k, cand[i])) {
                out[k++] = cand[i];
            }
        }
        g.replaceList(a, level, out, k, lostInLink);
        repairedLists++;
    }

    /** Gives {@code b} an in-link on {@code level} from its closest node that can take one. */
    private void reconnect(int b, int level, HnswSearcher.Scratch s) {
        float[] query = g.vectorCopy(b);
        s.begin(g.capacity());
        s.visited.visit(b);
        int[] entries = g.neighbors(b, level);
        if (entries.length == 0) {
            long e = g.entry();
            entries = new int[] {HnswSearcher.descend(g, query, e, level, s)};
        }
        HnswSearcher.searchLayer(g, query, entries, entries.length, Math.max(repairEf, g.maxDegree(level)), level,
                null, b, Long.MAX_VALUE, s);
        int m = s.results.size();
        int[] cand = new int[m];
        for (int i = m - 1; i >= 0; i--) {
            cand[i] = s.results.pop();
        }
        if (linkFromClosest(g, b, level, cand)) {
            reconnected++;
        }
    }

    /**
     * Gives {@code b} an in-link on {@code level} from the first of {@code cand} (closest first)
     * that can take one: a node with room gains the link; failing that, the closest node trades
     * its farthest neighbour that has another in-link. Takes each candidate's lock in turn (never
     * two at once), so inserters may call it too.
     *
     * @return false if no candidate could take the link
     */
    static boolean linkFromClosest(HnswGraph g, int b, int level, int[] cand) {
        int max = g.maxDegree(level);
        for (int c : cand) {
            synchronized (g.lockFor(c)) {
                if (c != b && g.isLive(c) && g.level(c) >= level && g.degree(c, level) < max) {
                    int[] list = g.neighbors(c, level);
                    if (!HnswGraph.contains(list, list.length, b)) {
                        g.appendNeighbor(c, level, b);
                        g.addReverse(b, level, c);
                    }
                    return true;
                }
            }
        }
        for (int c : cand) {
            synchronized (g.lockFor(c)) {
                if (c == b || !g.isLive(c) || g.level(c) < level) {
                    continue;
                }
                int[] list = g.neighbors(c, level);
                if (HnswGraph.contains(list, list.length, b)) {
                    return true;
                }
                int worst = -1;
                float worstScore = Float.POSITIVE_INFINITY;
                for (int i = 0; i < list.length; i++) {
                    float sc = g.scoreBetween(c, list[i]);
                    if (sc < worstScore && g.inDegree(list[i], level) > 1) {
                        worst = i;
                        worstScore = sc;
                    }
                }
                if (worst >= 0) {
                    list[worst] = b;
                    g.replaceList(c, level, list, list.length, null);
                    return true;
                }
            }
        }
        return false;
    }

    /** Makes the live node with the highest level the entry point (none: the graph is empty). */
    private void chooseNewEntry() {
        int best = -1;
        int bestLevel = -1;
        for (int s = 0; s < g.highWater(); s++) {
            if (g.isLive(s) && !removing.get(s) && g.level(s) > bestLevel) {
                best = s;
                bestLevel = g.level(s);
            }
        }
        g.setEntry(best, bestLevel);
    }
}
