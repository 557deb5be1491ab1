package dev.nepenthe.core.internal.vector;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The int8 kernels of {@link PanamaKernels}, apart from the float ones so each file keeps one
 * kind of arithmetic.
 *
 * <p>Each step loads a quarter of a preferred-width vector of bytes per operand and
 * sign-extends it to ints in the load ({@code vpmovsxbd}: 16 bytes to a 512-bit vector, 8 to a
 * 256-bit one), then multiplies and adds in int lanes. Any addition order gives the same int
 * (see {@link dev.nepenthe.core.vector.VectorKernels#dotInt8}), so {@code reduceLanes} may be used
 * here. Below 256-bit vectors (NEON) there is no byte species a quarter as wide, and the scalar
 * loop runs.
 *
 * <p>Why four rows at a time in {@link #dotBulk}: a graph search scores codes scattered over a
 * large array, so a score waits mostly on memory, not on arithmetic. One row per call leaves
 * about two rows' loads in flight (the reorder window holds about two calls); four rows in one
 * loop, sharing each load of the query, keep four rows' cache misses in flight. Measured at
 * d=384 over 20k random rows (CPU time on a shared AVX-512 machine): about 95 ns per row one at
 * a time, 60 four at a time, against 135 for the float dot product; from the L2 cache 45 against
 * 30. Widening to shorts first ({@code B2S}, 32 lanes per multiply, then two {@code S2I} halves)
 * measured the same. Every vector operation is written inline in the loops: moving the widening
 * into a helper method made C2 stop inlining now and then and box the vectors, ten times slower.
 */
final class PanamaInt8 {

    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    private static final boolean VECTORIZED = I.vectorBitSize() >= 256;
    private static final VectorSpecies<Byte> B =
            VectorSpecies.of(byte.class, VectorShape.forBitSize(Math.max(64, I.vectorBitSize() / 4)));
    private static final int STEP = I.length();

    private PanamaInt8() {}

    static int dot(byte[] a, int aOff, byte[] b, int bOff, int len) {
        int i = 0;
        int sum = 0;
        if (VECTORIZED && len >= 2 * STEP) {
            sum = dotBody(a, aOff, b, bOff, len);
            i = len & -(2 * STEP);
        }
        return sum + tail(a, aOff, b, bOff, i, len);
    }

    /** Blocks of two vectors up to {@code len & -(2 * STEP)}; two accumulators. */
    private static int dotBody(byte[] a, int aOff, byte[] b, int bOff, int len) {
        IntVector acc0 = IntVector.zero(I);
        IntVector acc1 = IntVector.zero(I);
        int end = len & -(2 * STEP);
        for (int i = 0; i < end; i += 2 * STEP) {
            IntVector x0 = (IntVector) ByteVector.fromArray(B, a, aOff + i).convertShape(VectorOperators.B2I, I, 0);
            IntVector y0 = (IntVector) ByteVector.fromArray(B, b, bOff + i).convertShape(VectorOperators.B2I, I, 0);
            IntVector x1 = (IntVector) ByteVector.fromArray(B, a, aOff + i + STEP).convertShape(VectorOperators.B2I, I, 0);
            IntVector y1 = (IntVector) ByteVector.fromArray(B, b, bOff + i + STEP).convertShape(VectorOperators.B2I, I, 0);
            acc0 = acc0.add(x0.mul(y0));
            acc1 = acc1.add(x1.mul(y1));
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    /** The products of {@code [from, len)}, one by one. */
    private static int tail(byte[] a, int aOff, byte[] b, int bOff, int from, int len) {
        int sum = 0;
        for (int i = from; i < len; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    static void dotBulk(byte[] a, int aOff, byte[] codes, int codesOff, int stride, int[] rows, int count, int len,
            int[] out) {
        if (!VECTORIZED || len < STEP) {
            for (int r = 0; r < count; r++) {
                out[r] = dot(a, aOff, codes, codesOff + rows[r] * stride, len);
            }
            return;
        }
        int vectorEnd = len & -STEP;
        for (int r = 0; r < count; r += 4) {
            // The last group of one to three rows repeats its last row: the loads are in cache
            // by then, and the slower one-row loop is not needed.
            int valid = Math.min(4, count - r);
            int o0 = codesOff + rows[r] * stride;
            int o1 = codesOff + rows[r + Math.min(1, valid - 1)] * stride;
            int o2 = codesOff + rows[r + Math.min(2, valid - 1)] * stride;
            int o3 = codesOff + rows[r + valid - 1] * stride;
            dotFour(a, aOff, codes, o0, o1, o2, o3, vectorEnd, out, r, valid);
            if (vectorEnd < len) {
                out[r] += tail(a, aOff, codes, o0, vectorEnd, len);
                if (valid > 1) {
                    out[r + 1] += tail(a, aOff, codes, o1, vectorEnd, len);
                }
                if (valid > 2) {
                    out[r + 2] += tail(a, aOff, codes, o2, vectorEnd, len);
                }
                if (valid > 3) {
                    out[r + 3] += tail(a, aOff, codes, o3, vectorEnd, len);
                }
            }
        }
    }

    /**
     * Four rows over {@code [0, end)}, {@code end} a multiple of {@code STEP}: one query load per
     * step, four accumulators; the first {@code valid} sums go to {@code out[r, r + valid)}.
     */
    private static void dotFour(byte[] a, int aOff, byte[] c, int o0, int o1, int o2, int o3, int end, int[] out, int r,
            int valid) {
        IntVector acc0 = IntVector.zero(I);
        IntVector acc1 = IntVector.zero(I);
        IntVector acc2 = IntVector.zero(I);
        IntVector acc3 = IntVector.zero(I);
        for (int i = 0; i < end; i += STEP) {
            IntVector x = (IntVector) ByteVector.fromArray(B, a, aOff + i).convertShape(VectorOperators.B2I, I, 0);
            acc0 = acc0.add(x.mul((IntVector) ByteVector.fromArray(B, c, o0 + i).convertShape(VectorOperators.B2I, I, 0)));
            acc1 = acc1.add(x.mul((IntVector) ByteVector.fromArray(B, c, o1 + i).convertShape(VectorOperators.B2I, I, 0)));
            acc2 = acc2.add(x.mul((IntVector) ByteVector.fromArray(B, c, o2 + i).convertShape(VectorOperators.B2I, I, 0)));
            acc3 = acc3.add(x.mul((IntVector) ByteVector.fromArray(B, c, o3 + i).convertShape(VectorOperators.B2I, I, 0)));
        }
        out[r] = acc0.reduceLanes(VectorOperators.ADD);
        if (valid > 1) {
            out[r + 1] = acc1.reduceLanes(VectorOperators.ADD);
        }
        if (valid > 2) {
            out[r + 2] = acc2.reduceLanes(VectorOperators.ADD);
        }
        if (valid > 3) {
            out[r + 3] = acc3.reduceLanes(VectorOperators.ADD);
        }
    }
}
