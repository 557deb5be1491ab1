package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.Accept;
import java.util.Arrays;

/**
 * Walks an {@link HnswGraph}: the descent through the upper layers (greedy, or a narrow beam for
 * searches, see {@link #descendBeam}) and the beam search of one layer (the paper's SEARCH-LAYER,
 * hnswlib's {@code searchBaseLayer}). The searcher never changes the graph; the builder and the
 * repairer use it to find candidates.
 *
 * <p>It follows a {@link GraphLayout}'s lists and scores with a {@link NodeScorer} made from that
 * same layout's {@link GraphLayout#scorers() scorers}: a query scorer for a search, a scorer aimed
 * at a stored node for an insert or a repair. It never sees a vector.
 *
 * <p>A node that is being removed ({@link HnswGraph#DELETING}) still routes the walk (its lists are
 * intact until the repair drops them) but never enters a result set.
 */
final class HnswSearcher {

    /**
     * Per-thread buffers, so a query allocates nothing but its scorer and its answer. Scorers are
     * not kept here: they hold their layout's vectors (see {@link ScorerSupplier}).
     */
    static final class Scratch {
        final VisitedSet visited = new VisitedSet(1024);
        final NodeHeap candidates = NodeHeap.bestOnTop(256);
        final NodeHeap results = NodeHeap.worstOnTop(256);

        /** Vectors scored since the last {@link #begin}. */
        long scored;

        /** One expanded node's unvisited neighbours and their scores. */
        int[] batch = new int[64];

        float[] batchScores = new float[64];

        /** The neighbour buffer, at least {@code deg} long ({@link #batchScores} too). */
        int[] batch(int deg) {
            if (batch.length < deg) {
                batch = new int[deg];
                batchScores = new float[deg];
            }
            return batch;
        }

        void begin(int capacity) {
            visited.reset(capacity);
            candidates.clear();
            results.clear();
            scored = 0;
        }
    }

    /**
     * The upper-layer beam of a search ({@link #descendBeam}). On 100k low-rank clustered vectors
     * (100 clusters), at efSearch 64, greedy left 8 of 1,000 queries with at most one of their ten
     * neighbours and a beam of 2 left 3; beams of 4, 8 and 16 left none. A query then scored 643
     * vectors with greedy, 680 with 4 and 736 with 8 (docs/BENCHMARKS.md).
     */
    static final int UPPER_BEAM = 4;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private HnswSearcher() {}

    static Scratch scratch() {
        return SCRATCH.get();
    }

    /**
     * Moves greedily toward the scorer's point on {@code level} from {@code start}: repeatedly
     * jumps to the best-scoring neighbour until none improves. Returns the slot reached.
     */
    static int greedy(GraphLayout g, NodeScorer scorer, int start, int level, Scratch s) {
        int current = start;
        float best = scorer.score(current);
        s.scored++;
        boolean moved = true;
        while (moved) {
            moved = false;
            int[] arr = g.listArray(current, level);
            if (arr == null) {
                break;
            }
            int base = g.listBase(current, level);
            int deg = HnswGraph.degree(arr, base);
            int[] batch = s.batch(deg);
            float[] scores = s.batchScores;
            int count = 0;
            int cap = g.capacity;
            for (int i = 0; i < deg; i++) {
                int n = arr[base + 1 + i];
                if (n >= 0 && n < cap) {
                    batch[count++] = n;
                }
            }
            // The whole list in one kernel call, then the first strictly best: the node a
            // neighbour-by-neighbour scan would have moved to.
            scorer.bulkScore(batch, count, scores);
            s.scored += count;
            for (int i = 0; i < count; i++) {
                if (scores[i] > best) {
                    best = scores[i];
                    current = batch[i];
                    moved = true;
                }
            }
        }
        return current;
    }

    /** Descends from the entry point down to (but not into) {@code targetLevel}; -1 if empty. */
    static int descend(GraphLayout g, NodeScorer scorer, long entry, int targetLevel, Scratch s) {
        int ep = HnswGraph.entrySlot(entry);
        if (ep < 0) {
            return -1;
        }
        for (int l = HnswGraph.entryLevel(entry); l > targetLevel; l--) {
            ep = greedy(g, scorer, ep, l, s);
        }
        return ep;
    }

    /**
     * Descends from the entry point to layer 0 with a beam of {@code width} on each upper layer
     * instead of a single greedy walker, and returns the layer-0 entry slots, best first (at most
     * {@code width}; empty if the graph is). On clustered data a greedy walker can settle in the
     * wrong cluster of a sparse upper layer, and a layer-0 beam seeded there rarely crosses back; a
     * few walkers on the upper layers keep the right cluster in reach for a few dozen extra scores.
     * Width 1 is the plain greedy descent.
     */
    static int[] descendBeam(GraphLayout g, NodeScorer scorer, long entry, int width, Scratch s) {
        int ep = HnswGraph.entrySlot(entry);
        if (ep < 0) {
            return new int[0];
        }
        int top = HnswGraph.entryLevel(entry);
        if (width <= 1) {
            return new int[] {descend(g, scorer, entry, 0, s)};
        }
        int[] entries = {ep};
        int nEntries = 1;
        for (int l = top; l > 0; l--) {
            s.visited.reset(g.capacity);
            searchLayer(g, scorer, entries, nEntries, width, l, Accept.ALL, -1, Long.MAX_VALUE, s);
            int n = s.results.size();
            if (n == 0) {
                // Every node this layer's beam reached is being removed: keep the last entries,
                // whose lists still route.
                continue;
            }
            if (entries.length < n) {
                entries = new int[n];
            }
            for (int i = n - 1; i >= 0; i--) {
                entries[i] = s.results.pop();
            }
            nEntries = n;
        }
        s.visited.reset(g.capacity);
        return nEntries == entries.length ? entries : Arrays.copyOf(entries, nEntries);
    }

