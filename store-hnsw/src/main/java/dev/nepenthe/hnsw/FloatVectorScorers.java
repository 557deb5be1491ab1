package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.VectorKernels;

/**
 * The exact {@link ScorerSupplier}: full-precision vectors as {@link HnswGraph} stores them
 * (slot {@code s} at {@code [s*dim, (s+1)*dim)} of one float array), scored with the
 * {@link VectorKernels}. A score is what {@link Metric#score} gives for the same two vectors,
 * bit for bit: the same kernel call with the same operand order, so graphs, search results and
 * ties are exactly what they were before the seam existed (FloatVectorScorersTest, and
 * HnswFingerprintTest for whole runs).
 *
 * <p>Cost. Query and node scorers are one final class, so every scoring call site in the graph
 * code sees a single receiver type and the JIT inlines it. A scorer aimed at a stored node reads
 * that node's vector in place instead of copying it. Making a scorer allocates one small object
 * per search or per build step; scoring allocates nothing.
 */
final class FloatVectorScorers implements ScorerSupplier {

    private final boolean l2;
    private final VectorKernels kernels;
    private final float[] vectors;
    private final int dim;

    /**
     * @param vectors the storage; read, never written, and held (so one supplier per layout)
     */
    FloatVectorScorers(Metric metric, VectorKernels kernels, float[] vectors, int dim) {
        this.l2 = metric == Metric.L2;
        this.kernels = kernels;
        this.vectors = vectors;
        this.dim = dim;
    }

    @Override
    public boolean isExact() {
        return true;
    }

    @Override
    public NodeScorer queryScorer(float[] preparedQuery) {
        if (preparedQuery.length != dim) {
            throw new IllegalArgumentException("query: expected " + dim + " components, got " + preparedQuery.length);
        }
        return new Scorer(this, preparedQuery, 0);
    }

    @Override
    public UpdatableNodeScorer nodeScorer(int node) {
        return new Scorer(this, vectors, node * dim);
    }

    /**
     * One point (a query at offset 0, or a stored node in place) against the stored vectors.
     * Metric conversion as {@link Metric#score}: L2 is the negated squared distance, cosine
     * (vectors stored unit length) and dot are the dot product; the point is the kernel's
     * first operand, the scored node its second.
     */
    static final class Scorer implements UpdatableNodeScorer {
        private final boolean l2;
        private final VectorKernels kernels;
        private final float[] vectors;
        private final int dim;
        private float[] point;
        private int pointOff;

        private Scorer(FloatVectorScorers s, float[] point, int pointOff) {
            this.l2 = s.l2;
            this.kernels = s.kernels;
            this.vectors = s.vectors;
            this.dim = s.dim;
            this.point = point;
            this.pointOff = pointOff;
        }

        @Override
        public float score(int node) {
            return l2 ? -kernels.squareDistance(point, pointOff, vectors, node * dim, dim)
                    : kernels.dot(point, pointOff, vectors, node * dim, dim);
        }

        @Override
        public void bulkScore(int[] nodes, int count, float[] scores) {
            // One kernel call for the whole list: it scores several rows per load of the point
            // and keeps their cache misses in flight together (VectorKernels#dotRows).
            if (l2) {
                kernels.squareDistanceRows(point, pointOff, vectors, nodes, count, dim, scores);
                for (int i = 0; i < count; i++) {
                    scores[i] = -scores[i];
                }
            } else {
                kernels.dotRows(point, pointOff, vectors, nodes, count, dim, scores);
            }
        }

        @Override
        public void setScoringNode(int node) {
            point = vectors;
            pointOff = node * dim;
        }

        @Override
        public boolean isExact() {
            return true;
        }
    }
}
