package dev.nepenthe.core.internal.vector;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * The two widths the float kernels run the order {@link dev.nepenthe.core.vector.VectorKernels}
 * defines at, the halvings every ordered sum ends with, and the cosine's one-pass kernel.
 *
 * <p>The kernels that come in several forms ({@code PanamaPairs}, {@code PanamaQuads}, {@code
 * PanamaInt8}) are generated at build time by store-core/src/codegen, which writes each body once
 * and emits it for a stored operand in an array and in a segment. The forms are separate methods
 * because C2 compiles them best that way: one body choosing array or segment at every load ran
 * batches and neighbour lists slower and boxed the segment lists' vectors (docs/BENCHMARKS.md, "One
 * body for arrays and segments"); a loader object boxes its vectors once these large bodies pass
 * C2's inlining node budget; and reading arrays through heap segments is a path C2 compiles less
 * well. The vector loops sit in methods of their own, apart from the scalar tails (Lucene's layout
 * too): the small wrapper inlines into callers and the loop compiles on its own.
 */
final class PanamaOrder {

    /**
     * The two widths the ordered sums run at: the order's 64 partial sums are four 16-lane
     * accumulators on 512-bit vectors, eight 8-lane ones on 256-bit vectors.
     */
    static final VectorSpecies<Float> F16 = FloatVector.SPECIES_512;

    static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;

    /**
     * Rotations: {@code v.add(v.rearrange(R16_h))} puts {@code v[j] + v[j+h]} in lane j (j < h).
     */
    static final VectorShuffle<Float> R16_8 = VectorShuffle.iota(F16, 8, 1, true);

    static final VectorShuffle<Float> R16_4 = VectorShuffle.iota(F16, 4, 1, true);
    static final VectorShuffle<Float> R16_2 = VectorShuffle.iota(F16, 2, 1, true);
    static final VectorShuffle<Float> R16_1 = VectorShuffle.iota(F16, 1, 1, true);

    static final VectorShuffle<Float> ROT8_4 = VectorShuffle.iota(F8, 4, 1, true);
    static final VectorShuffle<Float> ROT8_2 = VectorShuffle.iota(F8, 2, 1, true);
    static final VectorShuffle<Float> ROT8_1 = VectorShuffle.iota(F8, 1, 1, true);

    private PanamaOrder() {}

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
     * PanamaPairs#dot} (twelve accumulators: three sets of the order's four), so the result is bit
     * for bit the one three separate calls give, for about the loads of one. 16 lanes only.
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
        // The halvings written out, not calls: past C2's node budget a call boxes its vector.
        ab = ab.add(ab.rearrange(R16_8));
        aa = aa.add(aa.rearrange(R16_8));
        bb = bb.add(bb.rearrange(R16_8));
        ab = ab.add(ab.rearrange(R16_4));
        aa = aa.add(aa.rearrange(R16_4));
        bb = bb.add(bb.rearrange(R16_4));
        ab = ab.add(ab.rearrange(R16_2));
        aa = aa.add(aa.rearrange(R16_2));
        bb = bb.add(bb.rearrange(R16_2));
        float sab = ab.add(ab.rearrange(R16_1)).lane(0);
        float saa = aa.add(aa.rearrange(R16_1)).lane(0);
        float sbb = bb.add(bb.rearrange(R16_1)).lane(0);
        for (; i < len; i++) {
            sab = Math.fma(a[i], b[i], sab);
            saa = Math.fma(a[i], a[i], saa);
            sbb = Math.fma(b[i], b[i], sbb);
        }
        return CosineMath.fromParts(sab, saa, sbb);
    }
}
