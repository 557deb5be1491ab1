package dev.nepenthe.hnsw;

/**
 * Makes the scorers of one storage snapshot: a {@link GraphLayout} holds one, over the vectors of
 * that layout (Lucene's {@code RandomVectorScorerSupplier}, jvector's build and search score
 * providers). Searches ask for a {@link #queryScorer}; inserts and repairs ask for a {@link
 * #nodeScorer} aimed at a stored node, whose vector is the query of their beam search and the base
 * of their neighbour heuristic.
 *
 * <p>{@link FloatVectorScorers} is exact. {@link Int8VectorScorers} (codes for the walk of a
 * quantized graph, floats kept for re-ranking) answers {@code false} from {@link #isExact()}, and
 * everything that hands a score to a caller re-ranks with an exact one first (see {@link
 * HnswIndex#search}).
 *
 * <p>Keep scorers for one operation: they hold the array they were made from, and an array a grow
 * left behind is no longer zeroed when a slot is freed, so a scorer kept in a field or a
 * thread-local would keep removed vectors reachable.
 */
interface ScorerSupplier {

    /** Whether the scorers this supplier makes are exact (see {@link NodeScorer#isExact()}). */
    boolean isExact();

    /**
     * A scorer for a prepared query (see {@link dev.nepenthe.core.Metric#prepare}); the array is
     * read, not copied, and must not change while the scorer is used. Cost: one small object.
     */
    NodeScorer queryScorer(float[] preparedQuery);

    /**
     * A scorer aimed at stored {@code node}, re-aimable. Cost: one small object, no copy of the
     * vector.
     */
    UpdatableNodeScorer nodeScorer(int node);
}
