package dev.nepenthe.hnsw;

/**
 * The HNSW neighbour-selection heuristic (Malkov and Yashunin, algorithm 4; hnswlib's {@code
 * getNeighborsByHeuristic2}), shared by insertion, list shrinking and removal repair.
 *
 * <p>Candidates are taken closest first; one is kept only if it is closer to the base node than to
 * every neighbour kept so far. That spreads a list over directions instead of spending it on one
 * tight cluster, which is what keeps the graph navigable.
 *
 * <p>Candidate-to-neighbour scores come from an {@link UpdatableNodeScorer} re-aimed at each
 * candidate in turn, so the heuristic allocates nothing per comparison and never sees a vector.
 */
final class NeighborSelector {

    private NeighborSelector() {}

    /**
     * Sorts candidates best first by their score to the base (insertion sort: lists are short, at
     * most a few hundred).
     */
    static void sortBestFirst(int[] slots, float[] scores, int n) {
        for (int i = 1; i < n; i++) {
            int s = slots[i];
            float sc = scores[i];
            int j = i - 1;
            while (j >= 0 && (scores[j] < sc || (scores[j] == sc && slots[j] > s))) {
                slots[j + 1] = slots[j];
                scores[j + 1] = scores[j];
                j--;
            }
            slots[j + 1] = s;
            scores[j + 1] = sc;
        }
    }

    /**
     * Selects at most {@code max} of {@code n} candidates sorted best first.
     *
     * @param between scores candidates against kept neighbours; re-aimed at each candidate, so it
     *     points at an unspecified node afterwards
     * @param scores each candidate's score to the base node
     * @param out receives the selection, best first; must hold {@code max} entries
     * @return how many were selected. Cost: up to n * max vector comparisons.
     */
    static int select(
            UpdatableNodeScorer between, int[] slots, float[] scores, int n, int max, int[] out) {
        return selectInto(between, slots, scores, n, max, out, 0, null);
    }

    /**
     * As {@link #select}, but {@code out[0, kept)} already holds neighbours that stay; candidates
     * are judged against them too and appended after them. Candidates already kept are skipped.
     * Adds the vector comparisons it makes to {@code cost.scored} when {@code cost} is non-null.
     *
     * @return the new length of {@code out}
     */
    static int selectInto(
            UpdatableNodeScorer between,
            int[] slots,
            float[] scores,
            int n,
            int max,
            int[] out,
            int kept,
            HnswSearcher.Scratch cost) {
        int fixed = kept;
        int cmp = 0;
        for (int i = 0; i < n && kept < max; i++) {
            int c = slots[i];
            if (HnswGraph.contains(out, fixed, c)) {
                continue;
            }
            float toBase = scores[i];
            boolean diverse = true;
            // One score at a time, not a bulk call: the first kept neighbour closer to c than
            // the base settles it, and the rest would be scored for nothing.
            between.setScoringNode(c);
            for (int j = 0; j < kept; j++) {
                cmp++;
                if (between.score(out[j]) > toBase) {
                    diverse = false;
                    break;
                }
            }
            if (diverse) {
                out[kept++] = c;
            }
        }
        if (cost != null) {
            cost.scored += cmp;
        }
        return kept;
    }

    /**
     * The one candidate to drop from a list that is one over its bound, so it stays full: the worst
     * candidate closer to some better one than to the base, or the worst if every one is diverse
     * (Lucene's {@code findWorstNonDiverse}).
     *
     * @param slots candidates sorted best first
     * @param scores their scores to the base
     * @return the index to drop
     */
    static int worstNonDiverse(UpdatableNodeScorer between, int[] slots, float[] scores, int n) {
        for (int i = n - 1; i > 0; i--) {
            between.setScoringNode(slots[i]);
            for (int j = 0; j < i; j++) {
                if (between.score(slots[j]) > scores[i]) {
                    return i;
                }
            }
        }
        return n - 1;
    }
}
