package dev.nepenthe.core.internal.vector;

import static dev.nepenthe.core.internal.vector.PanamaOrder.F8;

import dev.nepenthe.core.vector.CentroidBlock;
import jdk.incubator.vector.FloatVector;

/**
 * The nearest centroid of each point, for k-means and PQ encoding, on eight lanes (256 bits) over a
 * {@link CentroidBlock}'s transposed groups: broadcasts and independent multiply-adds, no reduction
 * across lanes, then vector compares for the smallest score. {@link PanamaKernels} calls it only
 * where 256-bit vectors are native.
 */
final class PanamaNearest {

    private PanamaNearest() {}

    /** Per-thread scores of one point against every centroid of a {@link CentroidBlock}. */
    private static final ThreadLocal<float[][]> NEAREST_SCRATCH =
            ThreadLocal.withInitial(() -> new float[1][0]);

    /** Centroid indices 0..7 as floats (exact: indices stay far below 2^24). */
    private static final float[] LANE_INDEX = {0, 1, 2, 3, 4, 5, 6, 7};

    /**
     * Transposed groups of eight centroids (see {@link CentroidBlock}): per point, eight groups at
     * a time (the last few one by one) take one broadcast of each point component and eight
     * independent multiply-adds, so the FMA latency is hidden without any reduction across lanes;
     * then one pass of vector compares finds the smallest score and its index. Eight-float points
     * (PQ sub-vectors) take {@link #nearestOf8}.
     */
    static void nearest(
            float[] points, int pOff, int n, CentroidBlock centroids, int[] out, int outOff) {
        int dim = centroids.dim();
        int groups = centroids.groups();
        float[] t = centroids.transposed();
        float[] half = centroids.halfNorms();
        float[][] holder = NEAREST_SCRATCH.get();
        if (holder[0].length < Math.max(16, groups * 8)) {
            holder[0] = new float[Math.max(16, groups * 8)];
        }
        float[] scores = holder[0];
        if (dim == 8) {
            for (int i = 0; i < n; i++) {
                out[outOff + i] = nearestOf8(points, pOff + i * 8, t, half, groups, scores);
            }
            return;
        }
        for (int i = 0; i < n; i++) {
            int p = pOff + i * dim;
            int g = 0;
            for (; g + 8 <= groups; g += 8) {
                scoreEightGroups(points, p, dim, t, half, g, scores);
            }
            for (; g < groups; g++) {
                scoreOneGroup(points, p, dim, t, half, g, scores);
            }
            out[outOff + i] = argminScores(scores, groups);
        }
    }

    /**
     * Sub-vectors of eight floats (the default PQ split): the point's eight components are
     * broadcast once and stay in registers; each group's score is one chain of eight multiply-adds
     * in the contract's order (the first, onto zero, is a plain product) and is compared at once,
     * so no score is stored. Successive groups' chains are independent, so the processor overlaps
     * them.
     */
    private static int nearestOf8(
            float[] x, int p, float[] t, float[] half, int groups, float[] scores) {
        FloatVector x0 = FloatVector.broadcast(F8, x[p]);
        FloatVector x1 = FloatVector.broadcast(F8, x[p + 1]);
        FloatVector x2 = FloatVector.broadcast(F8, x[p + 2]);
        FloatVector x3 = FloatVector.broadcast(F8, x[p + 3]);
        FloatVector x4 = FloatVector.broadcast(F8, x[p + 4]);
        FloatVector x5 = FloatVector.broadcast(F8, x[p + 5]);
        FloatVector x6 = FloatVector.broadcast(F8, x[p + 6]);
        FloatVector x7 = FloatVector.broadcast(F8, x[p + 7]);
        FloatVector best = FloatVector.broadcast(F8, Float.POSITIVE_INFINITY);
        FloatVector bestIndex = FloatVector.zero(F8);
        FloatVector index = FloatVector.fromArray(F8, LANE_INDEX, 0);
        FloatVector eight = FloatVector.broadcast(F8, 8f);
        for (int g = 0; g < groups; g++) {
            int o = g * 64;
            FloatVector acc = x0.mul(FloatVector.fromArray(F8, t, o));
            acc = x1.fma(FloatVector.fromArray(F8, t, o + 8), acc);
            acc = x2.fma(FloatVector.fromArray(F8, t, o + 16), acc);
            acc = x3.fma(FloatVector.fromArray(F8, t, o + 24), acc);
            acc = x4.fma(FloatVector.fromArray(F8, t, o + 32), acc);
            acc = x5.fma(FloatVector.fromArray(F8, t, o + 40), acc);
            acc = x6.fma(FloatVector.fromArray(F8, t, o + 48), acc);
            acc = x7.fma(FloatVector.fromArray(F8, t, o + 56), acc);
            FloatVector sc = FloatVector.fromArray(F8, half, g * 8).sub(acc);
            var lower = sc.lt(best); // strict: within a lane the earlier group keeps a tie
            best = best.blend(sc, lower);
            bestIndex = bestIndex.blend(index, lower);
            index = index.add(eight);
        }
        best.intoArray(scores, 0);
        bestIndex.intoArray(scores, 8);
        return laneWinner(scores);
    }

