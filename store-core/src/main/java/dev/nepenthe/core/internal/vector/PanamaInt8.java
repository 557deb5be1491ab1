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
 * 256-bit one), then multiplies and adds in int lanes. Two accumulators let the next loads start
 * while a multiply is in flight. Widening to shorts first and multiplying 32 lanes at once
 * ({@code B2S}, then two {@code S2I} halves per step) measured no faster on AVX-512 and needs an
 * extra shuffle per step. Any addition order gives the same int (see
 * {@link dev.nepenthe.core.vector.VectorKernels#dotInt8}), so {@code reduceLanes} may be used here.
 * Below 256-bit vectors (NEON) there is no byte species a quarter as wide, and the scalar twin runs.
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
        for (; i < len; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    /** Blocks of two vectors up to {@code len & -(2 * STEP)}. */
    private static int dotBody(byte[] a, int aOff, byte[] b, int bOff, int len) {
        IntVector acc0 = IntVector.zero(I);
        IntVector acc1 = IntVector.zero(I);
        int end = len & -(2 * STEP);
        for (int i = 0; i < end; i += 2 * STEP) {
            IntVector x0 = widen(a, aOff + i);
            IntVector y0 = widen(b, bOff + i);
            IntVector x1 = widen(a, aOff + i + STEP);
            IntVector y1 = widen(b, bOff + i + STEP);
            acc0 = acc0.add(x0.mul(y0));
            acc1 = acc1.add(x1.mul(y1));
        }
        return acc0.add(acc1).reduceLanes(VectorOperators.ADD);
    }

    private static IntVector widen(byte[] a, int off) {
        return (IntVector) ByteVector.fromArray(B, a, off).convertShape(VectorOperators.B2I, I, 0);
    }
}
