package dev.nepenthe.core.index;

/**
 * Ordinals and their scores, best first (ties by ascending ordinal). {@code visited} counts the
 * vectors scored, a cost measure tests and benchmarks read.
 */
public record SearchResult(int[] ordinals, float[] scores, long visited) {

    public static final SearchResult EMPTY = new SearchResult(new int[0], new float[0], 0);

    public int size() {
        return ordinals.length;
    }
}
