package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.util.quantization.OptimizedScalarQuantizer;

/**
 * Per-vector scalar codes relative to a list's centroid, with no trained codebook: IVF's second
 * code type beside PQ. A vector's code depends on the vector, the centroid it is encoded against
 * and the seed of a {@link RandomRotation}, nothing else; so when the centroid is the mean of the
 * list's current members, no removed vector shapes any code (DESIGN.md, "The influence rule").
 *
 * <h2>Encoding</h2>
 *
 * For a vector {@code x} in a list whose centre is {@code c} (both as the metric prepares them):
 *
 * <ol>
 *   <li>rotate: {@code r = Rx - Rc} ({@code Rc} is computed once per centre, see {@link Centre});
 *   <li>quantize {@code r} with Lucene's {@link OptimizedScalarQuantizer} at {@code bits} bits: an
 *       interval {@code [a, a + L*step]} chosen for this vector ({@code L = 2^bits - 1}) and levels
 *       {@code k_i} in {@code [0, L]}, so that {@code r_i ~ a + step * k_i};
 *   <li>measure how much of {@code r} the dequantized vector {@code r^ = a + step*k} keeps along
 *       {@code r} itself: {@code alpha = <r^, r> / |r|^2};
 *   <li>store the levels and four corrections: {@code a/alpha}, {@code step/alpha}, an exact term
 *       {@code E} ({@code |r|^2} for L2 and cosine, {@code <c, x - c>} for dot) and the level sum
 *       {@code sum k_i}.
 * </ol>
 *
 * <h2>The estimator</h2>
 *
 * With the query {@code q} rotated once per search and {@code s = Rq - Rc} its residual to a probed
 * list's centre, every metric needs {@code <q - c, x - c> = <s, r>} (the rotation keeps inner
 * products):
 *
 * <ul>
 *   <li>L2 and cosine (unit vectors, ranked by squared distance): {@code |q - x|^2 = |s|^2 + |r|^2
 *       - 2 <s, r>}, with {@code |s|^2} exact per list and {@code |r|^2 = E} exact per vector;
 *   <li>dot: {@code <q, x> = <q, c> + <c, x - c> + <s, r>}, with {@code <q, c>} exact per list and
 *       {@code <c, x - c> = E} exact per vector.
 * </ul>
 *
 * Only {@code <s, r>} is estimated. Write {@code r^ = alpha r + e} with {@code e} orthogonal to
 * {@code r}; then {@code <s, r^> / alpha = <s, r> + <s, e> / alpha}. The rotation is random and
 * independent of the data, so the error {@code e} has no preferred direction relative to {@code s},
 * and {@code <s, e>} averages to zero: dividing by {@code alpha} removes the bias of the plain
 * dequantized product, which shrinks every estimate by {@code alpha} (RaBitQ's argument, applied to
 * OSQ's grid; OSQ's anisotropic loss keeps {@code alpha} near 1 and {@code |e|} small). The
 * measured slopes with and without the division are in docs/BENCHMARKS.md.
 *
 * <p>The query side is quantized too, once per probed list, so that the scan is integer arithmetic:
 * {@code s^ = a_q + step_q * k_q} on a uniform grid of {@code queryBits} bits over {@code [min s_i,
 * max s_i]}, rounded to nearest, and divided by its own {@code alpha_q = <s^, s> / |s|^2} for the
 * same reason as the code: the part of the query's rounding error that lies along {@code s} would
 * otherwise enter every estimate in proportion to {@code <s, r>}, largest for the nearest
 * neighbours. Not OSQ on this side: it runs per probed list, where OSQ's interval search costs many
 * times the plain grid, and it changed neither the error nor recall measurably (figures in
 * docs/BENCHMARKS.md). Expanding {@code <s^, r^> / (alpha * alpha_q)}, with {@code a_q} and {@code
 * step_q} already divided by {@code alpha_q}:
 *
 * <pre>
 *   est(s, r) = (a/alpha) * (d*a_q + step_q*sum k_q) + (step/alpha) * (a_q*sum k + step_q * &lt;k_q, k&gt;)
 * </pre>
 *
 * where the first bracket and {@code a_q}, {@code step_q} are per list, {@code a/alpha}, {@code
 * step/alpha} and {@code sum k} are stored per vector, and the only per-vector work over the
 * dimensions is the integer {@code <k_q, k>}. Exact cases: a vector equal to its centre ({@code r =
 * 0}) stores zero corrections, and a query equal to the centre ({@code s = 0}) quantizes to zero,
 * so either way the estimate of {@code <s, r>} is exactly 0 and the metric value is exact up to
 * float rounding.
 *
 * <h2>Layout of one vector's entry ({@link #bytesPerVector()} bytes)</h2>
 *
 * <ol>
 *   <li>{@code bits} bit planes of {@code W = ceil(dim / 64)} little-endian longs each: bit {@code
 *       j} of word {@code w} of plane {@code p} is bit {@code p} of dimension {@code 64w + j}'s
 *       level (plane 0 the least significant); padding dimensions are zero;
 *   <li>16 bytes of corrections, little-endian: float {@code a/alpha}, float {@code step/alpha},
 *       float {@code E}, int {@code sum k}.
 * </ol>
 *
 * Every entry has the same size and holds everything its scoring needs, so a list's entries stored
 * back to back (as {@link InvertedList} holds PQ codes, with {@code m = bytesPerVector()}) are
 * scanned in one pass, and swap-remove plus zeroing of freed entries work unchanged. {@code <k_q,
 * k>} is then {@code sum over planes p, t and words w of popcount(plane_p[w] & queryPlane_t[w]) <<
 * (p + t)}.
 *
 * <h2>Hot loop</h2>
 *
 * Plain Java, no Vector API (so no kernel twin is needed): {@link Long#bitCount} (an intrinsic, one
 * POPCNT instruction) over longs read from the code bytes through a byte-array view, with the loop
 * unrolled for 4-bit query halves ({@link ScalarQueryScorer}). A scan costs {@code bits * queryBits
 * * ceil(dim / 64)} AND+POPCNT pairs per vector, so wider codes buy memory and accuracy rather than
 * speed against an exact SIMD scan of the floats, until a Vector API kernel is written for them:
 * docs/BENCHMARKS.md has the measured scan, query-preparation and encoding times.
 *
 * <p>Instances are immutable and thread-safe; {@link ScalarEncoder} and {@link ScalarQueryScorer}
 * hold scratch space and are for one thread at a time.
 */
