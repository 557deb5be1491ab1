package dev.nepenthe.ivfpq;

import java.util.Arrays;

/**
 * Per row (a list, a coarse centroid, a PQ sub-centroid), the exact-as-practical sum of its
 * members' vectors and their count, so each row's centroid is always the mean of its current
 * members: an insert adds, a removal subtracts.
 *
 * <p>Each component is a double-double (a high double plus the rounding error of every addition,
 * captured with Knuth's TwoSum), about 106 bits: after millions of adds and subtracts of float
 * vectors the sum still differs from the true one by far less than one float ulp of the mean. When
 * a list empties its sum is reset to exact zero, so no rounding residue of its former members
 * survives.
 */
final class ListSums {
    private final int dim;
    private final double[] hi;
    private final double[] lo;
    private final int[] counts;

    ListSums(int nlist, int dim) {
        this.dim = dim;
        this.hi = new double[nlist * dim];
        this.lo = new double[nlist * dim];
        this.counts = new int[nlist];
    }

    int count(int list) {
        return counts[list];
    }

    void add(int list, float[] v, int vOff) {
        accumulate(list, v, vOff, 1.0);
        counts[list]++;
    }

    void subtract(int list, float[] v, int vOff) {
        counts[list]--;
        if (counts[list] == 0) {
            Arrays.fill(hi, list * dim, (list + 1) * dim, 0.0);
            Arrays.fill(lo, list * dim, (list + 1) * dim, 0.0);
        } else {
            accumulate(list, v, vOff, -1.0);
        }
    }

    /**
     * Adds {@code sign * v} to the row's sum without counting a member: what moves a sum of
     * residuals when the point they are measured from moves (every member's residual shifts).
     */
    void shift(int list, float[] v, int vOff, double sign) {
        accumulate(list, v, vOff, sign);
    }

    private void accumulate(int list, float[] v, int vOff, double sign) {
        int base = list * dim;
        for (int d = 0; d < dim; d++) {
            double x = sign * v[vOff + d];
            double a = hi[base + d];
            // TwoSum: s + err == a + x exactly.
            double s = a + x;
            double bb = s - a;
            double err = (a - (s - bb)) + (x - bb);
            hi[base + d] = s;
            lo[base + d] += err;
        }
    }

    /**
     * Writes the mean of list {@code list}'s members into {@code out[outOff, outOff+dim)}; the list
     * must be non-empty.
     */
    void mean(int list, float[] out, int outOff) {
        int base = list * dim;
        double n = counts[list];
        for (int d = 0; d < dim; d++) {
            out[outOff + d] = (float) ((hi[base + d] + lo[base + d]) / n);
        }
    }

    void clear() {
        Arrays.fill(hi, 0);
        Arrays.fill(lo, 0);
        Arrays.fill(counts, 0);
    }
}
