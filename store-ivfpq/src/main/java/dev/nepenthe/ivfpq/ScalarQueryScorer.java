package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import java.util.Arrays;

/**
 * Scores entries against one query; scratch for one thread. Call {@link #setQuery} once per search
 * (it rotates the query), {@link #setList} once per probed list (it quantizes the query's residual
 * to that list's centre), then {@link #score} over the list's entries.
 */
final class ScalarQueryScorer {
    private final ScalarCodes codec;
    private final int dim;
    private final int bits;
    private final int queryBits;
    private final int words;
    private final int planeBytes;
    private final int bytesPerVector;
    private final float[] rotatedQuery;
    private final float[] residual;
    private final long[] planes;
    private boolean hasQuery;
    private ScalarCodes.Centre list;

    // Per list (see the estimator in ScalarCodes' class comment):
    /** {@code a_q / alpha_q}. */
    private float queryLower;

    /** {@code step_q / alpha_q}. */
    private float queryStep;

    /** {@code (d * a_q + step_q * sum k_q) / alpha_q}: the sum of s^'s components, scaled. */
    private float querySum;

    /** {@code |s|^2} (L2, cosine) or {@code <q, c>} (dot). */
    private float listConstant;

    ScalarQueryScorer(ScalarCodes codec) {
        this.codec = codec;
        this.dim = codec.dimension();
        this.bits = codec.bits();
        this.queryBits = codec.queryBits();
        this.words = codec.words();
        this.planeBytes = codec.planeBytes();
        this.bytesPerVector = codec.bytesPerVector();
        this.rotatedQuery = new float[dim];
        this.residual = new float[dim];
        this.planes = new long[queryBits * words];
    }

    /**
     * Rotates a query (prepared for the metric) once for all the lists it probes.
     *
     * @throws IllegalArgumentException if it does not have {@code dim} components from index 0 or
     *     one is not finite
     */
    void setQuery(float[] query) {
        codec.checkRange("query", query, 0);
        for (int i = 0; i < dim; i++) {
            if (!Float.isFinite(query[i])) {
                throw new IllegalArgumentException(
                        "scalar codes: query component " + i + " is " + query[i]);
            }
        }
        codec.rotation().apply(query, 0, rotatedQuery, residual);
        hasQuery = true;
        list = null;
    }

    /**
     * Prepares the query against a probed list's centre (the one its entries were encoded against).
     * Cost: two passes over the dimensions (residual and its range, then levels written into bit
     * planes).
     */
    void setList(ScalarCodes.Centre centre) {
        if (!hasQuery) {
            throw new IllegalStateException("scalar codes: setQuery must come before setList");
        }
        codec.checkOwn(centre);
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
        listConstant = (float) (codec.metric() == Metric.DOT ? queryDotCentre : norm2);
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
     * Writes the estimated metric value of {@code count} entries stored back to back from {@code
     * codes[off]} to {@code out[outOff, outOff + count)}: the squared distance for L2 and cosine
     * (unit vectors), the inner product for dot. The estimates are not clamped (a squared distance
     * near 0 may come out slightly negative).
     *
     * @throws IllegalStateException before {@link #setList}
     * @throws IllegalArgumentException if the entries or the output do not fit
     */
    void score(byte[] codes, int off, int count, float[] out, int outOff) {
        if (list == null) {
            throw new IllegalStateException("scalar codes: setList must come before score");
        }
        codec.checkEntries(codes, off, count);
        if (out == null || outOff < 0 || out.length - outOff < count) {
            throw new IllegalArgumentException(
                    "scalar codes: "
                            + count
                            + " scores from offset "
                            + outOff
                            + " do not fit in "
                            + (out == null ? "null" : out.length + " floats"));
        }
        boolean dot = codec.metric() == Metric.DOT;
        float aq = queryLower;
        float sq = queryStep;
        float qsum = querySum;
        float constant = listConstant;
        for (int v = 0; v < count; v++) {
            int entry = off + v * bytesPerVector;
            long levelDot = levelDot(codes, entry);
            int co = entry + planeBytes;
            float lower = (float) ScalarCodes.FLOATS.get(codes, co);
            float step = (float) ScalarCodes.FLOATS.get(codes, co + 4);
            float exact = (float) ScalarCodes.FLOATS.get(codes, co + 8);
            int levelSum = (int) ScalarCodes.INTS.get(codes, co + 12);
            float estimate = lower * qsum + step * (aq * levelSum + sq * (float) levelDot);
            out[outOff + v] = dot ? constant + exact + estimate : constant + exact - 2 * estimate;
        }
    }

    /**
     * {@code <k_q, k>}: the integer dot product of the query's levels and the entry's, as {@code
     * sum over words w, code planes p and query planes t of popcount(code_p[w] & query_t[w]) << (p
     * + t)}.
     */
    long levelDot(byte[] codes, int entry) {
        if (queryBits == 4) {
            return levelDot4(codes, entry);
        }
        if (queryBits == 8) {
            return levelDot8(codes, entry);
        }
        return levelDotAnyWidth(codes, entry);
    }

    /**
     * {@link #levelDot} as the plain loop over every pair of code and query planes: any query
     * width, and the oracle the unrolled 4- and 8-bit paths are tested against.
     */
    long levelDotAnyWidth(byte[] codes, int entry) {
        long total = 0;
        for (int p = 0; p < bits; p++) {
            int planeOff = entry + p * words * Long.BYTES;
            long planeDot = 0;
            for (int w = 0; w < words; w++) {
                long x = (long) ScalarCodes.LONGS.get(codes, planeOff + w * Long.BYTES);
                for (int t = 0; t < queryBits; t++) {
                    planeDot += (long) Long.bitCount(x & planes[t * words + w]) << t;
                }
            }
            total += planeDot << p;
        }
        return total;
    }

    /**
     * {@link #levelDot} for a 4-bit query (the default up to 4-bit codes): the query's words of w
     * held in locals.
     */
    private long levelDot4(byte[] codes, int entry) {
        return levelDotNibble(codes, entry, 0);
    }

    /**
     * {@link #levelDot} for an 8-bit query (the default above 4-bit codes): the query's levels are
     * two 4-bit halves, so {@code <k_q, k> = <low, k> + 16 <high, k>}.
     */
    private long levelDot8(byte[] codes, int entry) {
        return levelDotNibble(codes, entry, 0) + (levelDotNibble(codes, entry, 4) << 4);
    }

    /**
     * {@code <k_q, k>} over four query planes from {@code firstPlane}, as if they were the whole
     * query: {@code sum over words w and code planes p of (sum over t < 4 of popcount(code_p[w] &
     * query_{firstPlane + t}[w]) << t) << p}.
     */
    private long levelDotNibble(byte[] codes, int entry, int firstPlane) {
        long[] q = planes;
        int n = words;
        int planeStride = n * Long.BYTES;
        int base = firstPlane * n;
        long total = 0;
        for (int w = 0; w < n; w++) {
            long q0 = q[base + w];
            long q1 = q[base + n + w];
            long q2 = q[base + 2 * n + w];
            long q3 = q[base + 3 * n + w];
            int off = entry + w * Long.BYTES;
            for (int p = 0; p < bits; p++) {
                long x = (long) ScalarCodes.LONGS.get(codes, off + p * planeStride);
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
}
