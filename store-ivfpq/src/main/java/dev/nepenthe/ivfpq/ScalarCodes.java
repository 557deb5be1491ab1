package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.util.quantization.OptimizedScalarQuantizer;
import org.apache.lucene.util.quantization.OptimizedScalarQuantizer.QuantizationResult;

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
 * OSQ's grid; OSQ's anisotropic loss keeps {@code alpha} near 1 and {@code |e|} small). Measured at
 * d=384, 1 bit: the slope of estimated against true {@code <s, r>} is 0.93 to 0.95 without the
 * division and 0.99 to 1.00 with it, and on skewed data the RMS error halves.
 *
 * <p>The query side is quantized too, once per probed list, so that the scan is integer arithmetic:
 * {@code s^ = a_q + step_q * k_q} on a uniform grid of {@code queryBits} bits over {@code [min s_i,
 * max s_i]}, rounded to nearest, and divided by its own {@code alpha_q = <s^, s> / |s|^2} for the
 * same reason as the code: the part of the query's rounding error that lies along {@code s} would
 * otherwise enter every estimate in proportion to {@code <s, r>}, largest for the nearest
 * neighbours (measured on one such pair, 8-bit codes and a 4-bit query: error 0.016 |s||r| without,
 * 0.006 with). Not OSQ on this side: it runs per probed list, where OSQ's interval search cost
 * about 40 us at d=384 against 3 us for the plain grid, and it changed neither the error nor recall
 * measurably. Expanding {@code <s^, r^> / (alpha * alpha_q)}, with {@code a_q} and {@code step_q}
 * already divided by {@code alpha_q}:
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
 * POPCNT instruction) over longs read from the code bytes through a byte-array view, with unrolled
 * loops for 4- and 8-bit queries. At d=384 a 1-bit code against a 4-bit query is 24 AND+POPCNT
 * pairs per vector, a 4-bit code 96, a 7-bit code against an 8-bit query 336. Measured on a shared
 * 2-core machine under a load of 4 to 7, so only rough and pessimistic (ScalarCodesMeasurement and
 * a standalone loop): 25 to 200 ns per vector at 1 bit, 140 to 290 at 4 bits, 250 to 860 at 7 bits;
 * preparing the query for a list 3 to 20 us; encoding 40 to 110 us per vector, most of it OSQ's
 * interval search. Side by side in one loop (5000 vectors, d=384), against the exact SIMD
 * squared-distance batch over the same vectors as floats, a scan took 0.7 times as long with 1-bit
 * codes, 1.3 times with 4-bit and 3.5 times with 7-bit: wider codes buy memory (208 or 352 bytes
 * against 1536) and accuracy, not speed, until a Vector API kernel is written for them.
 *
 * <p>Instances are immutable and thread-safe; {@link Encoder} and {@link QueryScorer} hold scratch
 * space and are for one thread at a time.
 */
final class ScalarCodes {
    /** Bytes of per-vector corrections at the end of each entry. */
    static final int CORRECTION_BYTES = 16;

