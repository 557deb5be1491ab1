package dev.nepenthe.hnsw;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * Removes nodes from an {@link HnswGraph} for real: every in-link is dropped and every node that
 * lost one has its list re-selected, so afterwards no list anywhere holds a removed slot.
 *
 * <p>In-links come from the graph's reverse lists rather than from a search toward the node (as
 * IP-DiskANN does). A search finds most in-neighbours, not all; one it misses is a ghost edge that
 * keeps the removed vector's slot in the graph, which is exactly what a physical delete must rule
 * out. The reverse lists cost one int per edge and a little work on every list change, and turn
 * "find who links to x" into a lookup whose answer is complete.
 *
 * <p>Candidates for the re-selected lists come from one short beam search toward x (x's vector is
 * still intact while it is being removed), shared by all of x's in-neighbours: they are near x by
 * construction, so x's neighbourhood is theirs too. A search per in-neighbour (there are about as
 * many as a layer-0 list is long) cost several times the vector comparisons for the same recall.
 * What a removal costs now: docs/BENCHMARKS.md, "HNSW after deletes".
 *
 * <p>Runs with inserts and other removals excluded (the index's writer gate); searches go on
 * concurrently and may still route through a node being removed, but never return it.
 *
 * <p>Scores come from the graph's {@link ScorerSupplier}: each repair search uses a scorer aimed at
 * the node it searches around (read in place; a node being removed keeps its vector until its slot
 * is freed), and re-aimed scorers score candidates for the heuristic. Scorers are made per step and
 * never kept in fields: the supplier changes when the graph grows.
 */
final class HnswRepairer {

    private final HnswGraph g;
    private final int repairEf;
    private final BitSet removing = new BitSet();
    private final BitSet queued = new BitSet();

    /** Counters of the last {@link #remove} call, for tests and benchmarks. */
    long repairedLists;

    long reconnected;

    /** Totals over the repairer's life. */
    long repairedListsTotal;

    long reconnectedTotal;

    /**
     * Vector comparisons made by repairs over the repairer's life (searches, candidate scoring,
     * selection).
     */
    long comparisons;

    HnswRepairer(HnswGraph g, int repairEf) {
        this.g = g;
        this.repairEf = repairEf;
    }

    /**
     * Unlinks {@code slots[0, n)} and repairs their neighbourhoods. The caller frees the slots
     * afterwards (under the exclusive lock, so no running search still holds one).
     */
    void remove(int[] slots, int n) {
        repairedListsTotal += repairedLists;
        reconnectedTotal += reconnected;
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
            // 3. Collect the nodes that link to a removed node on this layer (shared across the
            // batch).
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
            int[][] inOf = new int[n][];
            int[][] outOf = new int[n][];
            for (int i = 0; i < n; i++) {
                if (g.level(slots[i]) >= l) {
                    inOf[i] = g.reverseNeighbors(slots[i], l);
                    outOf[i] = g.neighbors(slots[i], l);
                }
            }
            // 4. One beam search toward each removed node finds its neighbourhood (the pool);
            //    then each affected list is re-selected from the pools of the removed nodes it
            //    linked to, without the removed nodes: a fraction of the comparisons of a search
            //    per affected node, for the same recall. A list that linked to several removed
            //    nodes of a batch is re-selected once, from the union of their pools.
            int[][] poolOf = new int[n][];
            HashMap<Integer, Integer> batchIndex = new HashMap<>();
            for (int i = 0; i < n; i++) {
                if (g.level(slots[i]) >= l) {
                    poolOf[i] = poolAround(slots[i], l, s);
                    batchIndex.put(slots[i], i);
                }
            }
            for (int i = 0; i < affected.size(); i++) {
                repairFromPool(affected.get(i), l, s, lostInLink, poolOf, batchIndex);
            }
            // 5. Every path that ran a -> x -> b must still reach b: if no node that linked to x
            //    links to b now, the closest of them that can take b does.
            for (int i = 0; i < n; i++) {
                if (outOf[i] != null) {
                    bypass(inOf[i], outOf[i], l);
                }
            }
            // 6. Drop the removed nodes' own lists (and with them their out-neighbours' reverse
            // entries).
            for (int i = 0; i < n; i++) {
                int x = slots[i];
                if (g.level(x) >= l) {
                    g.replaceList(x, l, new int[0], 0, lostInLink);
                }
            }
            // 7. A node whose last in-link just went is unreachable on this layer: link it again.
            for (int i = 0; i < lostInLink.size(); i++) {
                int b = lostInLink.get(i);
                if (!removing.get(b)
                        && g.isLive(b)
                        && g.level(b) >= l
                        && g.inDegree(b, l) == 0
                        && b != HnswGraph.entrySlot(g.entry())) {
                    reconnect(b, l, s);
                }
            }
        }
    }

    /**
     * The neighbourhood of removed node {@code x} on {@code level}: a beam search toward x's own
     * (still intact) vector, seeded with x's surviving neighbours. Every node that linked to x
     * re-selects from this pool, so the search runs once per removed node instead of once per
     * in-neighbour. Cost: one search of width max(repairEf, degree bound).
     */
    private int[] poolAround(int x, int level, HnswSearcher.Scratch s) {
        GraphLayout layout = g.layout();
        NodeScorer query = layout.scorers().nodeScorer(x);
        s.begin(g.capacity());
        s.visited.visit(x);
        IntBag seeds = new IntBag();
        for (int c : g.neighbors(x, level)) {
            if (!removing.get(c)) {
                seeds.add(c);
            }
        }
        int[] entries = seeds.toArray();
        if (entries.length == 0) {
            // No surviving neighbour: start from the top as an insertion would. The (possibly
            // moved) entry point may sit below this level, and then no live node is up here.
            long e = g.entry();
            if (HnswGraph.entryLevel(e) < level) {
                return new int[0];
            }
            int ep = HnswSearcher.descend(layout, query, e, level, s);
            entries = ep < 0 || removing.get(ep) ? entries : new int[] {ep};
        }
        searchAround(layout, query, entries, level, x, s);
        return HnswSearcher.takeBestFirst(s);
    }

    /**
     * A repair's search on {@code level} around node {@code self} (never a result), of width
     * max(repairEf, degree bound); its comparisons are counted.
     */
    private void searchAround(
            GraphLayout layout,
            NodeScorer query,
            int[] entries,
            int level,
            int self,
            HnswSearcher.Scratch s) {
        HnswSearcher.searchAround(
                layout, query, entries, Math.max(repairEf, g.maxDegree(level)), level, self, s);
        comparisons += s.scored;
    }

    /**
     * Re-selects the list of {@code a} on {@code level} from the shared pools: its surviving
     * neighbours stay; the candidates are the surviving neighbours and the pool of every removed
     * node it linked to, each scored against a once.
     */
    private void repairFromPool(
            int a,
            int level,
            HnswSearcher.Scratch s,
            IntBag lostInLink,
            int[][] poolOf,
            Map<Integer, Integer> batchIndex) {
        int[] current = g.neighbors(a, level);
        s.visited.reset(g.capacity());
        s.visited.visit(a);
        int max = g.maxDegree(level);
        int[] out = new int[max];
        int k = 0;
        for (int c : current) {
            if (!removing.get(c)) {
                out[k++] = c;
                s.visited.visit(c);
            }
        }
        IntBag cand = new IntBag(128);
        for (int c : current) {
            if (removing.get(c)) {
                Integer bi = batchIndex.get(c);
                if (bi == null || poolOf[bi] == null) {
                    continue;
                }
                for (int d : g.neighbors(c, level)) {
                    if (!removing.get(d) && s.visited.visit(d)) {
                        cand.add(d);
                    }
                }
                for (int d : poolOf[bi]) {
                    if (!removing.get(d) && s.visited.visit(d)) {
                        cand.add(d);
                    }
                }
            }
        }
        int m = cand.size();
        if (m == 0 && k == 0) {
            repairList(a, level, s, lostInLink);
            return;
        }
        int[] cs = cand.toArray();
        float[] scores = new float[m];
        UpdatableNodeScorer between = g.scorers().nodeScorer(a);
        between.bulkScore(cs, m, scores);
        comparisons += m;
        NeighborSelector.sortBestFirst(cs, scores, m);
        // Same rules as repairList: survivors stay, the heuristic picks replacements, the
        // closest unchosen candidates fill the list back to its old length.
        int target = Math.max(current.length, k + 1);
        long before = s.scored;
        k = NeighborSelector.selectInto(between, cs, scores, m, target, out, k, s);
        comparisons += s.scored - before;
        for (int i = 0; i < m && k < target; i++) {
            if (!HnswGraph.contains(out, k, cs[i])) {
                out[k++] = cs[i];
            }
        }
        g.replaceList(a, level, out, k, lostInLink);
        repairedLists++;
    }

    /**
     * The fallback when the pools offer nothing (every neighbour of {@code a} and every pool member
     * is being removed): re-selects the list of {@code a} on {@code level} from its own beam
     * search. Candidates: its surviving neighbours, the surviving neighbours of each removed node
     * it linked to, and what a short beam search (ef = repairEf) seeded with both finds around it.
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
        GraphLayout layout = g.layout();
        // Aimed at a for the search; the heuristic re-aims it afterwards.
        UpdatableNodeScorer scorer = layout.scorers().nodeScorer(a);
        s.begin(g.capacity());
        s.visited.visit(a);
        int[] entries = seeds.toArray();
        if (entries.length == 0) {
            // Every neighbour is being removed: start from the top as an insertion would.
            int ep = HnswSearcher.descend(layout, scorer, g.entry(), level, s);
            entries = ep < 0 || ep == a ? entries : new int[] {ep};
        }
        searchAround(layout, scorer, entries, level, a, s);
        int m = s.results.size();
        int[] cand = new int[m];
        float[] scores = new float[m];
        for (int i = m - 1; i >= 0; i--) {
            scores[i] = s.results.topScore();
            cand[i] = s.results.pop();
        }
        int max = g.maxDegree(level);
        int[] out = new int[max];
        // 1. Surviving neighbours stay. Each is another node's in-link; re-selecting them away
        //    strands nodes (measured: whole clusters unreachable after removing 60%).
        int k = 0;
        for (int i = 0; i < survivors.size(); i++) {
            out[k++] = survivors.get(i);
        }
        // 2. The heuristic picks the replacements: closest first, each kept only if it is closer
        //    to this node than to anything already in the list, i.e. it covers the direction the
        //    removed neighbour covered.
        int target = Math.max(current.length, k + 1);
        long before = s.scored;
        k = NeighborSelector.selectInto(scorer, cand, scores, m, target, out, k, s);
        comparisons += s.scored - before;
        // 3. The list keeps its old length: the closest unchosen candidates fill what the
        //    heuristic left, so degrees (and recall) do not erode as removals add up.
        for (int i = 0; i < m && k < target; i++) {
            if (!HnswGraph.contains(out, k, cand[i])) {
                out[k++] = cand[i];
            }
        }
        g.replaceList(a, level, out, k, lostInLink);
        repairedLists++;
    }

    /**
     * Links each surviving out-neighbour of a removed node from one of its surviving in-neighbours.
     */
    private void bypass(int[] in, int[] out, int level) {
        IntBag live = new IntBag(in.length);
        for (int a : in) {
            if (!removing.get(a)) {
                live.add(a);
            }
        }
        if (live.size() == 0) {
            return;
        }
        UpdatableNodeScorer between = null;
        for (int b : out) {
            if (removing.get(b)) {
                continue;
            }
            int[] rev = g.reverseNeighbors(b, level);
            boolean linked = false;
            for (int i = 0; i < live.size() && !linked; i++) {
                linked = HnswGraph.contains(rev, rev.length, live.get(i));
            }
            if (!linked) {
                int[] cand = live.toArray();
                float[] scores = new float[cand.length];
                if (between == null) {
                    between = g.scorers().nodeScorer(b);
                } else {
                    between.setScoringNode(b);
                }
                between.bulkScore(cand, cand.length, scores);
                comparisons += cand.length;
                NeighborSelector.sortBestFirst(cand, scores, cand.length);
                if (linkFromClosest(g, b, level, cand)) {
                    reconnected++;
                }
            }
        }
    }

    /** Gives {@code b} an in-link on {@code level} from its closest node that can take one. */
    private void reconnect(int b, int level, HnswSearcher.Scratch s) {
        GraphLayout layout = g.layout();
        NodeScorer query = layout.scorers().nodeScorer(b);
        s.begin(g.capacity());
        s.visited.visit(b);
        int[] entries = g.neighbors(b, level);
        if (entries.length == 0) {
            long e = g.entry();
            entries = new int[] {HnswSearcher.descend(layout, query, e, level, s)};
        }
        searchAround(layout, query, entries, level, b, s);
        int[] cand = HnswSearcher.takeBestFirst(s);
        if (linkFromClosest(g, b, level, cand)) {
            reconnected++;
        }
    }

    /**
     * Gives {@code b} an in-link on {@code level} from the first of {@code cand} (closest first)
     * that can take one: a node with room gains the link; failing that, the closest node trades its
     * farthest neighbour that has another in-link. Takes each candidate's lock in turn (never two
     * at once), so inserters may call it too.
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
        // Made only when no candidate had room (rare), then re-aimed at each candidate.
        UpdatableNodeScorer between = null;
        for (int c : cand) {
            synchronized (g.lockFor(c)) {
                if (c == b || !g.isLive(c) || g.level(c) < level) {
                    continue;
                }
                int[] list = g.neighbors(c, level);
                if (HnswGraph.contains(list, list.length, b)) {
                    return true;
                }
                if (between == null) {
                    between = g.scorers().nodeScorer(c);
                } else {
                    between.setScoringNode(c);
                }
                int worst = -1;
                float worstScore = Float.POSITIVE_INFINITY;
                for (int i = 0; i < list.length; i++) {
                    float sc = between.score(list[i]);
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