final class ScalarCodes {
    /** Bytes of per-vector corrections at the end of each entry. */
    static final int CORRECTION_BYTES = 16;

    /**
     * The code width an index should default to: 4 bits, the narrowest at which an exact re-rank of
     * a few dozen candidates found the true top 10 on clustered data for every metric, at a
     * fraction of the floats' memory. 1 bit (the fastest scan) suits a deeper re-rank; 7 bits suits
     * using the estimates without a re-rank. The recall behind this choice is in
     * docs/BENCHMARKS.md.
     */
    static final int DEFAULT_BITS = 4;

    static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle FLOATS =
            MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle INTS =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private final int dim;
    private final Metric metric;
    private final int bits;
    private final int queryBits;
    private final int words;
    private final int planeBytes;
    private final int bytesPerVector;
    private final RandomRotation rotation;
    // EUCLIDEAN only sets which correction OSQ reports (we compute ours ourselves) and keeps its
    // unit-vector assertions, meant for cosine centroids, off: a list mean is not unit length.
    private final OptimizedScalarQuantizer quantizer =
            new OptimizedScalarQuantizer(VectorSimilarityFunction.EUCLIDEAN);

    /**
     * @param dim the vectors' dimension, above 0
     * @param metric the metric the vectors were prepared for (cosine vectors must be unit length)
     * @param bits bits per dimension of a stored code, 1 to 8: the code takes {@code bits *
     *     ceil(dim/64) * 8 + 16} bytes, a scan costs {@code bits * queryBits * ceil(dim/64)}
     *     popcounts per vector, and the estimate's error roughly halves with each added bit
     * @param queryBits bits per dimension of the query's per-list residual, 1 to 8 (see {@link
     *     #defaultQueryBits}): scan cost grows linearly with it; below {@code bits} the query's own
     *     rounding dominates the error
     * @param seed picks the rotation (the index's seed: same seed, same codes)
     */
    ScalarCodes(int dim, Metric metric, int bits, int queryBits, long seed) {
        if (dim <= 0) {
            throw new IllegalArgumentException("scalar codes: expected dimension > 0, got " + dim);
        }
        if (metric == null) {
            throw new IllegalArgumentException("scalar codes: expected a metric, got null");
        }
        if (bits < 1 || bits > 8) {
            throw new IllegalArgumentException(
                    "scalar codes: expected bits in [1, 8], got " + bits);
        }
        if (queryBits < 1 || queryBits > 8) {
            throw new IllegalArgumentException(
                    "scalar codes: expected queryBits in [1, 8], got " + queryBits);
        }
        this.dim = dim;
        this.metric = metric;
        this.bits = bits;
        this.queryBits = queryBits;
        this.words = (dim + 63) >>> 6;
        this.planeBytes = bits * words * Long.BYTES;
        this.bytesPerVector = planeBytes + CORRECTION_BYTES;
        this.rotation = new RandomRotation(dim, seed);
    }