    /**
     * The code width an index should default to: 4 bits. On 20k x 384 clustered vectors with codes
     * relative to 64 list means, an exact re-rank of the best 64 found the true top 10 every time
     * at 4 bits (recall 1.000 for all three metrics) against 0.87 to 0.99 at 1 bit, for 208 bytes
     * per vector (7 times fewer than the floats). 1 bit (64 bytes, the fastest scan) suits a deeper
     * re-rank; 7 bits (352 bytes) suits using the estimates without a re-rank (recall 0.98 to 0.99
     * from the codes alone).
     */
    static final int DEFAULT_BITS = 4;

    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle FLOATS =
            MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INTS =
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
     *     ceil(dim/64) * 8 + 16} bytes (64, 208 and 352 at d=384 for 1, 4 and 7 bits), a scan costs
     *     {@code bits * queryBits * ceil(dim/64)} popcounts per vector, and the estimate's error
     *     roughly halves with each added bit
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
    Encoder encoder() {
        return new Encoder();
    }

    /** Scratch for scoring on one thread (one per concurrent search). */
    QueryScorer scorer() {
        return new QueryScorer();
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

    private void checkRange(String what, float[] a, int off) {
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

    private void checkEntries(byte[] codes, int off, int count) {
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

    private void checkOwn(Centre centre) {
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
    private void transpose(byte[] levels, int planes, long[] out) {
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
        private final float[] rotated;
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

    // ------------------------------------------------------------------ encoding

    /** Encodes vectors; scratch for one thread. */
    final class Encoder {
        private final float[] residual = new float[dim];
        private final float[] rotationScratch = new float[dim];
        private final byte[] levels = new byte[dim];
        private final long[] planes = new long[bits * words];
        // OSQ subtracts a centroid in place; ours is subtracted (after rotation) already.
        private final float[] zeros = new float[dim];

        private Encoder() {}

        /**
         * Writes the entry of {@code vector[off, off+dim)} (prepared for the metric) relative to
         * {@code centre} to {@code out[outOff, outOff + bytesPerVector())}. Cost: one rotation plus
         * OSQ's interval search (about a dozen passes over the dimensions).
         *
         * @throws IllegalArgumentException on a short range, a non-finite component, a centre of
         *     other codes, or an output too short
         */
        void encode(float[] vector, int off, Centre centre, byte[] out, int outOff) {
            checkRange("vector", vector, off);
            checkOwn(centre);
            checkEntries(out, outOff, 1);
            encodeChecked(vector, off, centre, out, outOff);
        }

        /**
         * Encodes a whole list against its (new) centre: {@code count} vectors at {@code
         * block[offsets[i], offsets[i] + dim)}, entries written back to back to {@code out} from
         * {@code outOff} in the order given. The centre is rotated once (by {@link
         * ScalarCodes#centre}), each vector once; this is what an index runs when a removal moves a
         * list's mean and the list must be re-encoded.
         *
         * @throws IllegalArgumentException as {@link #encode}, for any of the vectors
         */
        void encodeList(
                float[] block, int[] offsets, int count, Centre centre, byte[] out, int outOff) {
            checkOwn(centre);
            if (offsets == null || count < 0 || count > offsets.length) {
                throw new IllegalArgumentException(
                        "scalar codes: expected "
                                + count
                                + " vector offsets, got "
                                + (offsets == null ? "null" : offsets.length));
            }
            checkEntries(out, outOff, count);
            for (int i = 0; i < count; i++) {
                checkRange("vector " + i, block, offsets[i]);
            }
            for (int i = 0; i < count; i++) {
                encodeChecked(block, offsets[i], centre, out, outOff + i * bytesPerVector);
            }
        }

        private void encodeChecked(float[] vector, int off, Centre centre, byte[] out, int outOff) {
            // 1. Rotate, then take the residual to the rotated centre.
            rotation.apply(vector, off, residual, rotationScratch);
            float[] c = centre.rotated;
            double norm2 = 0;
            double centreDot = 0;
            for (int i = 0; i < dim; i++) {
                float r = residual[i] - c[i];
                residual[i] = r;
                norm2 += (double) r * r;
                centreDot += (double) c[i] * r;
            }
            if (!Double.isFinite(norm2) || !Double.isFinite(centreDot)) {
                throw new IllegalArgumentException(
                        "scalar codes: vector has a non-finite component"
                                + " (or overflows float when squared)");
            }
            float exact = (float) (metric == Metric.DOT ? centreDot : norm2);
            // 2. OSQ's per-vector interval and levels.
            float lowerScaled = 0;
            float stepScaled = 0;
            int levelSum = 0;
            if (norm2 == 0) {
                // The vector is its centre: <s, r> = 0 for every query, which zero corrections
                // give.
                Arrays.fill(levels, (byte) 0);
            } else {
                QuantizationResult q =
                        quantizer.scalarQuantize(residual, levels, (byte) bits, zeros);
                float lower = q.lowerInterval();
                float step = (q.upperInterval() - lower) / ((1 << bits) - 1);
                levelSum = q.quantizedComponentSum();
                // 3. alpha = <r^, r> / |r|^2, the share of r the dequantized vector keeps along r.
                double along = 0;
                for (int i = 0; i < dim; i++) {
                    along += (double) residual[i] * (lower + step * (levels[i] & 0xFF));
                }
                double alpha = along / norm2;
                // A non-positive alpha needs a grid that points away from r (possible only for
                // pathological intervals); dividing by it would flip the estimate, so such a code
                // keeps the plain dequantized product.
                double inv = alpha > 1e-6 && Double.isFinite(alpha) ? 1 / alpha : 1;
                lowerScaled = (float) (lower * inv);
                stepScaled = (float) (step * inv);
            }
            // 4. The entry: bit planes, then corrections.
            transpose(levels, bits, planes);
            for (int t = 0; t < planes.length; t++) {
                LONGS.set(out, outOff + t * Long.BYTES, planes[t]);
            }
            int co = outOff + planeBytes;
            FLOATS.set(out, co, lowerScaled);
            FLOATS.set(out, co + 4, stepScaled);
            FLOATS.set(out, co + 8, exact);
            INTS.set(out, co + 12, levelSum);
        }
    }

    // ------------------------------------------------------------------ scoring

    /**
     * Scores entries against one query; scratch for one thread. Call {@link #setQuery} once per
     * search (it rotates the query), {@link #setList} once per probed list (it quantizes the
     * query's residual to that list's centre), then {@link #score} over the list's entries.
     */
    final class QueryScorer {
        private final float[] rotatedQuery = new float[dim];
        private final float[] residual = new float[dim];
        private final long[] planes = new long[queryBits * words];
        private boolean hasQuery;
        private Centre list;
        // Per list: see the estimator in the class comment.
        private float queryLower; // a_q / alpha_q
        private float queryStep; // step_q / alpha_q
        private float
                querySum; // (d * a_q + step_q * sum k_q) / alpha_q: the sum of s^'s components,
        // scaled
        private float listConstant; // |s|^2 (L2, cosine) or <q, c> (dot)

        private QueryScorer() {}

        /**
         * Rotates a query (prepared for the metric) once for all the lists it probes.
         *
         * @throws IllegalArgumentException if it does not have {@code dim} components from index 0
         *     or one is not finite
         */
        void setQuery(float[] query) {
            checkRange("query", query, 0);
            for (int i = 0; i < dim; i++) {
                if (!Float.isFinite(query[i])) {
                    throw new IllegalArgumentException(
                            "scalar codes: query component " + i + " is " + query[i]);
                }
            }
            rotation.apply(query, 0, rotatedQuery, residual);
            hasQuery = true;
            list = null;
        }

        /**
         * Prepares the query against a probed list's centre (the one its entries were encoded
         * against). Cost: two passes over the dimensions (residual and its range, then levels
         * written into bit planes), 3 to 20 us at d=384 as measured on a loaded machine.
         */
        void setList(Centre centre) {
            if (!hasQuery) {
                throw new IllegalStateException("scalar codes: setQuery must come before setList");
            }
            checkOwn(centre);
            float[] c = centre.rotated;
            double norm2 = 0;
            double queryDotCentre = 0;
            float min = Float.POSITIVE_INFINITY;
            float max = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < dim; i++) {
                float s = rotatedQuery[i] - c[i];
                residual[i] = s;
                norm2 += (double) s * s;
                queryDotCentre += (double) rotatedQuery[i] * c[i];
                min = Math.min(min, s);
                max = Math.max(max, s);
            }
            listConstant = (float) (metric == Metric.DOT ? queryDotCentre : norm2);
            // A uniform grid over [min, max], levels rounded to nearest, written straight into
            // bit planes. When every component is equal (s = 0 included) the grid is one point,
            // min itself, and s^ = s exactly.
            Arrays.fill(planes, 0L);
            int top = (1 << queryBits) - 1;
            float step = (max - min) / top;
            float inv = step > 0 ? 1 / step : 0;
            long levelSum = 0;
            double along = 0;
            for (int i = 0; i < dim; i++) {
                int level = Math.min(top, (int) ((residual[i] - min) * inv + 0.5f));
                levelSum += level;
                along += (double) residual[i] * (min + step * level);
                int shift = i & 63;
                int w = i >>> 6;
                for (int t = 0; t < queryBits; t++) {
                    planes[t * words + w] |= (long) ((level >>> t) & 1) << shift;
                }
            }
            // The query's own alpha: dividing by it takes the error of s^ along s out of every
            // estimate of this list, the part that grows with the neighbour's alignment with s.
            double alpha = norm2 == 0 ? 1 : along / norm2;
            double scale = alpha > 1e-6 && Double.isFinite(alpha) ? 1 / alpha : 1;
            queryLower = (float) (min * scale);
            queryStep = (float) (step * scale);
            querySum = (float) (((double) dim * min + (double) step * levelSum) * scale);
            list = centre;
        }

        /**
         * Writes the estimated metric value of {@code count} entries stored back to back from
         * {@code codes[off]} to {@code out[outOff, outOff + count)}: the squared distance for L2
         * and cosine (unit vectors), the inner product for dot. The estimates are not clamped (a
         * squared distance near 0 may come out slightly negative).
         *
         * @throws IllegalStateException before {@link #setList}
         * @throws IllegalArgumentException if the entries or the output do not fit
         */
        void score(byte[] codes, int off, int count, float[] out, int outOff) {
            if (list == null) {
                throw new IllegalStateException("scalar codes: setList must come before score");
            }
            checkEntries(codes, off, count);
            if (out == null || outOff < 0 || out.length - outOff < count) {
                throw new IllegalArgumentException(
                        "scalar codes: "
                                + count
                                + " scores from offset "
                                + outOff
                                + " do not fit in "
                                + (out == null ? "null" : out.length + " floats"));
            }
            boolean dot = metric == Metric.DOT;
            float aq = queryLower;
            float sq = queryStep;
            float qsum = querySum;
            float constant = listConstant;
            for (int v = 0; v < count; v++) {
                int entry = off + v * bytesPerVector;
                long levelDot = levelDot(codes, entry);
                int co = entry + planeBytes;
                float lower = (float) FLOATS.get(codes, co);
                float step = (float) FLOATS.get(codes, co + 4);
                float exact = (float) FLOATS.get(codes, co + 8);
                int levelSum = (int) INTS.get(codes, co + 12);
                float estimate = lower * qsum + step * (aq * levelSum + sq * (float) levelDot);
                out[outOff + v] =
                        dot ? constant + exact + estimate : constant + exact - 2 * estimate;
            }
        }

        /**
         * {@code <k_q, k>}: the integer dot product of the query's levels and the entry's, as
         * {@code sum over words w, code planes p and query planes t of popcount(code_p[w] &
         * query_t[w]) << (p + t)}.
         */
        private long levelDot(byte[] codes, int entry) {
            if (queryBits == 4) {
                return levelDot4(codes, entry);
            }
            if (queryBits == 8) {
                return levelDot8(codes, entry);
            }
            long total = 0;
            for (int p = 0; p < bits; p++) {
                int planeOff = entry + p * words * Long.BYTES;
                long planeDot = 0;
                for (int w = 0; w < words; w++) {
                    long x = (long) LONGS.get(codes, planeOff + w * Long.BYTES);
                    for (int t = 0; t < queryBits; t++) {
                        planeDot += (long) Long.bitCount(x & planes[t * words + w]) << t;
                    }
                }
                total += planeDot << p;
            }
            return total;
        }

        /**
         * {@link #levelDot} for a 4-bit query (the default up to 4-bit codes): the query's words of
         * w held in locals.
         */
        private long levelDot4(byte[] codes, int entry) {
            long[] q = planes;
            int n = words;
            int planeStride = n * Long.BYTES;
            long total = 0;
            for (int w = 0; w < n; w++) {
                long q0 = q[w];
                long q1 = q[n + w];
                long q2 = q[2 * n + w];
                long q3 = q[3 * n + w];
                int off = entry + w * Long.BYTES;
                for (int p = 0; p < bits; p++) {
                    long x = (long) LONGS.get(codes, off + p * planeStride);
                    long sum =
                            Long.bitCount(x & q0)
                                    + ((long) Long.bitCount(x & q1) << 1)
                                    + ((long) Long.bitCount(x & q2) << 2)
                                    + ((long) Long.bitCount(x & q3) << 3);
                    total += sum << p;
                }
            }
            return total;
        }

        /** {@link #levelDot} for an 8-bit query (the default above 4-bit codes). */
        private long levelDot8(byte[] codes, int entry) {
            long[] q = planes;
            int n = words;
            int planeStride = n * Long.BYTES;
            long total = 0;
            for (int w = 0; w < n; w++) {
                long q0 = q[w];
                long q1 = q[n + w];
                long q2 = q[2 * n + w];
                long q3 = q[3 * n + w];
                long q4 = q[4 * n + w];
                long q5 = q[5 * n + w];
                long q6 = q[6 * n + w];
                long q7 = q[7 * n + w];
                int off = entry + w * Long.BYTES;
                for (int p = 0; p < bits; p++) {
                    long x = (long) LONGS.get(codes, off + p * planeStride);
                    long low =
                            Long.bitCount(x & q0)
                                    + ((long) Long.bitCount(x & q1) << 1)
                                    + ((long) Long.bitCount(x & q2) << 2)
                                    + ((long) Long.bitCount(x & q3) << 3);
                    long high =
                            Long.bitCount(x & q4)
                                    + ((long) Long.bitCount(x & q5) << 1)
                                    + ((long) Long.bitCount(x & q6) << 2)
                                    + ((long) Long.bitCount(x & q7) << 3);
                    total += (low + (high << 4)) << p;
                }
            }
            return total;
        }
    }
}
