package dev.nepenthe.core.vector;

/**
 * Plain-Java kernels. Four independent accumulators break the floating-point add dependency
 * chain so the JIT can keep several multiply-adds in flight (Lucene's scalar twin does the
 * same); {@link Math#fma} keeps rounding close to the SIMD path.
 */
final class ScalarKernels implements VectorKernels {

    @Override
    public String name() {
        return "scalar";
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int len) {
        float s0 = 0f, s1 = 0f, s2 = 0f, s3 = 0f;
        int i = 0;
        int upper = len & ~3;
        for (; i < upper; i += 4) {
            s0 = Math.fma(a[aOff + i], b[bOff + i], s0);
            s1 = Math.fma(a[aOff + i + 1], b[bOff + i + 1], s1);
            s2 = Math.fma(a[aOff + i + 2], b[bOff + i + 2], s2);
            s3 = Math.fma(a[aOff + i + 3], b[bOff + i + 3], s3);
        }
        for (; i < len; i++) {
            s0 = Math.fma(a[aOff + i], b[bOff + i], s0);
        }
        return (s0 + s1) + (s2 + s3);
    }

    @Override
    public float squareDistance(float[] a, int aOff, float[] b, int bOff, int len) {
        float s0 = 0f, s1 = 0f, s2 = 0f, s3 = 0f;
        int i = 0;
        int upper = len & ~3;
        for (; i < upper; i += 4) {
            float d0 = a[aOff + i] - b[bOff + i];
            float d1 = a[aOff + i + 1] - b[bOff + i + 1];
            float d2 = a[aOff + i + 2] - b[bOff + i + 2];
            float d3 = a[aOff + i + 3] - b[bOff + i + 3];
            s0 = Math.fma(d0, d0, s0);
            s1 = Math.fma(d1, d1, s1);
            s2 = Math.fma(d2, d2, s2);
            s3 = Math.fma(d3, d3, s3);
        }
        for (; i < len; i++) {
            float d = a[aOff + i] - b[bOff + i];
            s0 = Math.fma(d, d, s0);
        }
        return (s0 + s1) + (s2 + s3);
    }

    @Override
    public float cosine(float[] a, float[] b) {
        float ab0 = 0f, ab1 = 0f, aa0 = 0f, aa1 = 0f, bb0 = 0f, bb1 = 0f;
        int len = a.length;
        int i = 0;
        int upper = len & ~1;
        for (; i < upper; i += 2) {
            float x0 = a[i], y0 = b[i], x1 = a[i + 1], y1 = b[i + 1];
            ab0 = Math.fma(x0, y0, ab0);
            ab1 = Math.fma(x1, y1, ab1);
            aa0 = Math.fma(x0, x0, aa0);
            aa1 = Math.fma(x1, x1, aa1);
            bb0 = Math.fma(y0, y0, bb0);
            bb1 = Math.fma(y1, y1, bb1);
        }
        for (; i < len; i++) {
            ab0 = Math.fma(a[i], b[i], ab0);
            aa0 = Math.fma(a[i], a[i], aa0);
            bb0 = Math.fma(b[i], b[i], bb0);
        }
        return CosineMath.fromParts(ab0 + ab1, aa0 + aa1, bb0 + bb1);
    }

    @Override
    public void dotBatch(float[] query, float[] block, int blockOff, int count, int dim, float[] out, int outOff) {
        for (int v = 0; v < count; v++) {
            out[outOff + v] = dot(query, 0, block, blockOff + v * dim, dim);
        }
    }

    @Override
    public void squareDistanceBatch(float[] query, float[] block, int blockOff, int count, int dim, float[] out, int outOff) {
        for (int v = 0; v < count; v++) {
            out[outOff + v] = squareDistance(query, 0, block, blockOff + v * dim, dim);
        }
    }

    @Override
    public void subtract(float[] v, int vOff, float[] c, int cOff, float[] out, int outOff, int len) {
        for (int i = 0; i < len; i++) {
            out[outOff + i] = v[vOff + i] - c[cOff + i];
        }
    }

    @Override
    public float pqDistance(float[] table, int ksub, byte[] codes, int codeOff, int m) {
        return pqSum(table, ksub, codes, codeOff, m);
    }

    @Override
    public void pqDistanceBatch(float[] table, int ksub, byte[] codes, int codesOff, int count, int m, float[] out, int outOff) {
        pqSumBatch(table, ksub, codes, codesOff, count, m, out, outOff);
    }

