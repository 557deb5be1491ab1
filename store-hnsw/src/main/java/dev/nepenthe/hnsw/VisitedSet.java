package dev.nepenthe.hnsw;

import java.util.Arrays;

/**
 * Which slots one search has touched: one bit per slot, as Lucene's bit sets, so the set of a
 * 100,000-node graph is 12.5 KB and stays in the first-level cache beside the vectors being scored
 * (an int stamp per slot, hnswlib's way, is 400 KB and misses the cache on most checks).
 *
 * <p>Clearing costs what the search touched, not the graph's size: the words that went from zero to
 * non-zero are remembered and only they are zeroed at the next {@link #reset}.
 */
final class VisitedSet {
    private long[] bits;

    /** Indexes of the words set since the last reset. */
    private int[] touched = new int[256];

    private int touchedCount;

    VisitedSet(int capacity) {
        bits = new long[words(capacity)];
    }

    private static int words(int capacity) {
        return (capacity + 63) >>> 6;
    }

    /** Starts a new search over slots below {@code capacity}. */
    void reset(int capacity) {
        if (bits.length < words(capacity)) {
            bits = new long[words(capacity)];
            touchedCount = 0;
            return;
        }
        long[] b = bits;
        int[] t = touched;
        for (int i = 0; i < touchedCount; i++) {
            b[t[i]] = 0L;
        }
        touchedCount = 0;
    }

    /** Marks a slot; returns false if it was already marked in this search. */
    boolean visit(int slot) {
        int w = slot >>> 6;
        long word = bits[w];
        long mask = 1L << slot; // the shift uses the low six bits
        if ((word & mask) != 0) {
            return false;
        }
        if (word == 0L) {
            if (touchedCount == touched.length) {
                touched = Arrays.copyOf(touched, touchedCount * 2);
            }
            touched[touchedCount++] = w;
        }
        bits[w] = word | mask;
        return true;
    }
}
