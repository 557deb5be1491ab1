package dev.nepenthe.hnsw;

/**
 * A {@link NodeScorer} whose point is a stored node and can be moved to another one. Building and
 * repairing compare nodes with each other (the heuristic asks, per candidate, whether it is closer
 * to any kept neighbour than to the base); re-aiming one scorer per candidate, as Lucene's {@code
 * UpdateableRandomVectorScorer} does, keeps that loop free of allocations.
 */
interface UpdatableNodeScorer extends NodeScorer {

    /**
     * Makes {@code node} (a live or being-removed slot of the scorer's layout) the point scored
     * against.
     */
    void setScoringNode(int node);
}
