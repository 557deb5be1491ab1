package dev.nepenthe.core.internal.vector;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.VectorKernels;

/**
 * Plain-Java kernels in the summation order {@link VectorKernels} defines, so they agree bit for
 * bit with the Vector API twin. The partial sums of that order live in small arrays updated element
 * by element; {@link Math#fma} rounds each term once, as the SIMD fused multiply-add does. This is
 * slower than the earlier four-accumulator twin (docs/BENCHMARKS.md, "One summation order"): C2
 * does not vectorise these loops as well as hoped, which is open work.
 */
public final class ScalarKernels implements VectorKernels {

    @Override
    public String name() {
        return "scalar";
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int len) {
        return ordered(false, a, aOff, b, bOff, len);
    }

    @Override
    public float squareDistance(float[] a, int aOff, float[] b, int bOff, int len) {
        return ordered(true, a, aOff, b, bOff, len);
    }

    /**
     * The order's steps over {@code len} terms, each term {@code a[i] * b[i]} or, for a squared
     * distance, {@code (a[i] - b[i])^2}, folded in by {@link #term}.
     */
    private static float ordered(
            boolean square, float[] a, int aOff, float[] b, int bOff, int len) {
        int i = 0;
        float sum = 0f;
        int end16 = len & ~15;
        if (end16 > 0) {
            float[] r = new float[16];
            int end64 = len & ~63;
            if (end64 > 0) {
                float[] p = new float[64];
                for (; i < end64; i += 64) {
                    int ai = aOff + i, bi = bOff + i;
                    for (int j = 0; j < 64; j++) {
                        p[j] = term(square, a[ai + j], b[bi + j], p[j]);
                    }
                }
                fold64(p, r);
            }
            for (; i < end16; i += 16) {
                int ai = aOff + i, bi = bOff + i;
                for (int j = 0; j < 16; j++) {
                    r[j] = term(square, a[ai + j], b[bi + j], r[j]);
                }
            }
            sum = halve16(r);
        }
        for (; i < len; i++) {
            sum = term(square, a[aOff + i], b[bOff + i], sum);
        }
        return sum;
    }

    /** {@code acc} plus one term, rounded once: {@code x * y}, or {@code (x - y)^2}. */
    private static float term(boolean square, float x, float y, float acc) {
        if (square) {
            float d = x - y;
            return Math.fma(d, d, acc);
        }
        return Math.fma(x, y, acc);
    }

    /** Step 2 of the order: {@code r[j] = (p[j] + p[j+32]) + (p[j+16] + p[j+48])}. */
    private static void fold64(float[] p, float[] r) {
        for (int j = 0; j < 16; j++) {
            r[j] = (p[j] + p[j + 32]) + (p[j + 16] + p[j + 48]);
        }
    }

    /** Step 4 of the order: halving rounds 8, 4, 2, 1; {@code r} is consumed. */
    static float halve16(float[] r) {
        for (int h = 8; h >= 1; h >>= 1) {
            for (int j = 0; j < h; j++) {
                r[j] += r[j + h];
            }
        }
        return r[0];
    }

    /** Halving rounds 4, 2, 1 over eight partial sums: the PQ tables' fold. */
    static float halve8(
            float p0, float p1, float p2, float p3, float p4, float p5, float p6, float p7) {
        return ((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7));
    }

    @Override
    public float cosine(float[] a, float[] b) {
        return CosineMath.fromParts(
                dot(a, 0, b, 0, a.length), dot(a, 0, a, 0, a.length), dot(b, 0, b, 0, b.length));
    }

    @Override
    public void subtract(
            float[] v, int vOff, float[] c, int cOff, float[] out, int outOff, int len) {
        for (int i = 0; i < len; i++) {
            out[outOff + i] = v[vOff + i] - c[cOff + i];
        }
    }

    @Override
    public void pqDistanceTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        pqTable(query, codebooks, m, ksub, table, true);
    }

    @Override
    public void pqDotTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        pqTable(query, codebooks, m, ksub, table, false);
    }

    private void pqTable(
            float[] query, float[] codebooks, int m, int ksub, float[] table, boolean l2) {
        int dsub = query.length / m;
        for (int j = 0; j < m; j++) {
            int qOff = j * dsub;
            int cbOff = j * ksub * dsub;
            for (int c = 0; c < ksub; c++) {
                table[j * ksub + c] =
                        tableEntry(query, qOff, codebooks, cbOff + c * dsub, dsub, l2);
            }
        }
    }

    /** One PQ table entry in the order {@link VectorKernels#pqDistanceTable} defines. */
    float tableEntry(float[] q, int qOff, float[] cb, int o, int dsub, boolean l2) {
        switch (dsub) {
            case 1 -> {
                return term(q[qOff], cb[o], l2);
            }
            case 2 -> {
                return term(q[qOff], cb[o], l2) + term(q[qOff + 1], cb[o + 1], l2);
            }
            case 4 -> {
                return (term(q[qOff], cb[o], l2) + term(q[qOff + 1], cb[o + 1], l2))
                        + (term(q[qOff + 2], cb[o + 2], l2) + term(q[qOff + 3], cb[o + 3], l2));
            }
            default -> {
                // longer sub-vectors below
            }
        }
        if (dsub % 8 != 0) {
            return l2 ? squareDistance(q, qOff, cb, o, dsub) : dot(q, qOff, cb, o, dsub);
        }
        float[] p = new float[8];
        for (int i = 0; i < dsub; i += 8) {
            for (int k = 0; k < 8; k++) {
                float x = q[qOff + i + k];
                float c = cb[o + i + k];
                if (l2) {
                    float d = x - c;
                    p[k] = Math.fma(d, d, p[k]);
                } else {
                    p[k] = Math.fma(x, c, p[k]);
                }
            }
        }
        return halve8(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    }

    private static float term(float x, float c, boolean l2) {
        if (l2) {
            float d = x - c;
            return d * d;
        }
        return x * c;
    }

    @Override
    public void nearest(
            float[] points, int pOff, int n, CentroidBlock centroids, int[] out, int outOff) {
        int dim = centroids.dim();
        float[] t = centroids.transposed();
        float[] half = centroids.halfNorms();
        int k = centroids.k();
        for (int i = 0; i < n; i++) {
            int p = pOff + i * dim;
            int best = 0;
            float bestScore = Float.POSITIVE_INFINITY;
            for (int c = 0; c < k; c++) {
                int base =
                        (c / CentroidBlock.GROUP) * dim * CentroidBlock.GROUP
                                + c % CentroidBlock.GROUP;
                float acc = 0f;
                for (int d = 0; d < dim; d++) {
                    acc = Math.fma(points[p + d], t[base + d * CentroidBlock.GROUP], acc);
                }
                float score = half[c] - acc;
                if (score < bestScore) {
                    bestScore = score;
                    best = c;
                }
            }
            out[outOff + i] = best;
        }
    }

    /**
     * One accumulator: integer addition takes one cycle, so splitting the chain buys little; four
     * accumulators or sixteen partial sums in an array were no faster on JDK 25, and C2 vectorised
     * none of the three forms (docs/BENCHMARKS.md).
     */
    @Override
    public int dotInt8(byte[] a, int aOff, byte[] b, int bOff, int len) {
        int sum = 0;
        for (int i = 0; i < len; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }
}
