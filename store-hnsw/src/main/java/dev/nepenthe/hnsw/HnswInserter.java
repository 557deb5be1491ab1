package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.Accept;
import java.util.Arrays;

/**
 * Adds nodes to an {@link HnswGraph}; several threads may insert at once while others search.
 *
 * <p>A node is linked in five steps (see {@link #insert}): its outgoing lists on every layer are
 * written before any neighbour links back to it, and the links back are made from layer 0 up, so a
 * search that reaches the node on any layer can always leave it again there and on every layer
 * below. Each list is changed only under its slot's lock, and the reverse lists are updated in the
 * same critical section, so removal can trust them.
 *
 * <p>Scores come from the graph's {@link ScorerSupplier}: the new node's beam search uses a scorer
 * aimed at the node itself (its stored vector is the query, read in place), and one more scorer,
 * re-aimed as needed, serves the heuristic and the neighbours' re-selections.
 */
final class HnswInserter {

    private final HnswGraph g;
    private final int efConstruction;

    /** Held for a whole insertion that raises the top level (rare: about log(n) times). */
    private final Object entryLock = new Object();

    HnswInserter(HnswGraph g, int efConstruction) {
        this.g = g;
        this.efConstruction = efConstruction;
    }

    /**
     * Links an allocated slot whose vector is already stored.
     *
     * @param level the slot's level (as allocated)
     */
    void insert(int slot, int level) {
        long entry = g.entry();
        if (entry < 0 || level > HnswGraph.entryLevel(entry)) {
            synchronized (entryLock) {
                entry = g.entry();
                if (entry < 0) {
                    g.setEntry(slot, level);
                    return;
                }
                if (level > HnswGraph.entryLevel(entry)) {
                    link(slot, level, entry);
                    g.setEntry(slot, level);
                    return;
                }
            }
        }
        link(slot, level, entry);
    }

    private void link(int slot, int level, long entry) {
        HnswSearcher.Scratch s = HnswSearcher.scratch();
        s.begin(g.capacity());
        // The caller holds the slot lock shared, so no grow replaces the layout while this runs.
        GraphLayout layout = g.layout();
        NodeScorer query = layout.scorers().nodeScorer(slot);
        UpdatableNodeScorer between = layout.scorers().nodeScorer(slot);
        int top = Math.min(level, HnswGraph.entryLevel(entry));
        // 1. Descend greedily through the layers above the node's own level.
        int ep = HnswSearcher.descend(layout, query, entry, level, s);
        int[] entries = {ep};
        int nEntries = 1;
        int[] selected = new int[g.maxDegree0];
        int[][] chosen = new int[top + 1][];
        int[][] candidates = new int[top + 1][];
        for (int l = top; l >= 0; l--) {
            // 2. Beam search this layer for efConstruction candidates.
            s.visited.reset(g.capacity());
            HnswSearcher.searchLayer(
                    layout,
                    query,
                    entries,
                    nEntries,
                    efConstruction,
                    l,
                    Accept.ALL,
                    slot,
                    Long.MAX_VALUE,
                    s);
            int n = s.results.size();
            int[] cand = new int[n];
            float[] scores = new float[n];
            for (int i = n - 1; i >= 0; i--) {
                scores[i] = s.results.topScore();
                cand[i] = s.results.pop();
            }
            // 3. Pick the outgoing list with the heuristic and write it. No list names the node
            //    yet, so no search can see it half linked.
            int k = NeighborSelector.select(between, cand, scores, n, g.maxDegree(l), selected);
            synchronized (g.lockFor(slot)) {
                g.replaceList(slot, l, selected, k, null);
            }
            chosen[l] = Arrays.copyOf(selected, k);
            candidates[l] = cand;
            entries = cand;
            nEntries = n;
        }
        // Links back from layer 0 up. Top-down made the node reachable on its upper layers while
        // its layer-0 list was still empty: an insert whose descent ended on it searched layer 0
        // from a dead end and took only the nodes being linked beside it as neighbours, an island
        // the rest of the graph does not link into (HnswConcurrencyTest, nodes found by their own
        // vector). One thread builds the same graph either way: a layer's links back change only
        // that layer's lists, and no search of a lower layer reads them (HnswFingerprintTest).
        for (int l = 0; l <= top; l++) {
            int[] sel = chosen[l];
            int[] cand = candidates[l];
            // 4. Link back from each chosen neighbour, dropping one neighbour from a full list.
            IntBag dropped = new IntBag();
            for (int target : sel) {
                linkBack(target, slot, l, dropped, between);
            }
            // 5. A node left without any in-link is unreachable (the new node itself when every
            //    neighbour's heuristic turned it down, or one a shrink dropped): link it again.
            if (sel.length > 0 && g.inDegree(slot, l) == 0) {
                HnswRepairer.linkFromClosest(g, slot, l, cand.clone());
            }
            for (int i = 0; i < dropped.size(); i++) {
                int b = dropped.get(i);
                if (g.inDegree(b, l) == 0) {
                    HnswRepairer.linkFromClosest(g, b, l, closestFirst(b, l, cand, between));
                }
            }
        }
    }

    /**
     * Adds {@code node} to the list of {@code target} on {@code level}; {@code between} is re-aimed
     * at will (at the target, then by the heuristic).
     */
    private void linkBack(
            int target, int node, int level, IntBag dropped, UpdatableNodeScorer between) {
        synchronized (g.lockFor(target)) {
            if (!g.isLive(target)) {
                return;
            }
            int deg = g.degree(target, level);
            int max = g.maxDegree(level);
            int[] current = g.neighbors(target, level);
            if (HnswGraph.contains(current, current.length, node)) {
                return;
            }
            if (deg < max) {
                g.appendNeighbor(target, level, node);
                g.addReverse(node, level, target);
                return;
            }
            int n = current.length + 1;
            int[] cand = Arrays.copyOf(current, n);
            cand[n - 1] = node;
            float[] scores = new float[n];
            between.setScoringNode(target);
            between.bulkScore(cand, n, scores);
            NeighborSelector.sortBestFirst(cand, scores, n);
            // A full list drops one neighbour, not every one the heuristic would reject: lists
            // stay full, and on real embeddings the graph reaches more recall per vector scored
            // (docs/BENCHMARKS.md, "Every peer as its users run it, on real embeddings").
            int drop = NeighborSelector.worstNonDiverse(between, cand, scores, n);
            System.arraycopy(cand, drop + 1, cand, drop, n - 1 - drop);
            g.replaceList(target, level, cand, n - 1, dropped);
        }
    }

    /**
     * {@code b}'s own neighbours, then the new node's candidates, each group closest to b first.
     */
    private int[] closestFirst(int b, int level, int[] cand, UpdatableNodeScorer between) {
        int[] own = g.neighbors(b, level);
        int total = own.length + cand.length;
        int[] all = Arrays.copyOf(own, total);
        System.arraycopy(cand, 0, all, own.length, cand.length);
        float[] scores = new float[total];
        between.setScoringNode(b);
        between.bulkScore(all, total, scores);
        NeighborSelector.sortBestFirst(all, scores, total);
        return all;
    }
}
