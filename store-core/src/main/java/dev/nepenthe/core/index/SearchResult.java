package dev.nepenthe.core.index;

/**
 * Ordinals and their scores, best first (ties by ascending ordinal). {@code visited} counts the
 * vectors scored, a cost measure tests and benchmarks read. The arrays are the record's own, not
 * copies.
 *
 * @param ordinals the hits' ordinals, best first
 * @param scores their scores, in the same order (higher is closer)
 * @param visited how many vectors the search scored
 */
@SuppressWarnings("ArrayRecordComponent") // hits handed over uncopied, never compared
public record SearchResult(int[] ordinals, float[] scores, long visited) {

    /** No hit, nothing scored. */
    public static final SearchResult EMPTY = new SearchResult(new int[0], new float[0], 0);

    /**
     * How many hits there are.
     *
     * @return the length of {@code ordinals}
     */
    public int size() {
        return ordinals.length;
    }
}
