package dev.nepenthe.core.internal.vector;

import static dev.nepenthe.core.internal.vector.PanamaPairs.F16;
import static dev.nepenthe.core.internal.vector.PanamaPairs.F8;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;

/**
 * The dot product and squared distance of two float arrays, in the order {@link
 * dev.nepenthe.core.vector.VectorKernels} defines. {@link PanamaPairs} has one body for a stored
 * vector in an array or in a segment; the array-to-array pair, the hottest call of an HNSW search
 * over vectors on the heap, keeps bodies of its own because the shared body's per-load choice cost
 * it measurably in JMH at the dimensions users run (docs/BENCHMARKS.md, "Vector kernels"). Both are
 * tested bit for bit against the scalar twin.
 */
final class PanamaArrayPairs {

    private static final VectorShuffle<Float> ROT8_4 = VectorShuffle.iota(F8, 4, 1, true);
    private static final VectorShuffle<Float> ROT8_2 = VectorShuffle.iota(F8, 2, 1, true);
    private static final VectorShuffle<Float> ROT8_1 = VectorShuffle.iota(F8, 1, 1, true);

    private PanamaArrayPairs() {}

    /** The dot product of {@code a} and {@code b}, 16 or 8 lanes wide. */
    static float dot(boolean wide, float[] a, int aOff, float[] b, int bOff, int len) {
        int i = len & ~15;
        float sum = 0f;
        if (i > 0) {
            sum = wide ? dotBody16(a, aOff, b, bOff, len) : dotBody8(a, aOff, b, bOff, len);
        }
        for (; i < len; i++) {
            sum = Math.fma(a[aOff + i], b[bOff + i], sum);
        }
        return sum;
    }

