package dev.nepenthe.core.internal.vector;

import dev.nepenthe.core.vector.VectorKernels;

/**
 * What the two twins compute the same way: the PQ distance sums, table look-ups in scalar code in
 * both, since a gather per code byte costs more than it saves at the m of 8 to 64 used in practice.
 * {@link ScalarKernels} and {@link PanamaKernels} extend it, so the sums have one home.
 */
abstract class SharedKernels implements VectorKernels {

    @Override
    public float pqDistance(float[] table, int ksub, byte[] codes, int codeOff, int m) {
        return pqSum(table, ksub, codes, codeOff, m);
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
        pqSumBatch(table, ksub, codes, codesOff, count, m, out, outOff);
    }

    /** Table look-up sum: two sums halve the add chain. */
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
     * independent, so the CPU overlaps their loads instead of waiting on one chain of adds (the
     * scan over an inverted list is load-latency bound). Each code keeps pqSum's even/odd
     * accumulators, so every result is bit-identical to {@code pqSum} on that code.
     */
    static void pqSumBatch(
            float[] table,
            int ksub,
            byte[] codes,
            int codesOff,
            int count,
            int m,
            float[] out,
            int outOff) {
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
}
