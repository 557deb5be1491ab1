package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import java.util.Arrays;

/**
 * The proof that {@link Codebooks} hold what they claim: every centroid recomputed from the stored
 * vectors of its surviving members and compared. Apart from the codebooks so that what they keep up
 * to date and what checks it are not the same code: a bug in one shows in the other.
 */
final class CodebooksChecker {
    private CodebooksChecker() {}

    /**
     * The codebooks' first-order proof, recomputed from the stored vectors: every anchor is the
     * mean of its surviving members, every sub-centroid the mean of its members' residuals to their
     * anchors as they are now, every centroid without members zero (and a dead anchor out of the
     * ranking), removed members' records wiped, the ranking layouts and score tables exactly what
     * the centroids give. Cost: one pass over the members plus one table computation.
     *
     * @return the largest relative deviation of a centroid from its recomputed mean
     */
    static double check(
            Codebooks cb, IntegrityReport.Builder r, SwapRemoveVectors store, double tolerance) {
        int nlist = cb.nlist;
        int dim = cb.dim;
        int m = cb.m;
        int ksub = cb.ksub;
        int dsub = cb.dsub;
        int cm = cb.cm;
        int[] memberOrd = cb.memberOrd;
        int[] memberAnchor = cb.memberAnchor;
        int[] memberOf = cb.memberOf;
        byte[] memberCodes = cb.memberCodes;
        float[] anchors = cb.anchors;
        ProductQuantizer pq = cb.pq;
        int s = memberOrd.length;
        double[] aSum = new double[nlist * dim];
        double[] aNorm = new double[nlist];
        int[] aCount = new int[nlist];
        double[] sSum = new double[m * ksub * dsub];
        double[] sNorm = new double[m * ksub];
        int[] sCount = new int[m * ksub];
        float[] block = store.block();
        long members = 0;
        for (int i = 0; i < s; i++) {
            int ord = memberOrd[i];
            int a = memberAnchor[i];
            if (a < 0) {
                if (memberOf[ord] >= 0 || !cb.lineageRemoved.contains(ord)) {
                    r.violation(
                            "member-record-mismatch", "removed member " + ord + " still mapped");
                }
                for (int j = 0; j < cm; j++) {
                    if (memberCodes[i * cm + j] != 0) {
                        r.violation("removed-member-not-wiped", "member " + ord);
                        break;
                    }
                }
                continue;
            }
            if (memberOf[ord] != i || cb.lineageRemoved.contains(ord)) {
                r.violation("member-record-mismatch", "member " + ord);
            }
            int slot = store.slotOf(ord);
            if (slot < 0) {
                r.violation(
                        "member-not-live",
                        "codebooks count removed ordinal " + ord + " as a member");
                continue;
            }
            members++;
            int off = store.offset(slot);
            double sq = 0;
            for (int d = 0; d < dim; d++) {
                aSum[a * dim + d] += block[off + d];
                sq += (double) block[off + d] * block[off + d];
            }
            aNorm[a] += Math.sqrt(sq);
            aCount[a]++;
        }
        double worst = 0;
        for (int a = 0; a < nlist; a++) {
            if (aCount[a] != cb.anchorSums.count(a)) {
                r.violation(
                        "member-count-mismatch",
                        "anchor "
                                + a
                                + ": "
                                + aCount[a]
                                + " members, sum counts "
                                + cb.anchorSums.count(a));
            }
            if (aCount[a] == 0) {
                if (!allZero(anchors, a * dim, dim) || !cb.anchorBlock.isDisabled(a)) {
                    r.violation("dead-centroid-not-zero", "anchor " + a);
                }
                continue;
            }
            double dev = deviation(aSum, a * dim, anchors, a * dim, dim, aCount[a], aNorm[a]);
            worst = Math.max(worst, dev);
            if (dev > tolerance) {
                r.violation(
                        "codebook-centroid-not-mean",
                        "anchor " + a + " deviates by " + dev + " (relative)");
            }
            if (!cb.anchorBlock.holds(a, anchors, a * dim)) {
                r.violation("stale-centroid-layout", "anchor " + a);
            }
        }
        // Residuals are measured from the anchors as they are now, in double: exact for floats.
        for (int i = 0; i < s; i++) {
            int a = memberAnchor[i];
            int slot = a < 0 ? -1 : store.slotOf(memberOrd[i]);
            if (slot < 0) {
                continue;
            }
            int off = store.offset(slot);
            for (int j = 0; j < cm; j++) {
                int row = j * ksub + (memberCodes[i * cm + j] & 0xFF);
                double sq = 0;
                for (int d = 0; d < dsub; d++) {
                    double x = (double) block[off + j * dsub + d] - anchors[a * dim + j * dsub + d];
                    sSum[row * dsub + d] += x;
                    sq += x * x;
                }
                sNorm[row] += Math.sqrt(sq);
                sCount[row]++;
            }
        }
        float[] codebooks = pq == null ? new float[0] : pq.codebooks();
        for (int row = 0; pq != null && row < m * ksub; row++) {
            if (sCount[row] != cb.subSums.count(row)) {
                r.violation(
                        "member-count-mismatch",
                        "sub-centroid "
                                + row
                                + ": "
                                + sCount[row]
                                + " members, sum counts "
                                + cb.subSums.count(row));
            }
            if (sCount[row] == 0) {
                if (!allZero(codebooks, row * dsub, dsub)) {
                    r.violation("dead-centroid-not-zero", "sub-centroid " + row);
                }
            } else {
                double dev =
                        deviation(
                                sSum,
                                row * dsub,
                                codebooks,
                                row * dsub,
                                dsub,
                                sCount[row],
                                sNorm[row]);
                worst = Math.max(worst, dev);
                if (dev > tolerance) {
                    r.violation(
                            "codebook-centroid-not-mean",
                            "sub-centroid " + row + " deviates by " + dev + " (relative)");
                }
            }
            if (!pq.layoutHolds(row / ksub, row % ksub)) {
                r.violation("stale-centroid-layout", "sub-centroid " + row);
            }
        }
        if (cb.metric != Metric.DOT && pq != null) {
            float[] expected = cb.computeL2Terms();
            if (!Arrays.equals(expected, cb.l2Terms)) {
                r.violation("stale-score-table", "L2 tables differ from the current centroids");
            }
            Arrays.fill(expected, 0f);
        }
        r.checked("codebook-members", members)
                .checked("codebook-centroids", nlist + (long) cm * ksub)
                .checked(
                        "codebook-members-removed-and-subtracted",
                        cb.lineageRemoved.getLongCardinality());
        return worst;
    }

    private static boolean allZero(float[] a, int off, int len) {
        for (int i = 0; i < len; i++) {
            if (a[off + i] != 0f) {
                return false;
            }
        }
        return true;
    }

    /**
     * How far {@code actual} is from {@code sum / count}, relative to the mean's norm floored at a
     * thousandth of the members' average norm (so a mean near the origin does not blow it up).
     */
    static double deviation(
            double[] sum, int sumOff, float[] actual, int off, int len, int count, double normSum) {
        double diff = 0;
        double norm = 0;
        for (int d = 0; d < len; d++) {
            double mu = sum[sumOff + d] / count;
            double delta = actual[off + d] - mu;
            diff += delta * delta;
            norm += mu * mu;
        }
        double floor = Math.max(1e-3 * normSum / count, Double.MIN_NORMAL);
        return Math.sqrt(diff) / Math.max(Math.sqrt(norm), floor);
    }
}
