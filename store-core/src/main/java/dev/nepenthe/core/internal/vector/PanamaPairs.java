package dev.nepenthe.core.internal.vector;

import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * One query against one stored vector in the order {@link VectorKernels} defines, at 16 lanes (four
 * accumulators) or 8 lanes (eight). Also the final halvings every ordered sum ends with, shared by
 * the batch and row kernels in {@link PanamaQuads}.
 *
 * <p>Each kernel has one body for both kinds of storage: the stored vector is an array {@code ba}
 * or a segment {@code bs} (the other is null), and each load picks between the two Vector API calls
 * in place. A loader object ({@code load(species, index)} on an array or a segment class) would
 * read better but measured worse: these bodies are large enough that C2 passes its inlining node
 * budget part-way through and from there inlines only the Vector API's own force-inlined methods,
 * so later loader calls stay calls and box every vector they return. The null test is
 * loop-invariant, and where a body only ever sees one kind of storage C2 drops the other branch.
 *
 * <p>The vector loops sit in methods of their own, apart from the scalar tails (Lucene's layout
 * too): the small wrapper inlines into callers and the loop compiles on its own.
 */
final class PanamaPairs {

    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    /**
     * The two widths the ordered sums run at: the order's 64 partial sums are four 16-lane
     * accumulators on 512-bit vectors, eight 8-lane ones on 256-bit vectors.
     */
    static final VectorSpecies<Float> F16 = FloatVector.SPECIES_512;

    static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;

    /**
     * Rotations: {@code v.add(v.rearrange(R16_h))} puts {@code v[j] + v[j+h]} in lane j (j < h).
     */
    private static final VectorShuffle<Float> R16_8 = VectorShuffle.iota(F16, 8, 1, true);

    private static final VectorShuffle<Float> R16_4 = VectorShuffle.iota(F16, 4, 1, true);
    private static final VectorShuffle<Float> R16_2 = VectorShuffle.iota(F16, 2, 1, true);
    private static final VectorShuffle<Float> R16_1 = VectorShuffle.iota(F16, 1, 1, true);

    private static final VectorShuffle<Float> ROT8_4 = VectorShuffle.iota(F8, 4, 1, true);
    private static final VectorShuffle<Float> ROT8_2 = VectorShuffle.iota(F8, 2, 1, true);
    private static final VectorShuffle<Float> ROT8_1 = VectorShuffle.iota(F8, 1, 1, true);

    private PanamaPairs() {}

    /** The dot product of {@code a} and the stored vector {@code b}, 16 or 8 lanes wide. */
    static float dot(
            boolean wide, float[] a, int aOff, float[] ba, MemorySegment bs, long bOff, int len) {
        int i = len & ~15;
        float sum = 0f;
        if (i > 0) {
            sum = wide ? dot16(a, aOff, ba, bs, bOff, len) : dot8(a, aOff, ba, bs, bOff, len);
        }
        for (; i < len; i++) {
            sum =
                    Math.fma(
                            a[aOff + i],
                            (ba != null
                                    ? ba[(int) bOff + i]
                                    : bs.getAtIndex(ValueLayout.JAVA_FLOAT, bOff + i)),
                            sum);
        }
        return sum;
    }

    /** The squared distance of {@code a} and the stored vector {@code b}, 16 or 8 lanes wide. */
    static float squareDistance(
            boolean wide, float[] a, int aOff, float[] ba, MemorySegment bs, long bOff, int len) {
        int i = len & ~15;
        float sum = 0f;
        if (i > 0) {
            sum = wide ? square16(a, aOff, ba, bs, bOff, len) : square8(a, aOff, ba, bs, bOff, len);
        }
        for (; i < len; i++) {
            float d =
                    a[aOff + i]
                            - (ba != null
                                    ? ba[(int) bOff + i]
                                    : bs.getAtIndex(ValueLayout.JAVA_FLOAT, bOff + i));
            sum = Math.fma(d, d, sum);
        }
        return sum;
    }

