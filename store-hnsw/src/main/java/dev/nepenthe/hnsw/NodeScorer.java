package dev.nepenthe.hnsw;

/**
 * Scores stored nodes against one fixed point (a search's query, or a stored node while the graph
 * is built or repaired): the only thing the searcher, the inserter, the repairer and the neighbour
 * heuristic know about vectors, in the spirit of Lucene's {@code RandomVectorScorer}. Whether
 * vectors are floats or codes is the {@link ScorerSupplier}'s business.
 *
 * <p>Higher is closer, as everywhere in Nepenthe. A scorer reads the storage it was made from
 * without locks or bounds checks beyond the JVM's: callers pass slots below the capacity of the
 * layout the scorer came from. Not thread-safe; one operation on one thread owns it.
 */
interface NodeScorer {

    /** The score of {@code node} against this scorer's point. */
    float score(int node);

    /**
     * Scores {@code nodes[0, count)} into {@code scores[0, count)}; {@code scores[i]} equals {@link
     * #score(int) score(nodes[i])} bit for bit. One call per expanded node's neighbour list, so an
     * implementation can overlap the loads (or look up codes in one pass).
     */
    void bulkScore(int[] nodes, int count, float[] scores);

    /**
     * Whether scores are the metric's exact value (full precision) rather than an approximation (a
     * quantized code's). A caller that returns scores or compares them against a threshold must
     * re-rank approximate ones with an exact scorer first.
     */
    boolean isExact();
}