    /** Codes with {@link #defaultQueryBits} for the query. */
    ScalarCodes(int dim, Metric metric, int bits, long seed) {
        this(dim, metric, bits, defaultQueryBits(bits), seed);
    }

    /**
     * The query bits chosen for {@code bits}-bit codes: 4 for codes of 1 to 4 bits (RaBitQ's and
     * Lucene's choice for 1-bit codes; a 4-bit grid over the query's residual is several times
     * finer than the code's), 8 above (a coarser query would cancel the extra code bits).
     */
    static int defaultQueryBits(int bits) {
        return bits <= 4 ? 4 : 8;
    }

    int dimension() {
        return dim;
    }

    Metric metric() {
        return metric;
    }

    int bits() {
        return bits;
    }

    int queryBits() {
        return queryBits;
    }

    long seed() {
        return rotation.seed();
    }

    /**
     * Bytes of one vector's entry: {@code bits * ceil(dim/64) * 8} of levels plus 16 of
     * corrections.
     */
    int bytesPerVector() {
        return bytesPerVector;
    }

    RandomRotation rotation() {
        return rotation;
    }

    /**
     * The frame of a list's codes: {@code centroid[off, off+dim)}, copied and rotated once. Codes
     * are only comparable with the exact centre they were encoded against, so an index keeps the
     * centre its list was encoded with until it re-encodes the list.
     *
     * @throws IllegalArgumentException if the range is short or holds a non-finite value
     */
    Centre centre(float[] centroid, int off) {
        checkRange("centroid", centroid, off);
        float[] copy = Arrays.copyOfRange(centroid, off, off + dim);
        for (int i = 0; i < dim; i++) {
            if (!Float.isFinite(copy[i])) {
                throw new IllegalArgumentException(
                        "scalar codes: centroid component " + i + " is " + copy[i]);
            }
        }
        float[] rotated = new float[dim];
        rotation.apply(copy, 0, rotated);
        return new Centre(this, copy, rotated);
    }

    /** Scratch for encoding on one thread. */
    ScalarEncoder encoder() {
        return new ScalarEncoder(this);
    }

    /** Scratch for scoring on one thread (one per concurrent search). */
    ScalarQueryScorer scorer() {
        return new ScalarQueryScorer(this);
    }

    /** Longs per bit plane: {@code ceil(dim / 64)}. */
    int words() {
        return words;
    }

    /** Bytes of an entry's bit planes (the corrections follow). */
    int planeBytes() {
        return planeBytes;
    }

    OptimizedScalarQuantizer quantizer() {
        return quantizer;
    }

    // ------------------------------------------------------------------ entry accessors

    /** Offset of the corrections in an entry starting at {@code entryOff}. */
    private int corrections(int entryOff) {
        return entryOff + planeBytes;
    }

    /** {@code a / alpha} of the entry at {@code entryOff}. */
    float lowerOf(byte[] codes, int entryOff) {
        return (float) FLOATS.get(codes, corrections(entryOff));
    }