    /** Steps 1 to 4 of the order with 16-lane vectors: four accumulators, then one. */
    private static float dot16(
            float[] a, int aOff, float[] ba, MemorySegment bs, long bOff, int len) {
        FloatVector r = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F16), acc1 = FloatVector.zero(F16);
            FloatVector acc2 = FloatVector.zero(F16), acc3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                int x = aOff + i;
                acc0 =
                        FloatVector.fromArray(F16, a, x)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F16, ba, (int) bOff + i)
                                                : FloatVector.fromMemorySegment(
                                                        F16, bs, (bOff + i) * Float.BYTES, NATIVE)),
                                        acc0);
                acc1 =
                        FloatVector.fromArray(F16, a, x + 16)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(
                                                        F16, ba, (int) bOff + i + 16)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i + 16) * Float.BYTES,
                                                        NATIVE)),
                                        acc1);
                acc2 =
                        FloatVector.fromArray(F16, a, x + 32)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(
                                                        F16, ba, (int) bOff + i + 32)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i + 32) * Float.BYTES,
                                                        NATIVE)),
                                        acc2);
                acc3 =
                        FloatVector.fromArray(F16, a, x + 48)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(
                                                        F16, ba, (int) bOff + i + 48)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i + 48) * Float.BYTES,
                                                        NATIVE)),
                                        acc3);
            }
            r = acc0.add(acc2).add(acc1.add(acc3));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            r =
                    FloatVector.fromArray(F16, a, aOff + i)
                            .fma(
                                    (ba != null
                                            ? FloatVector.fromArray(F16, ba, (int) bOff + i)
                                            : FloatVector.fromMemorySegment(
                                                    F16, bs, (bOff + i) * Float.BYTES, NATIVE)),
                                    r);
        }
        return halve16(r);
    }

    /**
     * Steps 1 to 4 of the order with 8-lane vectors: eight accumulators, then a low and a high
     * half.
     */
    private static float dot8(
            float[] a, int aOff, float[] ba, MemorySegment bs, long bOff, int len) {
        FloatVector lo = FloatVector.zero(F8), hi = FloatVector.zero(F8);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F8), acc1 = FloatVector.zero(F8);
            FloatVector acc2 = FloatVector.zero(F8), acc3 = FloatVector.zero(F8);
            FloatVector acc4 = FloatVector.zero(F8), acc5 = FloatVector.zero(F8);
            FloatVector acc6 = FloatVector.zero(F8), acc7 = FloatVector.zero(F8);
            for (; i < end64; i += 64) {
                int x = aOff + i;
                acc0 =
                        FloatVector.fromArray(F8, a, x)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i)
                                                : FloatVector.fromMemorySegment(
                                                        F8, bs, (bOff + i) * Float.BYTES, NATIVE)),
                                        acc0);
                acc1 =
                        FloatVector.fromArray(F8, a, x + 8)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 8)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 8) * Float.BYTES,
                                                        NATIVE)),
                                        acc1);
                acc2 =
                        FloatVector.fromArray(F8, a, x + 16)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 16)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 16) * Float.BYTES,
                                                        NATIVE)),
                                        acc2);
                acc3 =
                        FloatVector.fromArray(F8, a, x + 24)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 24)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 24) * Float.BYTES,
                                                        NATIVE)),
                                        acc3);
                acc4 =
                        FloatVector.fromArray(F8, a, x + 32)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 32)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 32) * Float.BYTES,
                                                        NATIVE)),
                                        acc4);
                acc5 =
                        FloatVector.fromArray(F8, a, x + 40)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 40)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 40) * Float.BYTES,
                                                        NATIVE)),
                                        acc5);
                acc6 =
                        FloatVector.fromArray(F8, a, x + 48)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 48)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 48) * Float.BYTES,
                                                        NATIVE)),
                                        acc6);
                acc7 =
                        FloatVector.fromArray(F8, a, x + 56)
                                .fma(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 56)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 56) * Float.BYTES,
                                                        NATIVE)),
                                        acc7);
            }
            lo = acc0.add(acc4).add(acc2.add(acc6));
            hi = acc1.add(acc5).add(acc3.add(acc7));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            lo =
                    FloatVector.fromArray(F8, a, aOff + i)
                            .fma(
                                    (ba != null
                                            ? FloatVector.fromArray(F8, ba, (int) bOff + i)
                                            : FloatVector.fromMemorySegment(
                                                    F8, bs, (bOff + i) * Float.BYTES, NATIVE)),
                                    lo);
            hi =
                    FloatVector.fromArray(F8, a, aOff + i + 8)
                            .fma(
                                    (ba != null
                                            ? FloatVector.fromArray(F8, ba, (int) bOff + i + 8)
                                            : FloatVector.fromMemorySegment(
                                                    F8, bs, (bOff + i + 8) * Float.BYTES, NATIVE)),
                                    hi);
        }
        // The halving written out, not a call: past C2's node budget a call would box the vector.
        FloatVector s = lo.add(hi);
        s = s.add(s.rearrange(ROT8_4));
        s = s.add(s.rearrange(ROT8_2));
        return s.add(s.rearrange(ROT8_1)).lane(0);
    }

    private static float square16(
            float[] a, int aOff, float[] ba, MemorySegment bs, long bOff, int len) {
        FloatVector r = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F16), acc1 = FloatVector.zero(F16);
            FloatVector acc2 = FloatVector.zero(F16), acc3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                int x = aOff + i;
                FloatVector d0 =
                        FloatVector.fromArray(F16, a, x)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F16, ba, (int) bOff + i)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d1 =
                        FloatVector.fromArray(F16, a, x + 16)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(
                                                        F16, ba, (int) bOff + i + 16)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i + 16) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d2 =
                        FloatVector.fromArray(F16, a, x + 32)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(
                                                        F16, ba, (int) bOff + i + 32)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i + 32) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d3 =
                        FloatVector.fromArray(F16, a, x + 48)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(
                                                        F16, ba, (int) bOff + i + 48)
                                                : FloatVector.fromMemorySegment(
                                                        F16,
                                                        bs,
                                                        (bOff + i + 48) * Float.BYTES,
                                                        NATIVE)));
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
                            .sub(
                                    (ba != null
                                            ? FloatVector.fromArray(F16, ba, (int) bOff + i)
                                            : FloatVector.fromMemorySegment(
                                                    F16, bs, (bOff + i) * Float.BYTES, NATIVE)));
            r = d.fma(d, r);
        }
        return halve16(r);
    }

    private static float square8(
            float[] a, int aOff, float[] ba, MemorySegment bs, long bOff, int len) {
        FloatVector lo = FloatVector.zero(F8), hi = FloatVector.zero(F8);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F8), acc1 = FloatVector.zero(F8);
            FloatVector acc2 = FloatVector.zero(F8), acc3 = FloatVector.zero(F8);
            FloatVector acc4 = FloatVector.zero(F8), acc5 = FloatVector.zero(F8);
            FloatVector acc6 = FloatVector.zero(F8), acc7 = FloatVector.zero(F8);
            for (; i < end64; i += 64) {
                int x = aOff + i;
                FloatVector d0 =
                        FloatVector.fromArray(F8, a, x)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i)
                                                : FloatVector.fromMemorySegment(
                                                        F8, bs, (bOff + i) * Float.BYTES, NATIVE)));
                FloatVector d1 =
                        FloatVector.fromArray(F8, a, x + 8)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 8)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 8) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d2 =
                        FloatVector.fromArray(F8, a, x + 16)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 16)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 16) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d3 =
                        FloatVector.fromArray(F8, a, x + 24)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 24)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 24) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d4 =
                        FloatVector.fromArray(F8, a, x + 32)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 32)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 32) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d5 =
                        FloatVector.fromArray(F8, a, x + 40)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 40)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 40) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d6 =
                        FloatVector.fromArray(F8, a, x + 48)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 48)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 48) * Float.BYTES,
                                                        NATIVE)));
                FloatVector d7 =
                        FloatVector.fromArray(F8, a, x + 56)
                                .sub(
                                        (ba != null
                                                ? FloatVector.fromArray(F8, ba, (int) bOff + i + 56)
                                                : FloatVector.fromMemorySegment(
                                                        F8,
                                                        bs,
                                                        (bOff + i + 56) * Float.BYTES,
                                                        NATIVE)));
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
                            .sub(
                                    (ba != null
                                            ? FloatVector.fromArray(F8, ba, (int) bOff + i)
                                            : FloatVector.fromMemorySegment(
                                                    F8, bs, (bOff + i) * Float.BYTES, NATIVE)));
            FloatVector d1 =
                    FloatVector.fromArray(F8, a, aOff + i + 8)
                            .sub(
                                    (ba != null
                                            ? FloatVector.fromArray(F8, ba, (int) bOff + i + 8)
                                            : FloatVector.fromMemorySegment(
                                                    F8, bs, (bOff + i + 8) * Float.BYTES, NATIVE)));
            lo = d0.fma(d0, lo);
            hi = d1.fma(d1, hi);
        }
        // The halving written out, not a call: past C2's node budget a call would box the vector.
        FloatVector s = lo.add(hi);
        s = s.add(s.rearrange(ROT8_4));
        s = s.add(s.rearrange(ROT8_2));
        return s.add(s.rearrange(ROT8_1)).lane(0);
    }

    /** Step 4 on a 16-lane vector: halving rounds 8, 4, 2, 1. */
    static float halve16(FloatVector r) {
        r = r.add(r.rearrange(R16_8));
        r = r.add(r.rearrange(R16_4));
        r = r.add(r.rearrange(R16_2));
        r = r.add(r.rearrange(R16_1));
        return r.lane(0);
    }

    /** Halving rounds 4, 2, 1 on an 8-lane vector: also the PQ tables' fold. */
    static float halve8(FloatVector s) {
        s = s.add(s.rearrange(ROT8_4));
        s = s.add(s.rearrange(ROT8_2));
        s = s.add(s.rearrange(ROT8_1));
        return s.lane(0);
    }

    /**
     * The three dot products of a cosine in one pass over both vectors, each in the order of {@link
     * #dot} (twelve accumulators: three sets of the order's four), so the result is bit for bit the
     * one three separate calls give, for about the loads of one. 16 lanes only.
     */
    static float cosine16(float[] a, float[] b, int len) {
        FloatVector ab = FloatVector.zero(F16),
                aa = FloatVector.zero(F16),
                bb = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector ab0 = FloatVector.zero(F16),
                    ab1 = FloatVector.zero(F16),
                    ab2 = FloatVector.zero(F16),
                    ab3 = FloatVector.zero(F16);
            FloatVector aa0 = FloatVector.zero(F16),
                    aa1 = FloatVector.zero(F16),
                    aa2 = FloatVector.zero(F16),
                    aa3 = FloatVector.zero(F16);
            FloatVector bb0 = FloatVector.zero(F16),
                    bb1 = FloatVector.zero(F16),
                    bb2 = FloatVector.zero(F16),
                    bb3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                FloatVector x0 = FloatVector.fromArray(F16, a, i),
                        y0 = FloatVector.fromArray(F16, b, i);
                ab0 = x0.fma(y0, ab0);
                aa0 = x0.fma(x0, aa0);
                bb0 = y0.fma(y0, bb0);
                FloatVector x1 = FloatVector.fromArray(F16, a, i + 16),
                        y1 = FloatVector.fromArray(F16, b, i + 16);
                ab1 = x1.fma(y1, ab1);
                aa1 = x1.fma(x1, aa1);
                bb1 = y1.fma(y1, bb1);
                FloatVector x2 = FloatVector.fromArray(F16, a, i + 32),
                        y2 = FloatVector.fromArray(F16, b, i + 32);
                ab2 = x2.fma(y2, ab2);
                aa2 = x2.fma(x2, aa2);
                bb2 = y2.fma(y2, bb2);
                FloatVector x3 = FloatVector.fromArray(F16, a, i + 48),
                        y3 = FloatVector.fromArray(F16, b, i + 48);
                ab3 = x3.fma(y3, ab3);
                aa3 = x3.fma(x3, aa3);
                bb3 = y3.fma(y3, bb3);
            }
            ab = ab0.add(ab2).add(ab1.add(ab3));
            aa = aa0.add(aa2).add(aa1.add(aa3));
            bb = bb0.add(bb2).add(bb1.add(bb3));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector x = FloatVector.fromArray(F16, a, i), y = FloatVector.fromArray(F16, b, i);
            ab = x.fma(y, ab);
            aa = x.fma(x, aa);
            bb = y.fma(y, bb);
        }
        float sab = halve16(ab), saa = halve16(aa), sbb = halve16(bb);
        for (; i < len; i++) {
            sab = Math.fma(a[i], b[i], sab);
            saa = Math.fma(a[i], a[i], saa);
            sbb = Math.fma(b[i], b[i], sbb);
        }
        return CosineMath.fromParts(sab, saa, sbb);
    }
}
