package dev.nepenthe.core.internal.vector;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Kernels on the incubating Vector API. Loaded only through {@link Kernels}, which first checks
 * that {@code jdk.incubator.vector} is readable.
 *
 * <p>Why the loops look the way they do (x86 with AVX2 or AVX-512 in mind):
 *
 * <ul>
 *   <li>Every sum follows the one order {@link VectorKernels} defines, so these kernels agree bit
 *       for bit with the scalar twin. That order's 64 partial sums are four 16-lane accumulators
 *       (AVX-512) or eight 8-lane ones (AVX2), and its final halving is a few fixed lane rotations:
 *       {@code reduceLanes(ADD)}, whose order the JIT may choose, is never used. Other lane counts
 *       (128-bit machines) take the scalar twin, which C2 vectorises itself.
 *   <li>A fused multiply-add has a latency of about four cycles while two can start every cycle, so
 *       a single accumulator leaves the FMA units idle most of the time; four or eight independent
 *       ones keep them busy.
 *   <li>Tails shorter than 16 floats are finished with scalar code, as the order says.
 * </ul>
 */
public final class PanamaKernels implements VectorKernels {

    /**
     * The JVM's preferred species: element-wise loops (exact at any width) and the choice of
     * default width.
     */
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private static final int LANES = F.length();

    /**
     * The two widths the ordered sums run at. The order's 64 partial sums are four 16-lane
     * accumulators on 512-bit vectors, eight 8-lane ones on 256-bit vectors; an instance picks one,
     * so a 512-bit machine can measure both in one process (see {@link #PanamaKernels(int)}).
     */
    private static final VectorSpecies<Float> F16 = FloatVector.SPECIES_512;

    /**
     * Rotations: {@code v.add(v.rearrange(R16_h))} puts {@code v[j] + v[j+h]} in lane j (j < h).
     */
    private static final VectorShuffle<Float> R16_8 = VectorShuffle.iota(F16, 8, 1, true);

    private static final VectorShuffle<Float> R16_4 = VectorShuffle.iota(F16, 4, 1, true);
    private static final VectorShuffle<Float> R16_2 = VectorShuffle.iota(F16, 2, 1, true);
    private static final VectorShuffle<Float> R16_1 = VectorShuffle.iota(F16, 1, 1, true);

    /*
     * The PQ table kernels work on exactly eight lanes (256 bits): the sub-vectors they see are
     * short (dsub of 1 to 16 is typical), and eight centroids per output vector keeps every
     * intermediate in a register on AVX2 and AVX-512 alike. Where 256-bit vectors are not
     * native (NEON's 128 bits) the per-centroid path is used instead.
     */
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final boolean TABLES_VECTORIZED = F.vectorBitSize() >= 256;

    /*
     * PAIR_LO / PAIR_HI pick the even / odd lanes of the concatenation (a, b); their sum is
     * [a0+a1, a2+a3, a4+a5, a6+a7, b0+b1, b2+b3, b4+b5, b6+b7]: the sums of adjacent lanes,
     * with a's half first. Applied log2(g) times to g vectors whose lanes hold groups of g
     * partial sums, it yields one vector of group totals in order (a horizontal add tree).
     */
    private static final VectorShuffle<Float> PAIR_LO =
            VectorShuffle.fromValues(F8, 0, 2, 4, 6, 8, 10, 12, 14);
    private static final VectorShuffle<Float> PAIR_HI =
            VectorShuffle.fromValues(F8, 1, 3, 5, 7, 9, 11, 13, 15);

    private static final VectorShuffle<Float> ROT8_4 = VectorShuffle.iota(F8, 4, 1, true);
    private static final VectorShuffle<Float> ROT8_2 = VectorShuffle.iota(F8, 2, 1, true);
    private static final VectorShuffle<Float> ROT8_1 = VectorShuffle.iota(F8, 1, 1, true);

    /** The twin, for widths this class does not vectorise and for single table entries. */
    private static final ScalarKernels SCALAR = new ScalarKernels();

    /** 512-bit sums (16 lanes) rather than 256-bit ones (8 lanes). */
    private final boolean wide;

    /** False where neither width is native (128-bit NEON): the ordered sums then run scalar. */
    private final boolean canonical;

    private final String name;

    /** The widest of the two widths this CPU runs natively (the JVM's preferred species). */
    public PanamaKernels() {
        int preferred = F.vectorBitSize();
        this.wide = preferred >= 512;
        this.canonical = preferred >= 256;
        this.name = "panama";
    }

    /**
     * Ordered sums at a chosen width, 256 or 512 bits, where the CPU runs that width natively: the
     * knob that lets a 512-bit machine measure both. Results are the same bit for bit at either
     * width (the order is the same); only the speed differs.
     *
     * @throws IllegalArgumentException if {@code vectorBits} is neither 256 nor 512, or wider than
     *     this CPU's vectors
     */
    public PanamaKernels(int vectorBits) {
        if (vectorBits != 256 && vectorBits != 512) {
            throw new IllegalArgumentException(
                    "vector width: expected 256 or 512 bits, got " + vectorBits);
        }
        if (vectorBits > F.vectorBitSize()) {
            throw new IllegalArgumentException(
                    "vector width: this CPU's widest float vector is "
                            + F.vectorBitSize()
                            + " bits (the JVM's preferred species), asked for "
                            + vectorBits);
        }
        this.wide = vectorBits == 512;
        this.canonical = true;
        this.name = "panama-" + vectorBits;
    }

    /** The width the ordered sums run at: 512, 256, or 0 where they run scalar. */
    public int vectorBits() {
        return !canonical ? 0 : wide ? 512 : 256;
    }

    @Override
    public String name() {
        return name;
    }