    /** {@code step / alpha} of the entry at {@code entryOff}. */
    float stepOf(byte[] codes, int entryOff) {
        return (float) FLOATS.get(codes, corrections(entryOff) + 4);
    }

    /** The exact term of the entry: {@code |x - c|^2} (L2, cosine) or {@code <c, x - c>} (dot). */
    float exactTermOf(byte[] codes, int entryOff) {
        return (float) FLOATS.get(codes, corrections(entryOff) + 8);
    }

    /** The sum of the entry's levels. */
    int levelSumOf(byte[] codes, int entryOff) {
        return (int) INTS.get(codes, corrections(entryOff) + 12);
    }

    /**
     * The level of dimension {@code i} stored in the entry at {@code entryOff}, in {@code [0,
     * 2^bits)}.
     */
    int levelOf(byte[] codes, int entryOff, int i) {
        int level = 0;
        for (int p = 0; p < bits; p++) {
            long word = (long) LONGS.get(codes, entryOff + (p * words + (i >>> 6)) * Long.BYTES);
            level |= (int) ((word >>> (i & 63)) & 1L) << p;
        }
        return level;
    }

    void checkRange(String what, float[] a, int off) {
        if (a == null) {
            throw new IllegalArgumentException("scalar codes: " + what + " is null");
        }
        if (off < 0 || a.length - off < dim) {
            throw new IllegalArgumentException(
                    "scalar codes: "
                            + what
                            + " expected dimension "
                            + dim
                            + " from offset "
                            + off
                            + ", got "
                            + (a.length - off)
                            + " floats there (array of "
                            + a.length
                            + ")");
        }
    }

    void checkEntries(byte[] codes, int off, int count) {
        if (codes == null) {
            throw new IllegalArgumentException("scalar codes: code array is null");
        }
        if (count < 0 || off < 0 || codes.length - off < (long) count * bytesPerVector) {
            throw new IllegalArgumentException(
                    "scalar codes: "
                            + count
                            + " entries of "
                            + bytesPerVector
                            + " bytes from offset "
                            + off
                            + " do not fit in "
                            + codes.length
                            + " bytes");
        }
    }

    void checkOwn(Centre centre) {
        if (centre == null || centre.codes != this) {
            throw new IllegalArgumentException(
                    "scalar codes: the centre was made by "
                            + (centre == null ? "nobody (null)" : "other codes")
                            + "; use this codec's centre()");
        }
        if (centre.wiped) {
            throw new IllegalArgumentException(
                    "scalar codes: the centre was wiped (its list was re-encoded"
                            + " against a new one)");
        }
    }

    /**
     * Splits {@code levels[0, dim)} into {@code planes} bit planes of {@code words} longs each,
     * written to {@code out} from index 0 (bit p of level i goes to bit {@code i % 64} of word
     * {@code p*words + i/64}); padding bits stay zero.
     */
    void transpose(byte[] levels, int planes, long[] out) {
        Arrays.fill(out, 0, planes * words, 0L);
        for (int i = 0; i < dim; i++) {
            int level = levels[i] & 0xFF;
            long bit = 1L << (i & 63);
            int w = i >>> 6;
            for (int p = 0; p < planes; p++) {
                if (((level >>> p) & 1) != 0) {
                    out[p * words + w] |= bit;
                }
            }
        }
    }

    // ------------------------------------------------------------------ centre

    /** A list's centre as the codes see it (see {@link ScalarCodes#centre}). */
    static final class Centre {
        private final ScalarCodes codes;
        private final float[] centroid;
        final float[] rotated;
        private boolean wiped;

        private Centre(ScalarCodes codes, float[] centroid, float[] rotated) {
            this.codes = codes;
            this.centroid = centroid;
            this.rotated = rotated;
        }

        /**
         * The centroid as given (a copy): what to save so that a loaded index rebuilds this frame
         * exactly.
         */
        float[] centroid() {
            return centroid.clone();
        }

        /**
         * Zeroes both copies: a frame that a removed vector shaped must not outlive the re-encoding
         * that replaces it. Encoding or scoring against it afterwards is refused.
         */
        void wipe() {
            wiped = true;
            Arrays.fill(centroid, 0f);
            Arrays.fill(rotated, 0f);
        }
    }
}
