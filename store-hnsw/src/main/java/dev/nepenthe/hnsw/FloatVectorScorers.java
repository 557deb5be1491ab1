package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The exact {@link ScorerSupplier}: full-precision vectors as {@link HnswGraph} stores them (slot
 * {@code s} at floats {@code [s*dim, (s+1)*dim)} of one heap array or one native segment), scored
 * with the {@link VectorKernels}. A score is what {@link Metric#score} gives for the same two
 * vectors, bit for bit: the same kernel call with the same operand order (the kernels' segment
 * forms agree with their array forms bit for bit), so graphs, search results and ties do not depend
 * on where the vectors live (FloatVectorScorersTest, and HnswFingerprintTest for whole runs).
 *
 * <p>Cost. Query and node scorers are one final class, so every scoring call site in the graph code
 * sees a single receiver type and the JIT inlines it; which storage a scorer reads is one
 * predictable branch per call. A scorer aimed at a stored node reads a heap vector in place and
 * copies an off-heap one once per aim (the kernels take the point as an array). Making a scorer
 * allocates one small object per search or per build step; scoring allocates nothing.
 */
final class FloatVectorScorers implements ScorerSupplier {

    private final boolean l2;
    private final VectorKernels kernels;

    /** The vectors on the heap, or null when they are in {@link #offHeap}. */
    private final float[] heap;

    /** The vectors off the heap, or null when they are in {@link #heap}. */
    private final MemorySegment offHeap;

    private final int dim;

    /**
     * @param vectors the storage; read, never written, and held (so one supplier per layout)
     */
    FloatVectorScorers(Metric metric, VectorKernels kernels, float[] vectors, int dim) {
        this(metric, kernels, vectors, null, dim);
    }

    /**
     * @param vectors the storage, floats in native byte order; read, never written, and held
     */
    FloatVectorScorers(Metric metric, VectorKernels kernels, MemorySegment vectors, int dim) {
        this(metric, kernels, null, vectors, dim);
    }

    private FloatVectorScorers(
            Metric metric, VectorKernels kernels, float[] heap, MemorySegment offHeap, int dim) {
        this.l2 = metric == Metric.L2;
        this.kernels = kernels;
        this.heap = heap;
        this.offHeap = offHeap;
        this.dim = dim;
    }

    @Override
    public boolean isExact() {
        return true;
    }

    @Override
    public NodeScorer queryScorer(float[] preparedQuery) {
        if (preparedQuery.length != dim) {
            throw new IllegalArgumentException(
                    "query: expected " + dim + " components, got " + preparedQuery.length);
        }
        return new Scorer(this, preparedQuery, false);
    }

    @Override
    public UpdatableNodeScorer nodeScorer(int node) {
        Scorer s = new Scorer(this, heap != null ? heap : new float[dim], true);
        s.setScoringNode(node);
        return s;
    }

    /**
     * One point (a query, or a stored node) against the stored vectors. Metric conversion as {@link
     * Metric#score}: L2 is the negated squared distance, cosine (vectors stored unit length) and
     * dot are the dot product; the point is the kernel's first operand, the scored node its second.
     */
    static final class Scorer implements UpdatableNodeScorer {
        private final boolean l2;
        private final VectorKernels kernels;
        private final float[] heap;
        private final MemorySegment offHeap;
        private final int dim;

        /**
         * The query; or, for a node scorer, the heap vectors themselves (the node read in place at
         * {@link #pointOff}) or this scorer's own copy of an off-heap node.
         */
        private final float[] point;

        private int pointOff;

        /** False for a query scorer: its point is the caller's array and is never re-aimed. */
        private final boolean aimable;

        private Scorer(FloatVectorScorers s, float[] point, boolean aimable) {
            this.l2 = s.l2;
            this.kernels = s.kernels;
            this.heap = s.heap;
            this.offHeap = s.offHeap;
            this.dim = s.dim;
            this.point = point;
            this.aimable = aimable;
        }

        @Override
        public float score(int node) {
            if (heap != null) {
                return l2
                        ? -kernels.squareDistance(point, pointOff, heap, node * dim, dim)
                        : kernels.dot(point, pointOff, heap, node * dim, dim);
            }
            return l2
                    ? -kernels.squareDistance(point, pointOff, offHeap, (long) node * dim, dim)
                    : kernels.dot(point, pointOff, offHeap, (long) node * dim, dim);
        }

        @Override
        public void bulkScore(int[] nodes, int count, float[] scores) {
            // One kernel call for the whole list: it scores several rows per load of the point
            // and keeps their cache misses in flight together (VectorKernels#dotRows).
            if (l2) {
                if (heap != null) {
                    kernels.squareDistanceRows(point, pointOff, heap, nodes, count, dim, scores);
                } else {
                    kernels.squareDistanceRows(point, pointOff, offHeap, nodes, count, dim, scores);
                }
                for (int i = 0; i < count; i++) {
                    scores[i] = -scores[i];
                }
            } else if (heap != null) {
                kernels.dotRows(point, pointOff, heap, nodes, count, dim, scores);
            } else {
                kernels.dotRows(point, pointOff, offHeap, nodes, count, dim, scores);
            }
        }

        @Override
        public void setScoringNode(int node) {
            if (!aimable) {
                throw new IllegalStateException("a query scorer cannot be aimed at a stored node");
            }
            if (heap != null) {
                pointOff = node * dim;
            } else {
                MemorySegment.copy(
                        offHeap,
                        ValueLayout.JAVA_FLOAT,
                        (long) node * dim * Float.BYTES,
                        point,
                        0,
                        dim);
            }
        }

        @Override
        public boolean isExact() {
            return true;
        }
    }
}