    /** Eight independent chains: two FMAs can start per cycle and each takes about four. */
    private static void scoreEightGroups(
            float[] x, int p, int dim, float[] t, float[] half, int g, float[] scores) {
        int stride = dim * 8;
        int b0 = g * stride;
        FloatVector a0 = FloatVector.zero(F8);
        FloatVector a1 = FloatVector.zero(F8);
        FloatVector a2 = FloatVector.zero(F8);
        FloatVector a3 = FloatVector.zero(F8);
        FloatVector a4 = FloatVector.zero(F8);
        FloatVector a5 = FloatVector.zero(F8);
        FloatVector a6 = FloatVector.zero(F8);
        FloatVector a7 = FloatVector.zero(F8);
        for (int d = 0; d < dim; d++) {
            FloatVector xv = FloatVector.broadcast(F8, x[p + d]);
            int o = b0 + d * 8;
            a0 = xv.fma(FloatVector.fromArray(F8, t, o), a0);
            a1 = xv.fma(FloatVector.fromArray(F8, t, o + stride), a1);
            a2 = xv.fma(FloatVector.fromArray(F8, t, o + 2 * stride), a2);
            a3 = xv.fma(FloatVector.fromArray(F8, t, o + 3 * stride), a3);
            a4 = xv.fma(FloatVector.fromArray(F8, t, o + 4 * stride), a4);
            a5 = xv.fma(FloatVector.fromArray(F8, t, o + 5 * stride), a5);
            a6 = xv.fma(FloatVector.fromArray(F8, t, o + 6 * stride), a6);
            a7 = xv.fma(FloatVector.fromArray(F8, t, o + 7 * stride), a7);
        }
        int s = g * 8;
        FloatVector.fromArray(F8, half, s).sub(a0).intoArray(scores, s);
        FloatVector.fromArray(F8, half, s + 8).sub(a1).intoArray(scores, s + 8);
        FloatVector.fromArray(F8, half, s + 16).sub(a2).intoArray(scores, s + 16);
        FloatVector.fromArray(F8, half, s + 24).sub(a3).intoArray(scores, s + 24);
        FloatVector.fromArray(F8, half, s + 32).sub(a4).intoArray(scores, s + 32);
        FloatVector.fromArray(F8, half, s + 40).sub(a5).intoArray(scores, s + 40);
        FloatVector.fromArray(F8, half, s + 48).sub(a6).intoArray(scores, s + 48);
        FloatVector.fromArray(F8, half, s + 56).sub(a7).intoArray(scores, s + 56);
    }

    private static void scoreOneGroup(
            float[] x, int p, int dim, float[] t, float[] half, int g, float[] scores) {
        int b0 = g * dim * 8;
        FloatVector a = FloatVector.zero(F8);
        for (int d = 0; d < dim; d++) {
            a =
                    FloatVector.broadcast(F8, x[p + d])
                            .fma(FloatVector.fromArray(F8, t, b0 + d * 8), a);
        }
        FloatVector.fromArray(F8, half, g * 8).sub(a).intoArray(scores, g * 8);
    }

    /**
     * Lowest index of the smallest of {@code groups * 8} scores (NaN never wins; all NaN gives 0).
     */
    private static int argminScores(float[] scores, int groups) {
        FloatVector best = FloatVector.broadcast(F8, Float.POSITIVE_INFINITY);
        FloatVector bestIndex = FloatVector.zero(F8);
        FloatVector index = FloatVector.fromArray(F8, LANE_INDEX, 0);
        FloatVector eight = FloatVector.broadcast(F8, 8f);
        for (int g = 0; g < groups; g++) {
            FloatVector s = FloatVector.fromArray(F8, scores, g * 8);
            var lower = s.lt(best); // strict: within a lane the earlier group keeps a tie
            best = best.blend(s, lower);
            bestIndex = bestIndex.blend(index, lower);
            index = index.add(eight);
        }
        // The scores are consumed: their first 16 slots take the eight lane winners.
        best.intoArray(scores, 0);
        bestIndex.intoArray(scores, 8);
        return laneWinner(scores);
    }

    /**
     * The winner among eight lane winners (scores[0..8), their indices as floats in scores[8..16)).
     */
    private static int laneWinner(float[] scores) {
        int winner = 0;
        float winnerScore = Float.POSITIVE_INFINITY;
        for (int lane = 0; lane < 8; lane++) {
            float sc = scores[lane];
            int c = (int) scores[8 + lane];
            if (sc < winnerScore
                    || (sc == winnerScore && sc != Float.POSITIVE_INFINITY && c < winner)) {
                winnerScore = sc;
                winner = c;
            }
        }
        return winner;
    }
}
