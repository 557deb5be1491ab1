package dev.nepenthe.core.vector;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Kernels on the incubating Vector API. Loaded only through {@link Kernels}, which first checks
 * that {@code jdk.incubator.vector} is readable. Loops use the preferred species (256 or 512
 * bits on x86) with two accumulators and finish the tail with scalar code.
 */
final class PanamaKernels implements VectorKernels {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int LANES = F.length();

    @Override
    public String name() {
        return "panama";
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int len) {
        int i = 0;
        float sum = 0f;
        if (len >= 2 * LANES) {
            FloatVector acc0 = FloatVector.zero(F);
            FloatVector acc1 = FloatVector.zero(F);
            int upper = len - len % (2 * LANES);
            for (; i < upper; i += 2 * LANES) {
                acc0 = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc0);
                acc1 = FloatVector.fromArray(F, a, aOff + i + LANES)
                        .fma(FloatVector.fromArray(F, b, bOff + i + LANES), acc1);
            }
            sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
        }
        for (; i < len; i++) {
            sum = Math.fma(a[aOff + i], b[bOff + i], sum);
        }
        return sum;
    }

    @Override
    public float squareDistance(float[] a, int aOff, float[] b, int bOff, int len) {
        int i = 0;
        float sum = 0f;
        if (len >= 2 * LANES) {
            FloatVector acc0 = FloatVector.zero(F);
            FloatVector acc1 = FloatVector.zero(F);
            int upper = len - len % (2 * LANES);
            for (; i < upper; i += 2 * LANES) {
                FloatVector d0 = FloatVector.fromArray(F, a, aOff + i).sub(FloatVector.fromArray(F, b, bOff + i));
                FloatVector d1 = FloatVector.fromArray(F, a, aOff + i + LANES)
                        .sub(FloatVector.fromArray(F, b, bOff + i + LANES));
                acc0 = d0.fma(d0, acc0);
                acc1 = d1.fma(d1, acc1);
            }
            sum = acc0.add(acc1).reduceLanes(VectorOperators.ADD);
        }
        for (; i < len; i++) {
            float d = a[aOff + i] - b[bOff + i];
            sum = Math.fma(d, d, sum);
        }
        return sum;
    }

    @Override
    public float cosine(float[] a, float[] b) {
        int len = a.length;
        int i = 0;
        float ab = 0f, aa = 0f, bb = 0f;
        if (len >= LANES) {
            FloatVector vab = FloatVector.zero(F);
            FloatVector vaa = FloatVector.zero(F);
            FloatVector vbb = FloatVector.zero(F);
            int upper = F.loopBound(len);
            for (; i < upper; i += LANES) {
                FloatVector x = FloatVector.fromArray(F, a, i);
                FloatVector y = FloatVector.fromArray(F, b, i);
                vab = x.fma(y, vab);
                vaa = x.fma(x, vaa);
                vbb = y.fma(y, vbb);
            }
            ab = vab.reduceLanes(VectorOperators.ADD);
            aa = vaa.reduceLanes(VectorOperators.ADD);
            bb = vbb.reduceLanes(VectorOperators.ADD);
        }
        for (; i < len; i++) {
            ab = Math.fma(a[i], b[i], ab);
            aa = Math.fma(a[i], a[i], aa);
            bb = Math.fma(b[i], b[i], bb);
        }
        return CosineMath.fromParts(ab, aa, bb);
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
        int i = 0;
        int upper = F.loopBound(len);
        for (; i < upper; i += LANES) {
            FloatVector.fromArray(F, v, vOff + i).sub(FloatVector.fromArray(F, c, cOff + i)).intoArray(out, outOff + i);
        }
        for (; i < len; i++) {
            out[outOff + i] = v[vOff + i] - c[cOff + i];
        }
    }

    @Override
    public float pqDistance(float[] table, int ksub, byte[] codes, int codeOff, int m) {
        // A gather per code byte costs more than it saves for the m <= 64 used in practice.
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

    @Override
    public void pqDistanceBatch(float[] table, int ksub, byte[] codes, int codesOff, int count, int m, float[] out, int outOff) {
        for (int v = 0; v < count; v++) {
            out[outOff + v] = pqDistance(table, ksub, codes, codesOff + v * m, m);
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
}