    /**
     * Beam search of one layer. On return {@code s.results} holds up to {@code ef} eligible slots,
     * worst on top. A slot is eligible when it is live, is not {@code exclude} and {@code accept}
     * accepts its ordinal.
     *
     * <p>While fewer than {@code ef} eligible slots have been found the walk keeps expanding, so a
     * restrictive filter still fills the result set if the layer can reach enough.
     *
     * @param scorer scores against the query, over {@code g}'s vectors
     * @param entries slots to start from (scored and visited first)
     * @param visitLimit stop once this many vectors were scored (cost cap); Long.MAX_VALUE for none
     * @return false if the walk stopped at the visit limit
     */
    static boolean searchLayer(
            GraphLayout g,
            NodeScorer scorer,
            int[] entries,
            int nEntries,
            int ef,
            int level,
            Accept accept,
            int exclude,
            long visitLimit,
            Scratch s) {
        NodeHeap cand = s.candidates;
        NodeHeap res = s.results;
        VisitedSet visited = s.visited;
        cand.clear();
        res.clear();
        for (int i = 0; i < nEntries; i++) {
            int e = entries[i];
            if (e < 0 || !visited.visit(e)) {
                continue;
            }
            float sc = scorer.score(e);
            s.scored++;
            cand.push(e, sc);
            if (eligible(g, e, accept, exclude)) {
                res.push(e, sc);
                if (res.size() > ef) {
                    res.pop();
                }
            }
        }
        while (!cand.isEmpty()) {
            // 1. Stop when the closest unexpanded candidate is worse than the worst kept result.
            if (res.size() >= ef && cand.topScore() < res.topScore()) {
                break;
            }
            int c = cand.pop();
            int[] arr = g.listArray(c, level);
            if (arr == null) {
                continue;
            }
            int base = g.listBase(c, level);
            int deg = HnswGraph.degree(arr, base);
            // 2. Gather the unvisited neighbours, then score them in one bulk call: the loads are
            //    independent, so the CPU overlaps them instead of waiting on each heap decision.
            int[] batch = s.batch(deg);
            float[] batchScores = s.batchScores;
            int count = 0;
            int cap = g.capacity;
            for (int i = 0; i < deg; i++) {
                int n = arr[base + 1 + i];
                // A shared upper list may name a slot of a newer layout: not this walk's.
                if (n >= 0 && n < cap && visited.visit(n)) {
                    batch[count++] = n;
                }
            }
            scorer.bulkScore(batch, count, batchScores);
            s.scored += count;
            // 3. Keep a neighbour as a candidate if it could still improve the results, and as a
            //    result only if it is eligible.
            for (int i = 0; i < count; i++) {
                int n = batch[i];
                float sc = batchScores[i];
                if (res.size() < ef || sc > res.topScore()) {
                    cand.push(n, sc);
                    if (eligible(g, n, accept, exclude)) {
                        res.push(n, sc);
                        if (res.size() > ef) {
                            res.pop();
                        }
                    }
                }
            }
            if (s.scored > visitLimit) {
                return false;
            }
        }
        return true;
    }

    /**
     * One layer searched toward a node's own vector for a repair: every entry a seed, no filter, no
     * visit limit, {@code exclude} (the node itself) never a result.
     */
    static void searchAround(
            GraphLayout g,
            NodeScorer scorer,
            int[] entries,
            int ef,
            int level,
            int exclude,
            Scratch s) {
        searchLayer(
                g,
                scorer,
                entries,
                entries.length,
                ef,
                level,
                Accept.ALL,
                exclude,
                Long.MAX_VALUE,
                s);
    }

    /** Empties the last search's results into an array, best first. */
    static int[] takeBestFirst(Scratch s) {
        int m = s.results.size();
        int[] best = new int[m];
        for (int i = m - 1; i >= 0; i--) {
            best[i] = s.results.pop();
        }
        return best;
    }

    // Accept.ALL is one shared instance that accepts everything: identity is the cheap test for it.
    @SuppressWarnings("ReferenceEquality")
    static boolean eligible(GraphLayout g, int slot, Accept accept, int exclude) {
        return slot != exclude
                && g.isLive(slot)
                && (accept == Accept.ALL || accept.accepts(g.ordinal(slot)));
    }
}
