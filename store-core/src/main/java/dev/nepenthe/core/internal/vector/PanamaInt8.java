package dev.nepenthe.core.internal.vector;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The int8 kernels of {@link PanamaKernels}, apart from the float ones so each file keeps one kind
 * of arithmetic.
 *
 * <p>Multiplying in 16-bit lanes, adding two products per lane. A byte product lies in [-16256,
 * 16384], so it is exact in a short ({@code vpmullw}, one cheap instruction for a preferred
 * vector's worth of shorts, where an int multiply {@code vpmulld} is two slow ones for half as many
 * lanes). The sum of two products lies in [-32512, 32768]: one value too wide for a short, so each
 * pair sum gets a bias of 32512 in the same short add, which maps it onto [0, 65280], exact as an
 * unsigned short; it is then zero-extended to ints and added, and the bias is taken back once at
 * the end, a constant fixed by the length. Everything wraps modulo 2^32 like the scalar twin, and
 * any addition order gives the same int (see {@link
 * dev.nepenthe.core.vector.VectorKernels#dotInt8}), so {@code reduceLanes} may be used. Measured at
 * d = 384 against the previous int path (sign-extend bytes to ints, multiply in ints): 24 against
 * 28 ns per row from cache, 87 against 100 over 117,000 random rows, CPU time on a shared AVX-512
 * machine. Below 256-bit vectors (NEON) the scalar loop runs.
 *
 * <p>Why four rows at a time in {@link #dotBulk}: a graph search scores codes scattered over a
 * large array, so a score waits mostly on memory, not on arithmetic. One row per call leaves about
 * two rows' loads in flight (the reorder window holds about two calls); four rows in one loop,
 * sharing each load of the query, keep four rows' cache misses in flight. Every vector operation is
 * written inline in the loops: moving the widening into a helper method made C2 stop inlining now
 * and then and box the vectors, ten times slower.
 *
 * <p>The segment forms (codes stored off the heap) are copies of the array loops that load the
 * second operand from the segment, for the reason {@link PanamaKernels} gives for its float copies:
 * reading arrays through heap segments would slow the array path.
 */
final class PanamaInt8 {

    private static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED;
    private static final boolean VECTORIZED = I.vectorBitSize() >= 256;

    /** Shorts filling a preferred vector, and the bytes that widen to them (half as wide). */
    private static final VectorSpecies<Short> S =
            VectorSpecies.of(short.class, VectorShape.forBitSize(I.vectorBitSize()));

    private static final VectorSpecies<Byte> B =
            VectorSpecies.of(
                    byte.class, VectorShape.forBitSize(Math.max(64, I.vectorBitSize() / 2)));
    private static final int HALF = S.length();

    /** Bytes per step: two products per short lane. */
    private static final int STEP = 2 * HALF;

    /** Added to every pair sum (see the class comment), taken back as {@link #bias}. */
    private static final short BIAS = 32_512;

    private PanamaInt8() {}

    static int dot(byte[] a, int aOff, byte[] b, int bOff, int len) {
        if (!VECTORIZED || len < STEP) {
            return tail(a, aOff, b, bOff, 0, len);
        }
        int end = len - len % STEP;
        IntVector acc = IntVector.zero(I);
        for (int i = 0; i < end; i += STEP) {
            ShortVector x0 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector x1 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i + HALF)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector y0 =
                    (ShortVector)
                            ByteVector.fromArray(B, b, bOff + i)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector y1 =
                    (ShortVector)
                            ByteVector.fromArray(B, b, bOff + i + HALF)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector p = x0.mul(y0).add(x1.mul(y1)).add(BIAS);
            acc =
                    acc.add(p.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
        }
        return acc.reduceLanes(VectorOperators.ADD) - bias(end) + tail(a, aOff, b, bOff, end, len);
    }

    /** The bias the vector loop adds over {@code [0, end)}: one per short lane per step. */
    private static int bias(int end) {
        return (end / STEP) * HALF * BIAS;
    }

    /** The products of {@code [from, len)}, one by one. */
    private static int tail(byte[] a, int aOff, byte[] b, int bOff, int from, int len) {
        int sum = 0;
        for (int i = from; i < len; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    static void dotBulk(
            byte[] a,
            int aOff,
            byte[] codes,
            int codesOff,
            int stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        if (!VECTORIZED || len < STEP) {
            for (int r = 0; r < count; r++) {
                out[r] = tail(a, aOff, codes, codesOff + rows[r] * stride, 0, len);
            }
            return;
        }
        int end = len - len % STEP;
        int bias = bias(end);
        for (int r = 0; r < count; r += 4) {
            // The last group of one to three rows repeats its last row: the loads are in cache
            // by then, and the slower one-row loop is not needed.
            int valid = Math.min(4, count - r);
            int o0 = codesOff + rows[r] * stride;
            int o1 = codesOff + rows[r + Math.min(1, valid - 1)] * stride;
            int o2 = codesOff + rows[r + Math.min(2, valid - 1)] * stride;
            int o3 = codesOff + rows[r + valid - 1] * stride;
            dotFour(a, aOff, codes, o0, o1, o2, o3, end, out, r, valid);
            out[r] += tail(a, aOff, codes, o0, end, len) - bias;
            if (valid > 1) {
                out[r + 1] += tail(a, aOff, codes, o1, end, len) - bias;
            }
            if (valid > 2) {
                out[r + 2] += tail(a, aOff, codes, o2, end, len) - bias;
            }
            if (valid > 3) {
                out[r + 3] += tail(a, aOff, codes, o3, end, len) - bias;
            }
        }
    }

    /**
     * Four rows over {@code [0, end)}, {@code end} a multiple of {@code STEP}: one query load per
     * step, four accumulators; the first {@code valid} biased sums go to {@code out[r, r + valid)}.
     */
    private static void dotFour(
            byte[] a,
            int aOff,
            byte[] c,
            int o0,
            int o1,
            int o2,
            int o3,
            int end,
            int[] out,
            int r,
            int valid) {
        IntVector acc0 = IntVector.zero(I);
        IntVector acc1 = IntVector.zero(I);
        IntVector acc2 = IntVector.zero(I);
        IntVector acc3 = IntVector.zero(I);
        for (int i = 0; i < end; i += STEP) {
            ShortVector x0 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector x1 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i + HALF)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector p0 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromArray(B, c, o0 + i)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromArray(B, c, o0 + i + HALF)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            ShortVector p1 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromArray(B, c, o1 + i)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromArray(B, c, o1 + i + HALF)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            ShortVector p2 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromArray(B, c, o2 + i)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromArray(B, c, o2 + i + HALF)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            ShortVector p3 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromArray(B, c, o3 + i)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromArray(B, c, o3 + i + HALF)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            acc0 =
                    acc0.add(p0.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p0.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
            acc1 =
                    acc1.add(p1.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p1.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
            acc2 =
                    acc2.add(p2.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p2.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
            acc3 =
                    acc3.add(p3.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p3.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
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

    // ---- the second operand in a segment (copies of the loops above) -------------------------

    private static final ByteOrder ORDER = ByteOrder.nativeOrder();

    static int dot(byte[] a, int aOff, MemorySegment b, long bOff, int len) {
        if (!VECTORIZED || len < STEP) {
            return tail(a, aOff, b, bOff, 0, len);
        }
        int end = len - len % STEP;
        IntVector acc = IntVector.zero(I);
        for (int i = 0; i < end; i += STEP) {
            ShortVector x0 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector x1 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i + HALF)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector y0 =
                    (ShortVector)
                            ByteVector.fromMemorySegment(B, b, bOff + i, ORDER)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector y1 =
                    (ShortVector)
                            ByteVector.fromMemorySegment(B, b, bOff + i + HALF, ORDER)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector p = x0.mul(y0).add(x1.mul(y1)).add(BIAS);
            acc =
                    acc.add(p.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
        }
        return acc.reduceLanes(VectorOperators.ADD) - bias(end) + tail(a, aOff, b, bOff, end, len);
    }

    private static int tail(byte[] a, int aOff, MemorySegment b, long bOff, int from, int len) {
        int sum = 0;
        for (int i = from; i < len; i++) {
            sum += a[aOff + i] * b.get(ValueLayout.JAVA_BYTE, bOff + i);
        }
        return sum;
    }

    static void dotBulk(
            byte[] a,
            int aOff,
            MemorySegment codes,
            long codesOff,
            long stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        if (!VECTORIZED || len < STEP) {
            for (int r = 0; r < count; r++) {
                out[r] = tail(a, aOff, codes, codesOff + rows[r] * stride, 0, len);
            }
            return;
        }
        int end = len - len % STEP;
        int bias = bias(end);
        for (int r = 0; r < count; r += 4) {
            int valid = Math.min(4, count - r);
            long o0 = codesOff + rows[r] * stride;
            long o1 = codesOff + rows[r + Math.min(1, valid - 1)] * stride;
            long o2 = codesOff + rows[r + Math.min(2, valid - 1)] * stride;
            long o3 = codesOff + rows[r + valid - 1] * stride;
            dotFour(a, aOff, codes, o0, o1, o2, o3, end, out, r, valid);
            out[r] += tail(a, aOff, codes, o0, end, len) - bias;
            if (valid > 1) {
                out[r + 1] += tail(a, aOff, codes, o1, end, len) - bias;
            }
            if (valid > 2) {
                out[r + 2] += tail(a, aOff, codes, o2, end, len) - bias;
            }
            if (valid > 3) {
                out[r + 3] += tail(a, aOff, codes, o3, end, len) - bias;
            }
        }
    }

    private static void dotFour(
            byte[] a,
            int aOff,
            MemorySegment c,
            long o0,
            long o1,
            long o2,
            long o3,
            int end,
            int[] out,
            int r,
            int valid) {
        IntVector acc0 = IntVector.zero(I);
        IntVector acc1 = IntVector.zero(I);
        IntVector acc2 = IntVector.zero(I);
        IntVector acc3 = IntVector.zero(I);
        for (int i = 0; i < end; i += STEP) {
            ShortVector x0 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector x1 =
                    (ShortVector)
                            ByteVector.fromArray(B, a, aOff + i + HALF)
                                    .convertShape(VectorOperators.B2S, S, 0);
            ShortVector p0 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromMemorySegment(B, c, o0 + i, ORDER)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromMemorySegment(
                                                                    B, c, o0 + i + HALF, ORDER)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            ShortVector p1 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromMemorySegment(B, c, o1 + i, ORDER)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromMemorySegment(
                                                                    B, c, o1 + i + HALF, ORDER)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            ShortVector p2 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromMemorySegment(B, c, o2 + i, ORDER)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromMemorySegment(
                                                                    B, c, o2 + i + HALF, ORDER)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            ShortVector p3 =
                    x0.mul(
                                    (ShortVector)
                                            ByteVector.fromMemorySegment(B, c, o3 + i, ORDER)
                                                    .convertShape(VectorOperators.B2S, S, 0))
                            .add(
                                    x1.mul(
                                            (ShortVector)
                                                    ByteVector.fromMemorySegment(
                                                                    B, c, o3 + i + HALF, ORDER)
                                                            .convertShape(
                                                                    VectorOperators.B2S, S, 0)))
                            .add(BIAS);
            acc0 =
                    acc0.add(p0.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p0.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
            acc1 =
                    acc1.add(p1.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p1.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
            acc2 =
                    acc2.add(p2.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p2.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
            acc3 =
                    acc3.add(p3.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 0))
                            .add(p3.convertShape(VectorOperators.ZERO_EXTEND_S2I, I, 1));
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
