package dev.nepenthe.core.internal.vector;

import static dev.nepenthe.core.internal.vector.PanamaOrder.F8;
import static dev.nepenthe.core.internal.vector.PanamaOrder.halve8;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorShuffle;

/**
 * A query's PQ tables (squared distances or dot products to every centroid of every subspace) on
 * exactly eight lanes (256 bits): the sub-vectors they see are short (dsub of 1 to 16 is typical),
 * and eight centroids per output vector keeps every intermediate in a register on AVX2 and AVX-512
 * alike. Where 256-bit vectors are not native (NEON's 128 bits) {@link PanamaKernels} uses the
 * scalar twin's per-centroid entries instead.
 */
final class PanamaTables {

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

    /** The twin's table entry, for the centroids and sub-vector lengths not grouped here. */
    private static final ScalarKernels SCALAR = new ScalarKernels();

    private PanamaTables() {}

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
     *       instead made C2 give up inlining and box every vector; see docs/BENCHMARKS.md.)
     *   <li>any other dsub, and the last {@code ksub % 8} centroids: one centroid at a time,
     *       through the scalar twin's table entry (the same order).
     * </ol>
     */
    static void pqTable(
            float[] query, float[] codebooks, int m, int ksub, float[] table, boolean l2) {
        int dsub = query.length / m;
        boolean grouped =
                PanamaKernels.TABLES_VECTORIZED
                        && (dsub == 1 || dsub == 2 || dsub == 4 || dsub % 8 == 0);
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
            table[tOff + c] = halve8(acc);
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
}
