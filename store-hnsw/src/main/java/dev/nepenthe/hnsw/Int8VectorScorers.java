package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The approximate {@link ScorerSupplier} of a quantized graph: scores {@link Int8Codes} as {@link
 * HnswGraph} stores them (slot {@code s} at {@code s * stride} of one byte array or one native
 * segment) with the integer kernel {@link VectorKernels#dotInt8} and the estimator of {@link
 * Int8Codes#estimate}. A query is coded once per search, the same way a stored vector is. {@link
 * #isExact()} is false: a search walks with these scores and re-ranks its best candidates with
 * {@link FloatVectorScorers} before it returns anything.
 *
 * <p>Metric conversion as {@link FloatVectorScorers}: dot and cosine (unit vectors) score the
 * estimated dot product, L2 the negated estimated squared distance {@code -(|p|^2 + |x|^2 - 2 <p^,
 * x^>)} with both norms exact.
 *
 * <p>Where the codes live changes no score: the segment forms of the kernel give the array forms'
 * ints, and the four floats beside the levels are read as the same bits.
 *
 * <p>Cost: making a query scorer codes the query (two passes over it and one small array); a score
 * is one integer kernel call over {@code dim} bytes plus a few float operations on four floats
 * stored beside the levels, in the same cache lines. A scorer aimed at a stored node reads a heap
 * code in place and copies an off-heap one once per aim.
 */
final class Int8VectorScorers implements ScorerSupplier {

    private final boolean l2;
    private final VectorKernels kernels;
    private final Int8Codes codec;

    /** The codes on the heap, or null when they are in {@link #offHeap}. */
    private final byte[] codes;

    /** The codes off the heap, or null when they are in {@link #codes}. */
    private final MemorySegment offHeap;

    /**
     * @param codes the storage; read, never written, and held (so one supplier per layout)
     */
    Int8VectorScorers(Metric metric, VectorKernels kernels, Int8Codes codec, byte[] codes) {
        this(metric, kernels, codec, codes, null);
    }

    /**
     * @param codes the storage off the heap; read, never written, and held
     */
    Int8VectorScorers(Metric metric, VectorKernels kernels, Int8Codes codec, MemorySegment codes) {
        this(metric, kernels, codec, null, codes);
    }

    private Int8VectorScorers(
            Metric metric,
            VectorKernels kernels,
            Int8Codes codec,
            byte[] codes,
            MemorySegment offHeap) {
        this.l2 = metric == Metric.L2;
        this.kernels = kernels;
        this.codec = codec;
        this.codes = codes;
        this.offHeap = offHeap;
    }

    @Override
    public boolean isExact() {
        return false;
    }

    @Override
    public NodeScorer queryScorer(float[] preparedQuery) {
        if (preparedQuery.length != codec.dimension()) {
            throw new IllegalArgumentException(
                    "query: expected "
                            + codec.dimension()
                            + " components, got "
                            + preparedQuery.length);
        }
        byte[] code = new byte[codec.stride()];
        codec.encode(preparedQuery, 0, code, 0);
        return new Scorer(this, code, 0);
    }

    @Override
    public UpdatableNodeScorer nodeScorer(int node) {
        if (codes != null) {
            return new Scorer(this, codes, node * codec.stride());
        }
        Scorer s = new Scorer(this, new byte[codec.stride()], 0);
        s.setScoringNode(node);
        return s;
    }

    /** One coded point (a query's own code, or a stored node's) against the stored codes. */
    static final class Scorer implements UpdatableNodeScorer {
        private final boolean l2;
        private final VectorKernels kernels;
        private final Int8Codes codec;
        private final byte[] codes;
        private final MemorySegment offHeap;
        private final int dim;
        private final int stride;
        private byte[] point;
        private int pointOff;

        /**
         * The copy of an off-heap node's code this scorer aims from; made at the first such aim.
         */
        private byte[] copied;

        private float pCentre;
        private float pStep;
        private float pSum;
        private float pNorm2;

        /** The integer dot products of one {@link #bulkScore} batch. */
        private int[] levelDots = new int[64];

        private Scorer(Int8VectorScorers s, byte[] point, int pointOff) {
            this.l2 = s.l2;
            this.kernels = s.kernels;
            this.codec = s.codec;
            this.codes = s.codes;
            this.offHeap = s.offHeap;
            this.dim = s.codec.dimension();
            this.stride = s.codec.stride();
            aim(point, pointOff);
        }

        private void aim(byte[] p, int off) {
            point = p;
            pointOff = off;
            pCentre = codec.centre(p, off);
            pStep = codec.step(p, off);
            pSum = codec.componentSum(p, off);
            pNorm2 = codec.squaredNorm(p, off);
        }

        @Override
        public float score(int node) {
            if (offHeap != null) {
                long x = (long) node * stride;
                return finish(
                        x,
                        kernels.dotInt8(
                                point,
                                pointOff + Int8Codes.LEVELS_AT,
                                offHeap,
                                x + Int8Codes.LEVELS_AT,
                                dim));
            }
            int x = node * stride;
            return finish(
                    x,
                    kernels.dotInt8(
                            point,
                            pointOff + Int8Codes.LEVELS_AT,
                            codes,
                            x + Int8Codes.LEVELS_AT,
                            dim));
        }

        /** The dot product estimate of this scorer's point against one stored code's floats. */
        private float estimate(float centre, float step, float stepTimesLevelSum, int levelDot) {
            return Int8Codes.estimate(
                    pCentre, pStep, pSum, centre, step, stepTimesLevelSum, levelDot);
        }

        /** The metric's score from the levels' dot product of the heap code at {@code x}. */
        private float finish(int x, int levelDot) {
            Int8Codes c = codec;
            byte[] a = codes;
            float dot = estimate(c.centre(a, x), c.step(a, x), c.stepTimesLevelSum(a, x), levelDot);
            return l2 ? -((pNorm2 + c.squaredNorm(a, x)) - 2f * dot) : dot;
        }

        /**
         * {@link #finish(int, int)} for the off-heap code at {@code x}: the same floats, the same
         * arithmetic.
         */
        private float finish(long x, int levelDot) {
            Int8Codes c = codec;
            MemorySegment a = offHeap;
            float dot = estimate(c.centre(a, x), c.step(a, x), c.stepTimesLevelSum(a, x), levelDot);
            return l2 ? -((pNorm2 + c.squaredNorm(a, x)) - 2f * dot) : dot;
        }

        /**
         * One kernel call for the whole batch ({@link VectorKernels#dotInt8Bulk} overlaps the rows'
         * memory loads), then the corrections per node. Equal to {@link #score} per node: the same
         * ints, the same {@link #finish}.
         */
        @Override
        public void bulkScore(int[] nodes, int count, float[] scores) {
            if (levelDots.length < count) {
                levelDots = new int[Math.max(count, 2 * levelDots.length)];
            }
            int[] dots = levelDots;
            int st = stride;
            int at = pointOff + Int8Codes.LEVELS_AT;
            int from = Int8Codes.LEVELS_AT;
            if (offHeap != null) {
                kernels.dotInt8Bulk(point, at, offHeap, from, st, nodes, count, dim, dots);
                for (int i = 0; i < count; i++) {
                    scores[i] = finish((long) nodes[i] * st, dots[i]);
                }
                return;
            }
            kernels.dotInt8Bulk(point, at, codes, from, st, nodes, count, dim, dots);
            for (int i = 0; i < count; i++) {
                scores[i] = finish(nodes[i] * st, dots[i]);
            }
        }

        @Override
        public void setScoringNode(int node) {
            if (offHeap == null) {
                aim(codes, node * stride);
                return;
            }
            if (copied == null) {
                copied = new byte[stride];
            }
            MemorySegment.copy(
                    offHeap, ValueLayout.JAVA_BYTE, (long) node * stride, copied, 0, stride);
            aim(copied, 0);
        }

        @Override
        public boolean isExact() {
            return false;
        }
    }
}
