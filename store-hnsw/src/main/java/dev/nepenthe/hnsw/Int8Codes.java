package dev.nepenthe.hnsw;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Per-vector int8 codes: what a quantized graph's walk scores (see {@link
 * HnswParams.Quantization#INT8}). A code depends on its own vector and nothing else: no codebook,
 * no centre, no statistic of other vectors, so no removed vector can be left in any code
 * (DESIGN.md, "The influence rule"), and the checker can recompute every code from its vector
 * alone.
 *
 * <h2>Encoding</h2>
 *
 * For a vector {@code x} (as the metric prepares it) with smallest and largest components {@code
 * lo} and {@code hi}: the centre {@code c = (lo + hi) / 2} and step {@code s = (hi - lo) / 254},
 * each rounded to float, and per dimension the level {@code k_i = round((x_i - c) / s)} in {@code
 * [-127, 127]} (to nearest, ties to even), so that {@code x_i ~ c + s * k_i} to within {@code s /
 * 2}. A constant vector has {@code s = 0} and every level 0 (it is then exact). Why this code:
 *
 * <ul>
 *   <li>Its own range, not a global one: no statistic over other vectors, so nothing to retrain and
 *       nothing to forget. The offset {@code c} absorbs a vector's shift (clustered data sits far
 *       from the origin), the step its spread.
 *   <li>Symmetric levels in [-127, 127] are signed bytes as they are, so the kernel multiplies two
 *       codes directly ({@link dev.nepenthe.core.vector.VectorKernels#dotInt8}); 255 levels keep
 *       the rounding error per component within {@code (hi - lo) / 508}.
 *   <li>No rotation: a seeded random rotation (IVF's OSQ codes) spreads an outlier dimension's
 *       range over all of them, which matters at 1 to 4 bits; at 8 bits the plain code's error is
 *       already far below the gap the exact re-rank has to close (HnswQuantizedTest measures the
 *       recall), and a rotation would cost {@code dim^2} per insert, per query and per code the
 *       checker recomputes.
 *   <li>No trained interval. Lucene's scalar quantizer takes its interval from quantiles over the
 *       data, a statistic a removed vector would stay in. OSQ's per-vector interval search (IVF's
 *       codes) is allowed by the influence rule but costs tens of microseconds per encoding, paid
 *       again on every query; at 8 bits min/max already rounds finely enough that the re-ranked
 *       recall matches float recall.
 *   <li>Not 4 bits (yet): the walk's own work (lists, visited set, heaps) is a large share of an
 *       int8 search, and halving the code bytes would shrink only the rest: the int8 kernel is
 *       already bound by arithmetic once its rows are in cache, nibbles add unpacking, and coarser
 *       scores need a deeper re-rank, each re-ranked vector a cold read of its floats. An estimate
 *       from profiles of the int8 search, not a measurement of a 4-bit kernel.
 * </ul>
 *
 * <h2>The estimator</h2>
 *
 * With a query coded the same way ({@code q_i ~ c_q + s_q * kq_i}), the dot product of the two
 * dequantized vectors expands to
 *
 * <pre>
 *   &lt;q^, x^&gt; = c_x * sum(q^) + c_q * (s_x * sum k) + (s_q * s_x) * &lt;kq, k&gt;
 * </pre>
 *
 * where {@code sum(q^) = dim * c_q + s_q * sum kq} is per query, {@code c_x}, {@code s_x} and
 * {@code s_x * sum k} are stored with the code, and {@code <kq, k>} is the one pass over the
 * dimensions, exact in int arithmetic. Dot and cosine (unit vectors) use it as the score; L2 scores
 * {@code -(|q|^2 + |x|^2 - 2 <q^, x^>)} with both squared norms exact (the code stores {@code
 * |x|^2} from the floats), so only the cross term is estimated. The float arithmetic around the
 * integer dot product is {@link #estimate}, one method whichever kernel ran, so a code score is the
 * same on every kernel and JIT tier.
 *
 * <h2>Layout of one code ({@link #stride()} bytes)</h2>
 *
 * Four little-endian floats, {@code c}, {@code s}, {@code s * sum k} and {@code |x|^2}, then {@code
 * dim} level bytes from {@link #LEVELS_AT}, then zero padding to a multiple of 4. Everything a
 * score needs is in one contiguous entry (400 bytes at d = 384, 7 cache lines against 24 for the
 * floats), and a freed slot's entry is all zero bytes. The corrections come first so that the
 * kernel's pass over the levels touches every line of the entry: behind the levels they could start
 * a line of their own, first read after the kernel, a miss that did not overlap the kernel's.
 *
 * <p>Immutable and thread-safe.
 */
final class Int8Codes {

    /** Bytes of corrections at the start of a code. */
    static final int CORRECTION_BYTES = 16;

    /** Where a code's levels start, from the code's start. */
    static final int LEVELS_AT = CORRECTION_BYTES;

    /** The largest level magnitude: levels are in {@code [-LEVELS, LEVELS]}. */
    static final int LEVELS = 127;

    /**
     * 1.5 * 2^23: {@code (t + ROUNDING) - ROUNDING} is {@code t} rounded to an integer (see {@link
     * #encode}).
     */
    private static final float ROUNDING = 12_582_912f;

    private static final VarHandle FLOATS =
            MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);

    private final int dim;
    private final int stride;

    Int8Codes(int dim) {
        if (dim <= 0) {
            throw new IllegalArgumentException("int8 codes: expected dimension > 0, got " + dim);
        }
        this.dim = dim;
        this.stride = Math.addExact(CORRECTION_BYTES, (dim + 3) & ~3);
    }

    int dimension() {
        return dim;
    }

    /** Bytes per code: {@link #CORRECTION_BYTES}, plus the levels padded to a multiple of 4. */
    int stride() {
        return stride;
    }

    /**
     * Writes the code of {@code v[off, off + dim)} to {@code out[outOff, outOff + stride())},
     * padding included. Components must be finite (the index checks every vector it stores).
     * Deterministic: the same vector gives the same bytes on every run, kernel and JIT tier. Cost:
     * two passes over the dimensions.
     */
    void encode(float[] v, int off, byte[] out, int outOff) {
        // 1. Range and exact squared norm, in four interleaved lanes (a fixed order: the same norm
        //    on every run) so that no chain of dependent operations runs the length of the vector.
        //    Math.min/max compile without branches; comparisons mispredict on every other
        // component.
        float lo0 = v[off], lo1 = lo0, lo2 = lo0, lo3 = lo0;
        float hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
        double n0 = 0, n1 = 0, n2 = 0, n3 = 0;
        int i = 0;
        for (; i + 3 < dim; i += 4) {
            float x0 = v[off + i], x1 = v[off + i + 1], x2 = v[off + i + 2], x3 = v[off + i + 3];
            lo0 = Math.min(lo0, x0);
            lo1 = Math.min(lo1, x1);
            lo2 = Math.min(lo2, x2);
            lo3 = Math.min(lo3, x3);
            hi0 = Math.max(hi0, x0);
            hi1 = Math.max(hi1, x1);
            hi2 = Math.max(hi2, x2);
            hi3 = Math.max(hi3, x3);
            n0 += (double) x0 * x0;
            n1 += (double) x1 * x1;
            n2 += (double) x2 * x2;
            n3 += (double) x3 * x3;
        }
        for (; i < dim; i++) {
            float x = v[off + i];
            lo0 = Math.min(lo0, x);
            hi0 = Math.max(hi0, x);
            n0 += (double) x * x;
        }
        float lo = Math.min(Math.min(lo0, lo1), Math.min(lo2, lo3));
        float hi = Math.max(Math.max(hi0, hi1), Math.max(hi2, hi3));
        double norm2 = (n0 + n1) + (n2 + n3);
        float centre = (float) (((double) lo + hi) / 2);
        float step = (float) (((double) hi - lo) / (2 * LEVELS));
        float inverse = 1f / step;
        int sum = 0;
        if (step > 0 && Float.isFinite(inverse)) {
            // 2. Levels, rounded to nearest (ties to even) by adding and subtracting 1.5 * 2^23,
            //    exact for |t| < 2^22 and plain float arithmetic, which C2 compiles tighter
            //    than Math.round; then their sum.
            for (int j = 0; j < dim; j++) {
                float t = (v[off + j] - centre) * inverse;
                float rounded = (t + ROUNDING) - ROUNDING;
                // The range maps to [-127, 127]; the clamp only catches float rounding at its ends.
                int level = rounded > LEVELS ? LEVELS : rounded < -LEVELS ? -LEVELS : (int) rounded;
                out[outOff + LEVELS_AT + j] = (byte) level;
                sum += level;
            }
        } else {
            // Every component equals the centre, or the range is too small for float's resolution.
            Arrays.fill(out, outOff + LEVELS_AT, outOff + LEVELS_AT + dim, (byte) 0);
        }
        Arrays.fill(out, outOff + LEVELS_AT + dim, outOff + stride, (byte) 0);
        FLOATS.set(out, outOff, centre);
        FLOATS.set(out, outOff + 4, step);
        FLOATS.set(out, outOff + 8, (float) ((double) step * sum));
        FLOATS.set(out, outOff + 12, (float) norm2);
    }

    /** The centre {@code c} of the code at {@code entry}. */
    float centre(byte[] codes, int entry) {
        return (float) FLOATS.get(codes, entry);
    }

    /** The step {@code s} of the code at {@code entry}. */
    float step(byte[] codes, int entry) {
        return (float) FLOATS.get(codes, entry + 4);
    }

    /** {@code s * sum k} of the code at {@code entry}. */
    float stepTimesLevelSum(byte[] codes, int entry) {
        return (float) FLOATS.get(codes, entry + 8);
    }

    /** The exact squared norm of the vector the code at {@code entry} was made from. */
    float squaredNorm(byte[] codes, int entry) {
        return (float) FLOATS.get(codes, entry + 12);
    }

    /** The four floats of a code off the heap: little-endian, as {@link #FLOATS} writes them. */
    private static final ValueLayout.OfFloat SEGMENT_FLOAT =
            ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** {@link #centre(byte[], int)} of a code in a segment. */
    float centre(MemorySegment codes, long entry) {
        return codes.get(SEGMENT_FLOAT, entry);
    }

    /** {@link #step(byte[], int)} of a code in a segment. */
    float step(MemorySegment codes, long entry) {
        return codes.get(SEGMENT_FLOAT, entry + 4);
    }

    /** {@link #stepTimesLevelSum(byte[], int)} of a code in a segment. */
    float stepTimesLevelSum(MemorySegment codes, long entry) {
        return codes.get(SEGMENT_FLOAT, entry + 8);
    }

    /** {@link #squaredNorm(byte[], int)} of a code in a segment. */
    float squaredNorm(MemorySegment codes, long entry) {
        return codes.get(SEGMENT_FLOAT, entry + 12);
    }

    /** {@code sum(x^)}, the sum of the dequantized components: {@code dim * c + s * sum k}. */
    float componentSum(byte[] codes, int entry) {
        return (float) ((double) dim * centre(codes, entry) + stepTimesLevelSum(codes, entry));
    }

    /**
     * The estimate of {@code <p^, x^>} from the integer dot product of the two codes' levels: the
     * one place its float arithmetic is written (see the class comment). {@code p} is the point
     * scored against (a query or a stored node), {@code x} the scored node.
     *
     * @param pCentre the point's {@code c}
     * @param pStep the point's {@code s}
     * @param pSum the point's {@link #componentSum}
     */
    static float estimate(
            float pCentre,
            float pStep,
            float pSum,
            float xCentre,
            float xStep,
            float xStepSum,
            int levelDot) {
        return xCentre * pSum + (pCentre * xStepSum + (pStep * xStep) * (float) levelDot);
    }
}