    /*
     * The vector loops live in their own methods, apart from the scalar tails (Lucene's layout
     * too): the small wrapper inlines into callers and the loop compiles on its own.
     */

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int len) {
        if (!canonical) {
            return SCALAR.dot(a, aOff, b, bOff, len);
        }
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
        return halve16(r);
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
        return halveF8(lo.add(hi));
    }

    @Override
    public float squareDistance(float[] a, int aOff, float[] b, int bOff, int len) {
        if (!canonical) {
            return SCALAR.squareDistance(a, aOff, b, bOff, len);
        }
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
        return halve16(r);
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
        return halveF8(lo.add(hi));
    }

    /** Step 4 on a 16-lane vector: halving rounds 8, 4, 2, 1. */
    private static float halve16(FloatVector r) {
        r = r.add(r.rearrange(R16_8));
        r = r.add(r.rearrange(R16_4));
        r = r.add(r.rearrange(R16_2));
        r = r.add(r.rearrange(R16_1));
        return r.lane(0);
    }

    /** Halving rounds 4, 2, 1 on an 8-lane vector: the PQ tables' fold. */
    private static float halveF8(FloatVector s) {
        s = s.add(s.rearrange(ROT8_4));
        s = s.add(s.rearrange(ROT8_2));
        s = s.add(s.rearrange(ROT8_1));
        return s.lane(0);
    }

    @Override
    public float cosine(float[] a, float[] b) {
        int len = a.length;
        if (canonical && wide && len >= 16) {
            return cosine16(a, b, len);
        }
        return CosineMath.fromParts(
                dot(a, 0, b, 0, len), dot(a, 0, a, 0, len), dot(b, 0, b, 0, b.length));
    }

    /**
     * The three dot products of a cosine in one pass over both vectors, each in the order of {@link
     * #dot} (twelve accumulators: three sets of the order's four), so the result is bit for bit the
     * one three separate calls give, for about the loads of one.
     */
    private static float cosine16(float[] a, float[] b, int len) {
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

    /*
     * Batches: on 16 lanes, dot products go four vectors per pass, each query load feeding four
     * vectors (sixteen accumulators, four sets of the order's four: AVX-512 has 32 registers),
     * and so do squared distances (a remainder of two or three goes two at a time); each result is bit for bit the single-pair score. On
     * 8 lanes the sets would not fit AVX2's 16 registers, so vectors go one at a time.
     */

    @Override
    public void dotBatch(
            float[] query,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out,
            int outOff) {
        int v = 0;
        if (wide && dim >= 64) {
            for (; v + 4 <= count; v += 4) {
                int o = blockOff + v * dim;
                dotQuad16(
                        query,
                        0,
                        block,
                        o,
                        o + dim,
                        o + 2 * dim,
                        o + 3 * dim,
                        dim,
                        out,
                        outOff + v,
                        4);
            }
        }
        for (; v < count; v++) {
            out[outOff + v] = dot(query, 0, block, blockOff + v * dim, dim);
        }
    }

    /** Four dot products in the order of {@link #dot}: each query load feeds four vectors' FMAs. */
    private static void dotQuad16(
            float[] q,
            int qo,
            float[] b,
            int o0,
            int o1,
            int o2,
            int o3,
            int len,
            float[] out,
            int at,
            int keep) {
        FloatVector a0 = FloatVector.zero(F16),
                a1 = FloatVector.zero(F16),
                a2 = FloatVector.zero(F16),
                a3 = FloatVector.zero(F16);
        FloatVector b0 = FloatVector.zero(F16),
                b1 = FloatVector.zero(F16),
                b2 = FloatVector.zero(F16),
                b3 = FloatVector.zero(F16);
        FloatVector c0 = FloatVector.zero(F16),
                c1 = FloatVector.zero(F16),
                c2 = FloatVector.zero(F16),
                c3 = FloatVector.zero(F16);
        FloatVector d0 = FloatVector.zero(F16),
                d1 = FloatVector.zero(F16),
                d2 = FloatVector.zero(F16),
                d3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i);
            a0 = q0.fma(FloatVector.fromArray(F16, b, o0 + i), a0);
            b0 = q0.fma(FloatVector.fromArray(F16, b, o1 + i), b0);
            c0 = q0.fma(FloatVector.fromArray(F16, b, o2 + i), c0);
            d0 = q0.fma(FloatVector.fromArray(F16, b, o3 + i), d0);
            FloatVector q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            a1 = q1.fma(FloatVector.fromArray(F16, b, o0 + i + 16), a1);
            b1 = q1.fma(FloatVector.fromArray(F16, b, o1 + i + 16), b1);
            c1 = q1.fma(FloatVector.fromArray(F16, b, o2 + i + 16), c1);
            d1 = q1.fma(FloatVector.fromArray(F16, b, o3 + i + 16), d1);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32);
            a2 = q2.fma(FloatVector.fromArray(F16, b, o0 + i + 32), a2);
            b2 = q2.fma(FloatVector.fromArray(F16, b, o1 + i + 32), b2);
            c2 = q2.fma(FloatVector.fromArray(F16, b, o2 + i + 32), c2);
            d2 = q2.fma(FloatVector.fromArray(F16, b, o3 + i + 32), d2);
            FloatVector q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            a3 = q3.fma(FloatVector.fromArray(F16, b, o0 + i + 48), a3);
            b3 = q3.fma(FloatVector.fromArray(F16, b, o1 + i + 48), b3);
            c3 = q3.fma(FloatVector.fromArray(F16, b, o2 + i + 48), c3);
            d3 = q3.fma(FloatVector.fromArray(F16, b, o3 + i + 48), d3);
        }
        FloatVector ra = a0.add(a2).add(a1.add(a3));
        FloatVector rb = b0.add(b2).add(b1.add(b3));
        FloatVector rc = c0.add(c2).add(c1.add(c3));
        FloatVector rd = d0.add(d2).add(d1.add(d3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            ra = qv.fma(FloatVector.fromArray(F16, b, o0 + i), ra);
            rb = qv.fma(FloatVector.fromArray(F16, b, o1 + i), rb);
            rc = qv.fma(FloatVector.fromArray(F16, b, o2 + i), rc);
            rd = qv.fma(FloatVector.fromArray(F16, b, o3 + i), rd);
        }
        float sa = halve16(ra), sb = halve16(rb), sc = halve16(rc), sd = halve16(rd);
        for (; i < len; i++) {
            float x = q[qo + i];
            sa = Math.fma(x, b[o0 + i], sa);
            sb = Math.fma(x, b[o1 + i], sb);
            sc = Math.fma(x, b[o2 + i], sc);
            sd = Math.fma(x, b[o3 + i], sd);
        }
        out[at] = sa;
        if (keep > 1) {
            out[at + 1] = sb;
        }
        if (keep > 2) {
            out[at + 2] = sc;
        }
        if (keep > 3) {
            out[at + 3] = sd;
        }
    }

    @Override
    public void squareDistanceBatch(
            float[] query,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out,
            int outOff) {
        int v = 0;
        if (wide && dim >= 64) {
            for (; v + 4 <= count; v += 4) {
                int o = blockOff + v * dim;
                squareQuad16(
                        query,
                        0,
                        block,
                        o,
                        o + dim,
                        o + 2 * dim,
                        o + 3 * dim,
                        dim,
                        out,
                        outOff + v,
                        4);
            }
            for (; v + 2 <= count; v += 2) {
                int o = blockOff + v * dim;
                squarePair16(query, 0, block, o, o + dim, dim, out, outOff + v);
            }
        }
        for (; v < count; v++) {
            out[outOff + v] = squareDistance(query, 0, block, blockOff + v * dim, dim);
        }
    }

    /**
     * Four squared distances in the order of {@link #squareDistance}, each query load feeding four.
     */
    private static void squareQuad16(
            float[] q,
            int qo,
            float[] b,
            int o0,
            int o1,
            int o2,
            int o3,
            int len,
            float[] out,
            int at,
            int keep) {
        FloatVector a0 = FloatVector.zero(F16),
                a1 = FloatVector.zero(F16),
                a2 = FloatVector.zero(F16),
                a3 = FloatVector.zero(F16);
        FloatVector b0 = FloatVector.zero(F16),
                b1 = FloatVector.zero(F16),
                b2 = FloatVector.zero(F16),
                b3 = FloatVector.zero(F16);
        FloatVector c0 = FloatVector.zero(F16),
                c1 = FloatVector.zero(F16),
                c2 = FloatVector.zero(F16),
                c3 = FloatVector.zero(F16);
        FloatVector d0 = FloatVector.zero(F16),
                d1 = FloatVector.zero(F16),
                d2 = FloatVector.zero(F16),
                d3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector t;
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i);
            t = q0.sub(FloatVector.fromArray(F16, b, o0 + i));
            a0 = t.fma(t, a0);
            t = q0.sub(FloatVector.fromArray(F16, b, o1 + i));
            b0 = t.fma(t, b0);
            t = q0.sub(FloatVector.fromArray(F16, b, o2 + i));
            c0 = t.fma(t, c0);
            t = q0.sub(FloatVector.fromArray(F16, b, o3 + i));
            d0 = t.fma(t, d0);
            FloatVector q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            t = q1.sub(FloatVector.fromArray(F16, b, o0 + i + 16));
            a1 = t.fma(t, a1);
            t = q1.sub(FloatVector.fromArray(F16, b, o1 + i + 16));
            b1 = t.fma(t, b1);
            t = q1.sub(FloatVector.fromArray(F16, b, o2 + i + 16));
            c1 = t.fma(t, c1);
            t = q1.sub(FloatVector.fromArray(F16, b, o3 + i + 16));
            d1 = t.fma(t, d1);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32);
            t = q2.sub(FloatVector.fromArray(F16, b, o0 + i + 32));
            a2 = t.fma(t, a2);
            t = q2.sub(FloatVector.fromArray(F16, b, o1 + i + 32));
            b2 = t.fma(t, b2);
            t = q2.sub(FloatVector.fromArray(F16, b, o2 + i + 32));
            c2 = t.fma(t, c2);
            t = q2.sub(FloatVector.fromArray(F16, b, o3 + i + 32));
            d2 = t.fma(t, d2);
            FloatVector q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            t = q3.sub(FloatVector.fromArray(F16, b, o0 + i + 48));
            a3 = t.fma(t, a3);
            t = q3.sub(FloatVector.fromArray(F16, b, o1 + i + 48));
            b3 = t.fma(t, b3);
            t = q3.sub(FloatVector.fromArray(F16, b, o2 + i + 48));
            c3 = t.fma(t, c3);
            t = q3.sub(FloatVector.fromArray(F16, b, o3 + i + 48));
            d3 = t.fma(t, d3);
        }
        FloatVector ra = a0.add(a2).add(a1.add(a3));
        FloatVector rb = b0.add(b2).add(b1.add(b3));
        FloatVector rc = c0.add(c2).add(c1.add(c3));
        FloatVector rd = d0.add(d2).add(d1.add(d3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            FloatVector t;
            t = qv.sub(FloatVector.fromArray(F16, b, o0 + i));
            ra = t.fma(t, ra);
            t = qv.sub(FloatVector.fromArray(F16, b, o1 + i));
            rb = t.fma(t, rb);
            t = qv.sub(FloatVector.fromArray(F16, b, o2 + i));
            rc = t.fma(t, rc);
            t = qv.sub(FloatVector.fromArray(F16, b, o3 + i));
            rd = t.fma(t, rd);
        }
        float sa = halve16(ra), sb = halve16(rb), sc = halve16(rc), sd = halve16(rd);
        for (; i < len; i++) {
            float x = q[qo + i];
            float da = x - b[o0 + i], db = x - b[o1 + i], dc = x - b[o2 + i], dd = x - b[o3 + i];
            sa = Math.fma(da, da, sa);
            sb = Math.fma(db, db, sb);
            sc = Math.fma(dc, dc, sc);
            sd = Math.fma(dd, dd, sd);
        }
        out[at] = sa;
        if (keep > 1) {
            out[at + 1] = sb;
        }
        if (keep > 2) {
            out[at + 2] = sc;
        }
        if (keep > 3) {
            out[at + 3] = sd;
        }
    }

    /** Two squared distances in the order of {@link #squareDistance}, sharing the query's loads. */
    private static void squarePair16(
            float[] q, int qo, float[] b, int o0, int o1, int len, float[] out, int at) {
        FloatVector x0 = FloatVector.zero(F16),
                x1 = FloatVector.zero(F16),
                x2 = FloatVector.zero(F16),
                x3 = FloatVector.zero(F16);
        FloatVector y0 = FloatVector.zero(F16),
                y1 = FloatVector.zero(F16),
                y2 = FloatVector.zero(F16),
                y3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i),
                    q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32),
                    q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            FloatVector d;
            d = q0.sub(FloatVector.fromArray(F16, b, o0 + i));
            x0 = d.fma(d, x0);
            d = q0.sub(FloatVector.fromArray(F16, b, o1 + i));
            y0 = d.fma(d, y0);
            d = q1.sub(FloatVector.fromArray(F16, b, o0 + i + 16));
            x1 = d.fma(d, x1);
            d = q1.sub(FloatVector.fromArray(F16, b, o1 + i + 16));
            y1 = d.fma(d, y1);
            d = q2.sub(FloatVector.fromArray(F16, b, o0 + i + 32));
            x2 = d.fma(d, x2);
            d = q2.sub(FloatVector.fromArray(F16, b, o1 + i + 32));
            y2 = d.fma(d, y2);
            d = q3.sub(FloatVector.fromArray(F16, b, o0 + i + 48));
            x3 = d.fma(d, x3);
            d = q3.sub(FloatVector.fromArray(F16, b, o1 + i + 48));
            y3 = d.fma(d, y3);
        }
        FloatVector rx = x0.add(x2).add(x1.add(x3));
        FloatVector ry = y0.add(y2).add(y1.add(y3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            FloatVector dx = qv.sub(FloatVector.fromArray(F16, b, o0 + i));
            FloatVector dy = qv.sub(FloatVector.fromArray(F16, b, o1 + i));
            rx = dx.fma(dx, rx);
            ry = dy.fma(dy, ry);
        }
        float sx = halve16(rx), sy = halve16(ry);
        for (; i < len; i++) {
            float dx = q[qo + i] - b[o0 + i], dy = q[qo + i] - b[o1 + i];
            sx = Math.fma(dx, dx, sx);
            sy = Math.fma(dy, dy, sy);
        }
        out[at] = sx;
        out[at + 1] = sy;
    }

    /*
     * Rows: a graph node's neighbours, scattered through the matrix. On 16 lanes they go four at
     * a time as the batches do: each load of the point feeds four rows, and the four rows' loads
     * are independent, so the CPU has four cache misses in flight instead of one. A remainder of
     * one to three rows runs as a four with its last row repeated and only the real results
     * kept: the repeats hit the cache, and the remainder still overlaps its misses. On 8 lanes
     * rows go one at a time, for the registers' sake (AVX2 has 16).
     */

    @Override
    public void dotRows(
            float[] a, int aOff, float[] vectors, int[] rows, int count, int dim, float[] out) {
        rows(false, a, aOff, vectors, rows, count, dim, out);
    }

    @Override
    public void squareDistanceRows(
            float[] a, int aOff, float[] vectors, int[] rows, int count, int dim, float[] out) {
        rows(true, a, aOff, vectors, rows, count, dim, out);
    }

    private void rows(
            boolean l2,
            float[] a,
            int aOff,
            float[] vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        if (!wide || dim < 64) {
            for (int v = 0; v < count; v++) {
                int o = rows[v] * dim;
                out[v] =
                        l2
                                ? squareDistance(a, aOff, vectors, o, dim)
                                : dot(a, aOff, vectors, o, dim);
            }
            return;
        }
        for (int v = 0; v < count; v += 4) {
            int left = Math.min(4, count - v);
            int o0 = rows[v] * dim;
            int o1 = left > 1 ? rows[v + 1] * dim : o0;
            int o2 = left > 2 ? rows[v + 2] * dim : o1;
            int o3 = left > 3 ? rows[v + 3] * dim : o2;
            if (l2) {
                squareQuad16(a, aOff, vectors, o0, o1, o2, o3, dim, out, v, left);
            } else {
                dotQuad16(a, aOff, vectors, o0, o1, o2, o3, dim, out, v, left);
            }
        }
    }

    // ---- the same scores over vectors off the heap (see VectorKernels): the loops above with
    // the stored operand loaded from a segment. A copy on purpose: a single loop over arrays and
    // segments alike would read arrays through heap segments, a path the JIT compiles less well.

    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    @Override
    public float dot(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        if (!canonical) {
            return SCALAR.dot(a, aOff, b, bOff, len);
        }
        int i = len & ~15;
        float sum = 0f;
        if (i > 0) {
            sum = wide ? dotBody16(a, aOff, b, bOff, len) : dotBody8(a, aOff, b, bOff, len);
        }
        for (; i < len; i++) {
            sum = Math.fma(a[aOff + i], b.getAtIndex(ValueLayout.JAVA_FLOAT, bOff + i), sum);
        }
        return sum;
    }

    @Override
    public float squareDistance(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        if (!canonical) {
            return SCALAR.squareDistance(a, aOff, b, bOff, len);
        }
        int i = len & ~15;
        float sum = 0f;
        if (i > 0) {
            sum = wide ? squareBody16(a, aOff, b, bOff, len) : squareBody8(a, aOff, b, bOff, len);
        }
        for (; i < len; i++) {
            float d = a[aOff + i] - b.getAtIndex(ValueLayout.JAVA_FLOAT, bOff + i);
            sum = Math.fma(d, d, sum);
        }
        return sum;
    }

    @Override
    public void dotRows(
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        rows(false, a, aOff, vectors, rows, count, dim, out);
    }

    @Override
    public void squareDistanceRows(
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        rows(true, a, aOff, vectors, rows, count, dim, out);
    }

    private void rows(
            boolean l2,
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        touchRows(vectors, rows, count, dim);
        if (!wide || dim < 64) {
            for (int v = 0; v < count; v++) {
                long o = (long) rows[v] * dim;
                out[v] =
                        l2
                                ? squareDistance(a, aOff, vectors, o, dim)
                                : dot(a, aOff, vectors, o, dim);
            }
            return;
        }
        for (int v = 0; v < count; v += 4) {
            int left = Math.min(4, count - v);
            long o0 = (long) rows[v] * dim;
            long o1 = left > 1 ? (long) rows[v + 1] * dim : o0;
            long o2 = left > 2 ? (long) rows[v + 2] * dim : o1;
            long o3 = left > 3 ? (long) rows[v + 3] * dim : o2;
            if (l2) {
                squareQuad16(a, aOff, vectors, o0, o1, o2, o3, dim, out, v, left);
            } else {
                dotQuad16(a, aOff, vectors, o0, o1, o2, o3, dim, out, v, left);
            }
        }
    }

    /**
     * Written only when a touch sum takes an impossible value: keeps the touches from being
     * dropped.
     */
    private static int touchSink;

    /**
     * Loads the first float of every row before any row is scored, so the rows' first cache misses
     * are in flight together. Measured on the 2-core AVX-512 machine: scattered rows scored from a
     * segment, memory-bound, ran 10 to 20% faster with it (the same loop from a heap array keeps
     * enough misses in flight on its own). Scores are unchanged: the values loaded are only summed
     * into a result that is never used.
     */
    private static void touchRows(MemorySegment vectors, int[] rows, int count, int dim) {
        float t = 0f;
        for (int v = 0; v < count; v++) {
            t += vectors.getAtIndex(ValueLayout.JAVA_FLOAT, (long) rows[v] * dim);
        }
        if (t == Float.MIN_VALUE * 3) {
            touchSink++;
        }
    }

    private static float dotBody16(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        FloatVector r = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F16), acc1 = FloatVector.zero(F16);
            FloatVector acc2 = FloatVector.zero(F16), acc3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                acc0 =
                        FloatVector.fromArray(F16, a, aOff + i)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i) * Float.BYTES, NATIVE),
                                        acc0);
                acc1 =
                        FloatVector.fromArray(F16, a, aOff + i + 16)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i + 16) * Float.BYTES, NATIVE),
                                        acc1);
                acc2 =
                        FloatVector.fromArray(F16, a, aOff + i + 32)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i + 32) * Float.BYTES, NATIVE),
                                        acc2);
                acc3 =
                        FloatVector.fromArray(F16, a, aOff + i + 48)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i + 48) * Float.BYTES, NATIVE),
                                        acc3);
            }
            r = acc0.add(acc2).add(acc1.add(acc3));
        }
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            r =
                    FloatVector.fromArray(F16, a, aOff + i)
                            .fma(
                                    FloatVector.fromMemorySegment(
                                            F16, b, (bOff + i) * Float.BYTES, NATIVE),
                                    r);
        }
        return halve16(r);
    }

    private static float dotBody8(float[] a, int aOff, MemorySegment b, long bOff, int len) {
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
                long y = bOff + i;
                acc0 =
                        FloatVector.fromArray(F8, a, x)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, y * Float.BYTES, NATIVE),
                                        acc0);
                acc1 =
                        FloatVector.fromArray(F8, a, x + 8)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 8) * Float.BYTES, NATIVE),
                                        acc1);
                acc2 =
                        FloatVector.fromArray(F8, a, x + 16)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 16) * Float.BYTES, NATIVE),
                                        acc2);
                acc3 =
                        FloatVector.fromArray(F8, a, x + 24)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 24) * Float.BYTES, NATIVE),
                                        acc3);
                acc4 =
                        FloatVector.fromArray(F8, a, x + 32)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 32) * Float.BYTES, NATIVE),
                                        acc4);
                acc5 =
                        FloatVector.fromArray(F8, a, x + 40)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 40) * Float.BYTES, NATIVE),
                                        acc5);
                acc6 =
                        FloatVector.fromArray(F8, a, x + 48)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 48) * Float.BYTES, NATIVE),
                                        acc6);
                acc7 =
                        FloatVector.fromArray(F8, a, x + 56)
                                .fma(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 56) * Float.BYTES, NATIVE),
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
                                    FloatVector.fromMemorySegment(
                                            F8, b, (bOff + i) * Float.BYTES, NATIVE),
                                    lo);
            hi =
                    FloatVector.fromArray(F8, a, aOff + i + 8)
                            .fma(
                                    FloatVector.fromMemorySegment(
                                            F8, b, (bOff + i + 8) * Float.BYTES, NATIVE),
                                    hi);
        }
        return halveF8(lo.add(hi));
    }

    private static float squareBody16(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        FloatVector r = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        if (end64 > 0) {
            FloatVector acc0 = FloatVector.zero(F16), acc1 = FloatVector.zero(F16);
            FloatVector acc2 = FloatVector.zero(F16), acc3 = FloatVector.zero(F16);
            for (; i < end64; i += 64) {
                FloatVector d0 =
                        FloatVector.fromArray(F16, a, aOff + i)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i) * Float.BYTES, NATIVE));
                FloatVector d1 =
                        FloatVector.fromArray(F16, a, aOff + i + 16)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i + 16) * Float.BYTES, NATIVE));
                FloatVector d2 =
                        FloatVector.fromArray(F16, a, aOff + i + 32)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i + 32) * Float.BYTES, NATIVE));
                FloatVector d3 =
                        FloatVector.fromArray(F16, a, aOff + i + 48)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F16, b, (bOff + i + 48) * Float.BYTES, NATIVE));
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
                                    FloatVector.fromMemorySegment(
                                            F16, b, (bOff + i) * Float.BYTES, NATIVE));
            r = d.fma(d, r);
        }
        return halve16(r);
    }

    private static float squareBody8(float[] a, int aOff, MemorySegment b, long bOff, int len) {
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
                long y = bOff + i;
                FloatVector d0 =
                        FloatVector.fromArray(F8, a, x)
                                .sub(FloatVector.fromMemorySegment(F8, b, y * Float.BYTES, NATIVE));
                FloatVector d1 =
                        FloatVector.fromArray(F8, a, x + 8)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 8) * Float.BYTES, NATIVE));
                FloatVector d2 =
                        FloatVector.fromArray(F8, a, x + 16)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 16) * Float.BYTES, NATIVE));
                FloatVector d3 =
                        FloatVector.fromArray(F8, a, x + 24)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 24) * Float.BYTES, NATIVE));
                FloatVector d4 =
                        FloatVector.fromArray(F8, a, x + 32)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 32) * Float.BYTES, NATIVE));
                FloatVector d5 =
                        FloatVector.fromArray(F8, a, x + 40)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 40) * Float.BYTES, NATIVE));
                FloatVector d6 =
                        FloatVector.fromArray(F8, a, x + 48)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 48) * Float.BYTES, NATIVE));
                FloatVector d7 =
                        FloatVector.fromArray(F8, a, x + 56)
                                .sub(
                                        FloatVector.fromMemorySegment(
                                                F8, b, (y + 56) * Float.BYTES, NATIVE));
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
                                    FloatVector.fromMemorySegment(
                                            F8, b, (bOff + i) * Float.BYTES, NATIVE));
            FloatVector d1 =
                    FloatVector.fromArray(F8, a, aOff + i + 8)
                            .sub(
                                    FloatVector.fromMemorySegment(
                                            F8, b, (bOff + i + 8) * Float.BYTES, NATIVE));
            lo = d0.fma(d0, lo);
            hi = d1.fma(d1, hi);
        }
        return halveF8(lo.add(hi));
    }

    private static void dotQuad16(
            float[] q,
            int qo,
            MemorySegment b,
            long o0,
            long o1,
            long o2,
            long o3,
            int len,
            float[] out,
            int at,
            int keep) {
        FloatVector a0 = FloatVector.zero(F16),
                a1 = FloatVector.zero(F16),
                a2 = FloatVector.zero(F16),
                a3 = FloatVector.zero(F16);
        FloatVector b0 = FloatVector.zero(F16),
                b1 = FloatVector.zero(F16),
                b2 = FloatVector.zero(F16),
                b3 = FloatVector.zero(F16);
        FloatVector c0 = FloatVector.zero(F16),
                c1 = FloatVector.zero(F16),
                c2 = FloatVector.zero(F16),
                c3 = FloatVector.zero(F16);
        FloatVector d0 = FloatVector.zero(F16),
                d1 = FloatVector.zero(F16),
                d2 = FloatVector.zero(F16),
                d3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i);
            a0 = q0.fma(FloatVector.fromMemorySegment(F16, b, (o0 + i) * Float.BYTES, NATIVE), a0);
            b0 = q0.fma(FloatVector.fromMemorySegment(F16, b, (o1 + i) * Float.BYTES, NATIVE), b0);
            c0 = q0.fma(FloatVector.fromMemorySegment(F16, b, (o2 + i) * Float.BYTES, NATIVE), c0);
            d0 = q0.fma(FloatVector.fromMemorySegment(F16, b, (o3 + i) * Float.BYTES, NATIVE), d0);
            FloatVector q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            a1 =
                    q1.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o0 + i + 16) * Float.BYTES, NATIVE),
                            a1);
            b1 =
                    q1.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o1 + i + 16) * Float.BYTES, NATIVE),
                            b1);
            c1 =
                    q1.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o2 + i + 16) * Float.BYTES, NATIVE),
                            c1);
            d1 =
                    q1.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o3 + i + 16) * Float.BYTES, NATIVE),
                            d1);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32);
            a2 =
                    q2.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o0 + i + 32) * Float.BYTES, NATIVE),
                            a2);
            b2 =
                    q2.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o1 + i + 32) * Float.BYTES, NATIVE),
                            b2);
            c2 =
                    q2.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o2 + i + 32) * Float.BYTES, NATIVE),
                            c2);
            d2 =
                    q2.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o3 + i + 32) * Float.BYTES, NATIVE),
                            d2);
            FloatVector q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            a3 =
                    q3.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o0 + i + 48) * Float.BYTES, NATIVE),
                            a3);
            b3 =
                    q3.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o1 + i + 48) * Float.BYTES, NATIVE),
                            b3);
            c3 =
                    q3.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o2 + i + 48) * Float.BYTES, NATIVE),
                            c3);
            d3 =
                    q3.fma(
                            FloatVector.fromMemorySegment(
                                    F16, b, (o3 + i + 48) * Float.BYTES, NATIVE),
                            d3);
        }
        FloatVector ra = a0.add(a2).add(a1.add(a3));
        FloatVector rb = b0.add(b2).add(b1.add(b3));
        FloatVector rc = c0.add(c2).add(c1.add(c3));
        FloatVector rd = d0.add(d2).add(d1.add(d3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            ra = qv.fma(FloatVector.fromMemorySegment(F16, b, (o0 + i) * Float.BYTES, NATIVE), ra);
            rb = qv.fma(FloatVector.fromMemorySegment(F16, b, (o1 + i) * Float.BYTES, NATIVE), rb);
            rc = qv.fma(FloatVector.fromMemorySegment(F16, b, (o2 + i) * Float.BYTES, NATIVE), rc);
            rd = qv.fma(FloatVector.fromMemorySegment(F16, b, (o3 + i) * Float.BYTES, NATIVE), rd);
        }
        float sa = halve16(ra), sb = halve16(rb), sc = halve16(rc), sd = halve16(rd);
        for (; i < len; i++) {
            float x = q[qo + i];
            sa = Math.fma(x, b.getAtIndex(ValueLayout.JAVA_FLOAT, o0 + i), sa);
            sb = Math.fma(x, b.getAtIndex(ValueLayout.JAVA_FLOAT, o1 + i), sb);
            sc = Math.fma(x, b.getAtIndex(ValueLayout.JAVA_FLOAT, o2 + i), sc);
            sd = Math.fma(x, b.getAtIndex(ValueLayout.JAVA_FLOAT, o3 + i), sd);
        }
        out[at] = sa;
        if (keep > 1) {
            out[at + 1] = sb;
        }
        if (keep > 2) {
            out[at + 2] = sc;
        }
        if (keep > 3) {
            out[at + 3] = sd;
        }
    }

    private static void squareQuad16(
            float[] q,
            int qo,
            MemorySegment b,
            long o0,
            long o1,
            long o2,
            long o3,
            int len,
            float[] out,
            int at,
            int keep) {
        FloatVector a0 = FloatVector.zero(F16),
                a1 = FloatVector.zero(F16),
                a2 = FloatVector.zero(F16),
                a3 = FloatVector.zero(F16);
        FloatVector b0 = FloatVector.zero(F16),
                b1 = FloatVector.zero(F16),
                b2 = FloatVector.zero(F16),
                b3 = FloatVector.zero(F16);
        FloatVector c0 = FloatVector.zero(F16),
                c1 = FloatVector.zero(F16),
                c2 = FloatVector.zero(F16),
                c3 = FloatVector.zero(F16);
        FloatVector d0 = FloatVector.zero(F16),
                d1 = FloatVector.zero(F16),
                d2 = FloatVector.zero(F16),
                d3 = FloatVector.zero(F16);
        int i = 0;
        int end64 = len & ~63;
        for (; i < end64; i += 64) {
            FloatVector t;
            FloatVector q0 = FloatVector.fromArray(F16, q, qo + i);
            t = q0.sub(FloatVector.fromMemorySegment(F16, b, (o0 + i) * Float.BYTES, NATIVE));
            a0 = t.fma(t, a0);
            t = q0.sub(FloatVector.fromMemorySegment(F16, b, (o1 + i) * Float.BYTES, NATIVE));
            b0 = t.fma(t, b0);
            t = q0.sub(FloatVector.fromMemorySegment(F16, b, (o2 + i) * Float.BYTES, NATIVE));
            c0 = t.fma(t, c0);
            t = q0.sub(FloatVector.fromMemorySegment(F16, b, (o3 + i) * Float.BYTES, NATIVE));
            d0 = t.fma(t, d0);
            FloatVector q1 = FloatVector.fromArray(F16, q, qo + i + 16);
            t = q1.sub(FloatVector.fromMemorySegment(F16, b, (o0 + i + 16) * Float.BYTES, NATIVE));
            a1 = t.fma(t, a1);
            t = q1.sub(FloatVector.fromMemorySegment(F16, b, (o1 + i + 16) * Float.BYTES, NATIVE));
            b1 = t.fma(t, b1);
            t = q1.sub(FloatVector.fromMemorySegment(F16, b, (o2 + i + 16) * Float.BYTES, NATIVE));
            c1 = t.fma(t, c1);
            t = q1.sub(FloatVector.fromMemorySegment(F16, b, (o3 + i + 16) * Float.BYTES, NATIVE));
            d1 = t.fma(t, d1);
            FloatVector q2 = FloatVector.fromArray(F16, q, qo + i + 32);
            t = q2.sub(FloatVector.fromMemorySegment(F16, b, (o0 + i + 32) * Float.BYTES, NATIVE));
            a2 = t.fma(t, a2);
            t = q2.sub(FloatVector.fromMemorySegment(F16, b, (o1 + i + 32) * Float.BYTES, NATIVE));
            b2 = t.fma(t, b2);
            t = q2.sub(FloatVector.fromMemorySegment(F16, b, (o2 + i + 32) * Float.BYTES, NATIVE));
            c2 = t.fma(t, c2);
            t = q2.sub(FloatVector.fromMemorySegment(F16, b, (o3 + i + 32) * Float.BYTES, NATIVE));
            d2 = t.fma(t, d2);
            FloatVector q3 = FloatVector.fromArray(F16, q, qo + i + 48);
            t = q3.sub(FloatVector.fromMemorySegment(F16, b, (o0 + i + 48) * Float.BYTES, NATIVE));
            a3 = t.fma(t, a3);
            t = q3.sub(FloatVector.fromMemorySegment(F16, b, (o1 + i + 48) * Float.BYTES, NATIVE));
            b3 = t.fma(t, b3);
            t = q3.sub(FloatVector.fromMemorySegment(F16, b, (o2 + i + 48) * Float.BYTES, NATIVE));
            c3 = t.fma(t, c3);
            t = q3.sub(FloatVector.fromMemorySegment(F16, b, (o3 + i + 48) * Float.BYTES, NATIVE));
            d3 = t.fma(t, d3);
        }
        FloatVector ra = a0.add(a2).add(a1.add(a3));
        FloatVector rb = b0.add(b2).add(b1.add(b3));
        FloatVector rc = c0.add(c2).add(c1.add(c3));
        FloatVector rd = d0.add(d2).add(d1.add(d3));
        int end16 = len & ~15;
        for (; i < end16; i += 16) {
            FloatVector qv = FloatVector.fromArray(F16, q, qo + i);
            FloatVector t;
            t = qv.sub(FloatVector.fromMemorySegment(F16, b, (o0 + i) * Float.BYTES, NATIVE));
            ra = t.fma(t, ra);
            t = qv.sub(FloatVector.fromMemorySegment(F16, b, (o1 + i) * Float.BYTES, NATIVE));
            rb = t.fma(t, rb);
            t = qv.sub(FloatVector.fromMemorySegment(F16, b, (o2 + i) * Float.BYTES, NATIVE));
            rc = t.fma(t, rc);
            t = qv.sub(FloatVector.fromMemorySegment(F16, b, (o3 + i) * Float.BYTES, NATIVE));
            rd = t.fma(t, rd);
        }
        float sa = halve16(ra), sb = halve16(rb), sc = halve16(rc), sd = halve16(rd);
        for (; i < len; i++) {
            float x = q[qo + i];
            float da = x - b.getAtIndex(ValueLayout.JAVA_FLOAT, o0 + i),
                    db = x - b.getAtIndex(ValueLayout.JAVA_FLOAT, o1 + i),
                    dc = x - b.getAtIndex(ValueLayout.JAVA_FLOAT, o2 + i),
                    dd = x - b.getAtIndex(ValueLayout.JAVA_FLOAT, o3 + i);
            sa = Math.fma(da, da, sa);
            sb = Math.fma(db, db, sb);
            sc = Math.fma(dc, dc, sc);
            sd = Math.fma(dd, dd, sd);
        }
        out[at] = sa;
        if (keep > 1) {
            out[at + 1] = sb;
        }
        if (keep > 2) {
            out[at + 2] = sc;
        }
        if (keep > 3) {
            out[at + 3] = sd;
        }
    }

    @Override
    public void subtract(
            float[] v, int vOff, float[] c, int cOff, float[] out, int outOff, int len) {
        int i = 0;
        int upper = F.loopBound(len);
        for (; i < upper; i += LANES) {
            FloatVector.fromArray(F, v, vOff + i)
                    .sub(FloatVector.fromArray(F, c, cOff + i))
                    .intoArray(out, outOff + i);
        }
        for (; i < len; i++) {
            out[outOff + i] = v[vOff + i] - c[cOff + i];
        }
    }

    @Override
    public float pqDistance(float[] table, int ksub, byte[] codes, int codeOff, int m) {
        // A gather per code byte costs more than it saves for the m <= 64 used in practice.
        return ScalarKernels.pqSum(table, ksub, codes, codeOff, m);
    }

    @Override
    public void pqDistanceBatch(
            float[] table,
            int ksub,
            byte[] codes,
            int codesOff,
            int count,
            int m,
            float[] out,
            int outOff) {
        ScalarKernels.pqSumBatch(table, ksub, codes, codesOff, count, m, out, outOff);
    }

    @Override
    public void pqDistanceTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        pqTable(query, codebooks, m, ksub, table, true);
    }

    @Override
    public void pqDotTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        pqTable(query, codebooks, m, ksub, table, false);
    }

    /**
     * Both PQ tables, for the sub-vector lengths IVF-PQ uses:
     *
     * <ol>
     *   <li>dsub 1, 2 or 4 (narrow): eight centroids are 8 * dsub consecutive floats, loaded as
     *       dsub whole vectors against the query sub-vector repeated across the lanes; squared
     *       differences (or products) of adjacent lanes are then added pairwise, log2(dsub) rounds,
     *       until each lane holds one centroid's total, and the eight totals are stored at once. No
     *       transpose, no gather, no per-centroid reduction.
     *   <li>dsub a multiple of 8 (wide): each centroid folds into one vector of eight partial sums,
     *       halved in the table order. (Feeding eight folded vectors through three pairwise rounds
     *       instead made C2 give up inlining and box every vector: 20x slower, measured.)
     *   <li>any other dsub, and the last {@code ksub % 8} centroids: one centroid at a time,
     *       through the scalar twin's table entry (the same order).
     * </ol>
     */
    private void pqTable(
            float[] query, float[] codebooks, int m, int ksub, float[] table, boolean l2) {
        int dsub = query.length / m;
        boolean grouped =
                TABLES_VECTORIZED && (dsub == 1 || dsub == 2 || dsub == 4 || dsub % 8 == 0);
        int blocks = grouped ? ksub & ~7 : 0;
        // The query sub-vector repeated over eight lanes (narrow case). Each loop sits in its
        // own small method so C2 inlines every Vector API call in it and keeps the vectors in
        // registers: one big method ran out of inlining budget and boxed them.
        float[] repeated = new float[8];
        for (int j = 0; j < m; j++) {
            int qOff = j * dsub;
            int cbOff = j * ksub * dsub;
            int tOff = j * ksub;
            if (blocks > 0) {
                if (dsub < 8) {
                    for (int k = 0; k < 8; k++) {
                        repeated[k] = query[qOff + k % dsub];
                    }
                    if (dsub == 1) {
                        narrow1(repeated, codebooks, cbOff, blocks, table, tOff, l2);
                    } else if (dsub == 2) {
                        narrow2(repeated, codebooks, cbOff, blocks, table, tOff, l2);
                    } else {
                        narrow4(repeated, codebooks, cbOff, blocks, table, tOff, l2);
                    }
                } else {
                    wide(query, qOff, codebooks, cbOff, dsub, blocks, table, tOff, l2);
                }
            }
            for (int c = blocks; c < ksub; c++) {
                int o = cbOff + c * dsub;
                table[tOff + c] = SCALAR.tableEntry(query, qOff, codebooks, o, dsub, l2);
            }
        }
    }

    /** dsub 1: eight centroids are eight consecutive floats. */
    private static void narrow1(
            float[] rep, float[] cb, int o, int blocks, float[] table, int tOff, boolean l2) {
        FloatVector q = FloatVector.fromArray(F8, rep, 0);
        for (int c = 0; c < blocks; c += 8) {
            term(q, cb, o + c, l2).intoArray(table, tOff + c);
        }
    }

    /** dsub 2: two vectors of four centroids each, one round of pair sums. */
    private static void narrow2(
            float[] rep, float[] cb, int o, int blocks, float[] table, int tOff, boolean l2) {
        FloatVector q = FloatVector.fromArray(F8, rep, 0);
        for (int c = 0; c < blocks; c += 8) {
            int b = o + c * 2;
            pairSums(term(q, cb, b, l2), term(q, cb, b + 8, l2)).intoArray(table, tOff + c);
        }
    }

    /** dsub 4: four vectors of two centroids each, two rounds of pair sums. */
    private static void narrow4(
            float[] rep, float[] cb, int o, int blocks, float[] table, int tOff, boolean l2) {
        FloatVector q = FloatVector.fromArray(F8, rep, 0);
        for (int c = 0; c < blocks; c += 8) {
            int b = o + c * 4;
            FloatVector p0 = pairSums(term(q, cb, b, l2), term(q, cb, b + 8, l2));
            FloatVector p1 = pairSums(term(q, cb, b + 16, l2), term(q, cb, b + 24, l2));
            pairSums(p0, p1).intoArray(table, tOff + c);
        }
    }

    /** dsub a multiple of 8: one folded vector per centroid, reduced across its lanes. */
    private static void wide(
            float[] query,
            int qOff,
            float[] cb,
            int o,
            int dsub,
            int blocks,
            float[] table,
            int tOff,
            boolean l2) {
        for (int c = 0; c < blocks; c++) {
            int co = o + c * dsub;
            FloatVector acc = term(FloatVector.fromArray(F8, query, qOff), cb, co, l2);
            for (int i = 8; i < dsub; i += 8) {
                acc = accumulate(FloatVector.fromArray(F8, query, qOff + i), cb, co + i, l2, acc);
            }
            table[tOff + c] = halveF8(acc);
        }
    }

    /**
     * Squared difference (or product) of {@code q} and eight floats of {@code cb} from {@code o}.
     */
    private static FloatVector term(FloatVector q, float[] cb, int o, boolean l2) {
        FloatVector c = FloatVector.fromArray(F8, cb, o);
        if (l2) {
            FloatVector d = q.sub(c);
            return d.mul(d);
        }
        return q.mul(c);
    }

    private static FloatVector accumulate(
            FloatVector q, float[] cb, int o, boolean l2, FloatVector acc) {
        FloatVector c = FloatVector.fromArray(F8, cb, o);
        if (l2) {
            FloatVector d = q.sub(c);
            return d.fma(d, acc);
        }
        return q.fma(c, acc);
    }

    /** Sums of adjacent lanes: {@code [a0+a1, a2+a3, a4+a5, a6+a7, b0+b1, ..., b6+b7]}. */
    private static FloatVector pairSums(FloatVector a, FloatVector b) {
        return a.rearrange(PAIR_LO, b).add(a.rearrange(PAIR_HI, b));
    }

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
    @Override
    public void nearest(
            float[] points, int pOff, int n, CentroidBlock centroids, int[] out, int outOff) {
        if (!TABLES_VECTORIZED) {
            SCALAR.nearest(points, pOff, n, centroids, out, outOff);
            return;
        }
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

    @Override
    public int dotInt8(byte[] a, int aOff, byte[] b, int bOff, int len) {
        return PanamaInt8.dot(a, aOff, b, bOff, len);
    }

    @Override
    public void dotInt8Bulk(
            byte[] a,
            int aOff,
            byte[] codes,
            int codesOff,
            int stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        PanamaInt8.dotBulk(a, aOff, codes, codesOff, stride, rows, count, len, out);
    }

    @Override
    public int dotInt8(byte[] a, int aOff, MemorySegment b, long bOff, int len) {
        return PanamaInt8.dot(a, aOff, b, bOff, len);
    }

    @Override
    public void dotInt8Bulk(
            byte[] a,
            int aOff,
            MemorySegment codes,
            long codesOff,
            long stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        PanamaInt8.dotBulk(a, aOff, codes, codesOff, stride, rows, count, len, out);
    }
}