    /** Steps 1 to 4 of the order with 16-lane vectors: four accumulators, then one. */
    private static float dotBody16(float[] a, int aOff, float[] b, int bOff, int len) {
        FloatVector r = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F16), acc1 = FloatVector.zero(F16);
            FloatVector acc2 = FloatVector.zero(F16), acc3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                acc0 =
                        FloatVector.fromArray(F16, a, aOff + i)
                                .fma(FloatVector.fromArray(F16, b, bOff + i), acc0);
                acc1 =
                        FloatVector.fromArray(F16, a, aOff + i + 16)
                                .fma(FloatVector.fromArray(F16, b, bOff + i + 16), acc1);
                acc2 =
                        FloatVector.fromArray(F16, a, aOff + i + 32)
                                .fma(FloatVector.fromArray(F16, b, bOff + i + 32), acc2);
                acc3 =
                        FloatVector.fromArray(F16, a, aOff + i + 48)
                                .fma(FloatVector.fromArray(F16, b, bOff + i + 48), acc3);
            }
            r = acc0.add(acc2).add(acc1.add(acc3));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            r =
                    FloatVector.fromArray(F16, a, aOff + i)
                            .fma(FloatVector.fromArray(F16, b, bOff + i), r);
        }
        return PanamaPairs.halve16(r);
    }

    /**
     * Steps 1 to 4 of the order with 8-lane vectors: eight accumulators, then a low and a high
     * half.
     */
    private static float dotBody8(float[] a, int aOff, float[] b, int bOff, int len) {
        FloatVector lo = FloatVector.zero(F8), hi = FloatVector.zero(F8);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F8), acc1 = FloatVector.zero(F8);
            FloatVector acc2 = FloatVector.zero(F8), acc3 = FloatVector.zero(F8);
            FloatVector acc4 = FloatVector.zero(F8), acc5 = FloatVector.zero(F8);
            FloatVector acc6 = FloatVector.zero(F8), acc7 = FloatVector.zero(F8);
            for (; i < end64; i += 64) {
                int x = aOff + i, y = bOff + i;
                acc0 = FloatVector.fromArray(F8, a, x).fma(FloatVector.fromArray(F8, b, y), acc0);
                acc1 =
                        FloatVector.fromArray(F8, a, x + 8)
                                .fma(FloatVector.fromArray(F8, b, y + 8), acc1);
                acc2 =
                        FloatVector.fromArray(F8, a, x + 16)
                                .fma(FloatVector.fromArray(F8, b, y + 16), acc2);
                acc3 =
                        FloatVector.fromArray(F8, a, x + 24)
                                .fma(FloatVector.fromArray(F8, b, y + 24), acc3);
                acc4 =
                        FloatVector.fromArray(F8, a, x + 32)
                                .fma(FloatVector.fromArray(F8, b, y + 32), acc4);
                acc5 =
                        FloatVector.fromArray(F8, a, x + 40)
                                .fma(FloatVector.fromArray(F8, b, y + 40), acc5);
                acc6 =
                        FloatVector.fromArray(F8, a, x + 48)
                                .fma(FloatVector.fromArray(F8, b, y + 48), acc6);
                acc7 =
                        FloatVector.fromArray(F8, a, x + 56)
                                .fma(FloatVector.fromArray(F8, b, y + 56), acc7);
            }
            lo = acc0.add(acc4).add(acc2.add(acc6));
            hi = acc1.add(acc5).add(acc3.add(acc7));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            lo =
                    FloatVector.fromArray(F8, a, aOff + i)
                            .fma(FloatVector.fromArray(F8, b, bOff + i), lo);
            hi =
                    FloatVector.fromArray(F8, a, aOff + i + 8)
                            .fma(FloatVector.fromArray(F8, b, bOff + i + 8), hi);
        }
        // The halving written out, not a call: past C2's node budget a call would box the vector.
        FloatVector s = lo.add(hi);
        s = s.add(s.rearrange(ROT8_4));
        s = s.add(s.rearrange(ROT8_2));
        return s.add(s.rearrange(ROT8_1)).lane(0);
    }

    /** The squared distance of {@code a} and {@code b}, 16 or 8 lanes wide. */
    static float squareDistance(boolean wide, float[] a, int aOff, float[] b, int bOff, int len) {
        int i = len & ~15;
        float sum = 0f;
        if (i > 0) {
            sum = wide ? squareBody16(a, aOff, b, bOff, len) : squareBody8(a, aOff, b, bOff, len);
        }
        for (; i < len; i++) {
            float d = a[aOff + i] - b[bOff + i];
            sum = Math.fma(d, d, sum);
        }
        return sum;
    }

    private static float squareBody16(float[] a, int aOff, float[] b, int bOff, int len) {
        FloatVector r = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F16), acc1 = FloatVector.zero(F16);
            FloatVector acc2 = FloatVector.zero(F16), acc3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                FloatVector d0 =
                        FloatVector.fromArray(F16, a, aOff + i)
                                .sub(FloatVector.fromArray(F16, b, bOff + i));
                FloatVector d1 =
                        FloatVector.fromArray(F16, a, aOff + i + 16)
                                .sub(FloatVector.fromArray(F16, b, bOff + i + 16));
                FloatVector d2 =
                        FloatVector.fromArray(F16, a, aOff + i + 32)
                                .sub(FloatVector.fromArray(F16, b, bOff + i + 32));
                FloatVector d3 =
                        FloatVector.fromArray(F16, a, aOff + i + 48)
                                .sub(FloatVector.fromArray(F16, b, bOff + i + 48));
                acc0 = d0.fma(d0, acc0);
                acc1 = d1.fma(d1, acc1);
                acc2 = d2.fma(d2, acc2);
                acc3 = d3.fma(d3, acc3);
            }
            r = acc0.add(acc2).add(acc1.add(acc3));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector d =
                    FloatVector.fromArray(F16, a, aOff + i)
                            .sub(FloatVector.fromArray(F16, b, bOff + i));
            r = d.fma(d, r);
        }
        return PanamaPairs.halve16(r);
    }

    private static float squareBody8(float[] a, int aOff, float[] b, int bOff, int len) {
        FloatVector lo = FloatVector.zero(F8), hi = FloatVector.zero(F8);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F8), acc1 = FloatVector.zero(F8);
            FloatVector acc2 = FloatVector.zero(F8), acc3 = FloatVector.zero(F8);
            FloatVector acc4 = FloatVector.zero(F8), acc5 = FloatVector.zero(F8);
            FloatVector acc6 = FloatVector.zero(F8), acc7 = FloatVector.zero(F8);
            for (; i < end64; i += 64) {
                int x = aOff + i, y = bOff + i;
                FloatVector d0 =
                        FloatVector.fromArray(F8, a, x).sub(FloatVector.fromArray(F8, b, y));
                FloatVector d1 =
                        FloatVector.fromArray(F8, a, x + 8)
                                .sub(FloatVector.fromArray(F8, b, y + 8));
                FloatVector d2 =
                        FloatVector.fromArray(F8, a, x + 16)
                                .sub(FloatVector.fromArray(F8, b, y + 16));
                FloatVector d3 =
                        FloatVector.fromArray(F8, a, x + 24)
                                .sub(FloatVector.fromArray(F8, b, y + 24));
                FloatVector d4 =
                        FloatVector.fromArray(F8, a, x + 32)
                                .sub(FloatVector.fromArray(F8, b, y + 32));
                FloatVector d5 =
                        FloatVector.fromArray(F8, a, x + 40)
                                .sub(FloatVector.fromArray(F8, b, y + 40));
                FloatVector d6 =
                        FloatVector.fromArray(F8, a, x + 48)
                                .sub(FloatVector.fromArray(F8, b, y + 48));
                FloatVector d7 =
                        FloatVector.fromArray(F8, a, x + 56)
                                .sub(FloatVector.fromArray(F8, b, y + 56));
                acc0 = d0.fma(d0, acc0);
                acc1 = d1.fma(d1, acc1);
                acc2 = d2.fma(d2, acc2);
                acc3 = d3.fma(d3, acc3);
                acc4 = d4.fma(d4, acc4);
                acc5 = d5.fma(d5, acc5);
                acc6 = d6.fma(d6, acc6);
                acc7 = d7.fma(d7, acc7);
            }
            lo = acc0.add(acc4).add(acc2.add(acc6));
            hi = acc1.add(acc5).add(acc3.add(acc7));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector d0 =
                    FloatVector.fromArray(F8, a, aOff + i)
                            .sub(FloatVector.fromArray(F8, b, bOff + i));
            FloatVector d1 =
                    FloatVector.fromArray(F8, a, aOff + i + 8)
                            .sub(FloatVector.fromArray(F8, b, bOff + i + 8));
            lo = d0.fma(d0, lo);
            hi = d1.fma(d1, hi);
        }
        // The halving written out, not a call: past C2's node budget a call would box the vector.
        FloatVector s = lo.add(hi);
        s = s.add(s.rearrange(ROT8_4));
        s = s.add(s.rearrange(ROT8_2));
        return s.add(s.rearrange(ROT8_1)).lane(0);
    }
}
