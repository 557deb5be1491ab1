package dev.nepenthe.hnsw;

/**
 * Which slots one search has touched, cleared in O(1) by bumping a generation stamp (hnswlib's
 * visited-list pool does the same) instead of zeroing an array per query.
 */
final class VisitedSet {
    private int[] marks;
    private int generation;

    VisitedSet(int capacity) {
        marks = new int[capacity];
    }

    /** Starts a new search over slots below {@code capacity}. */
    void reset(int capacity) {
        if (marks.length < capacity) {
            marks = new int[capacity];
            generation = 0;
        }
        if (++generation == 0) {
            java.util.Arrays.fill(marks, 0);
            generation = 1;
        }
    }

    /** Marks a slot; returns false if it was already marked in this search. */
    boolean visit(int slot) {
        if (marks[slot] == generation) {
            return false;
        }
        marks[slot] = generation;
        return true;
    }

    boolean isVisited(int slot) {
        return marks[slot] == generation;
    }
}