    /**
     * Table look-up sum shared with {@link PanamaKernels} (a gather per code byte costs more
     * than it saves at the m of 8 to 64 used in practice). Two sums halve the add chain.
     */
    static float pqSum(float[] table, int ksub, byte[] codes, int codeOff, int m) {
        float s0 = 0f, s1 = 0f;
        int j = 0;
        for (; j + 1 < m; j += 2) {
            s0 += table[j * ksub + (codes[codeOff + j] & 0xFF)];
            s1 += table[(j + 1) * ksub + (codes[codeOff + j + 1] & 0xFF)];
        }
        if (j < m) {
            s0 += table[j * ksub + (codes[codeOff + j] & 0xFF)];
        }
        return s0 + s1;
    }

    /**
     * {@link #pqSum} for {@code count} codes, four at a time: the four codes' look-ups are
     * independent, so the CPU overlaps their loads instead of waiting on one chain of adds
     * (the scan over an inverted list is load-latency bound). Each code keeps pqSum's even/odd
     * accumulators, so every result is bit-identical to {@code pqSum} on that code.
     */
    static void pqSumBatch(float[] table, int ksub, byte[] codes, int codesOff, int count, int m, float[] out, int outOff) {
        int v = 0;
        for (; v + 3 < count; v += 4) {
            int c0 = codesOff + v * m, c1 = c0 + m, c2 = c1 + m, c3 = c2 + m;
            float e0 = 0f, o0 = 0f, e1 = 0f, o1 = 0f, e2 = 0f, o2 = 0f, e3 = 0f, o3 = 0f;
            int j = 0;
            for (; j + 1 < m; j += 2) {
                int row = j * ksub;
                int next = row + ksub;
                e0 += table[row + (codes[c0 + j] & 0xFF)];
                e1 += table[row + (codes[c1 + j] & 0xFF)];
                e2 += table[row + (codes[c2 + j] & 0xFF)];
                e3 += table[row + (codes[c3 + j] & 0xFF)];
                o0 += table[next + (codes[c0 + j + 1] & 0xFF)];
                o1 += table[next + (codes[c1 + j + 1] & 0xFF)];
                o2 += table[next + (codes[c2 + j + 1] & 0xFF)];
                o3 += table[next + (codes[c3 + j + 1] & 0xFF)];
            }
            if (j < m) {
                int row = j * ksub;
                e0 += table[row + (codes[c0 + j] & 0xFF)];
                e1 += table[row + (codes[c1 + j] & 0xFF)];
                e2 += table[row + (codes[c2 + j] & 0xFF)];
                e3 += table[row + (codes[c3 + j] & 0xFF)];
            }
            out[outOff + v] = e0 + o0;
            out[outOff + v + 1] = e1 + o1;
            out[outOff + v + 2] = e2 + o2;
            out[outOff + v + 3] = e3 + o3;
        }
        for (; v < count; v++) {
            out[outOff + v] = pqSum(table, ksub, codes, codesOff + v * m, m);
        }
    }

    @Override
    public void pqDistanceTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        int dsub = query.length / m;
        for (int j = 0; j < m; j++) {
            int qOff = j * dsub;
            int cbOff = j * ksub * dsub;
            for (int c = 0; c < ksub; c++) {
                table[j * ksub + c] = squareDistance(query, qOff, codebooks, cbOff + c * dsub, dsub);
            }
        }
    }

    @Override
    public void pqDotTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        int dsub = query.length / m;
        for (int j = 0; j < m; j++) {
            int qOff = j * dsub;
            int cbOff = j * ksub * dsub;
            for (int c = 0; c < ksub; c++) {
                table[j * ksub + c] = dot(query, qOff, codebooks, cbOff + c * dsub, dsub);
            }
        }
    }

    @Override
    public void nearest(float[] points, int pOff, int n, CentroidBlock centroids, int[] out, int outOff) {
        int dim = centroids.dim();
        float[] t = centroids.transposed();
        float[] half = centroids.halfNorms();
        int k = centroids.k();
        for (int i = 0; i < n; i++) {
            int p = pOff + i * dim;
            int best = 0;
            float bestScore = Float.POSITIVE_INFINITY;
            for (int c = 0; c < k; c++) {
                int base = (c / CentroidBlock.GROUP) * dim * CentroidBlock.GROUP + c % CentroidBlock.GROUP;
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
}
