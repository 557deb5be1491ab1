package dev.nepenthe.ivfpq;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import java.util.Arrays;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The integrity checker of {@link IvfPqIndex}: what {@link IvfPqIndex#verifyIntegrity()} and {@link
 * IvfPqIndex#inspect()} run (under the index's read lock). It recomputes, rather than trusts: list
 * means from the stored vectors, list membership from the lists themselves, the codebooks'
 * centroids from their surviving training members ({@link CodebooksChecker#check}). Cost: one pass
 * over every stored vector and every list entry, plus one over the training members.
 *
 * <p>Only damage is a violation. A removed training member is not: its contribution has been
 * subtracted, and the count of such members is reported among the things checked.
 */
final class IvfPqChecker {
    private IvfPqChecker() {}

    static IvfPqIndex.Inspection inspect(IvfPqIndex index) {
        IntegrityReport.Builder r =
                IntegrityReport.builder(IvfPqIndex.KIND)
                        .expect("vector-map-mismatch")
                        .expect("freed-vector-not-zeroed")
                        .expect("removed-ordinal-live")
                        .expect("removed-ordinal-in-list")
                        .expect("list-entry-not-live")
                        .expect("duplicate-list-entry")
                        .expect("list-position-mismatch")
                        .expect("freed-code-not-zeroed")
                        .expect("code-count-mismatch")
                        .expect("sum-count-mismatch")
                        .expect("centroid-not-mean")
                        .expect("empty-list-centroid-not-anchor")
                        .expect("list-of-dead-anchor")
                        .expect("member-record-mismatch")
                        .expect("removed-member-not-wiped")
                        .expect("member-not-live")
                        .expect("member-count-mismatch")
                        .expect("codebook-centroid-not-mean")
                        .expect("dead-centroid-not-zero")
                        .expect("stale-centroid-layout")
                        .expect("stale-score-table")
                        .expect("centre-not-mean")
                        .expect("centre-of-empty-list");
        double worst = 0;
        int worstList = -1;
        SwapRemoveVectors store = index.store();
        RoaringBitmap removed = index.removedOrdinals();
        int dim = index.dimension();
        int n = store.size();
        if (!store.mapsAgree()) {
            r.violation(
                    "vector-map-mismatch", "slot and ordinal maps of the vector store disagree");
        }
        long dirty = store.nonZeroFreedFloats();
        if (dirty > 0) {
            r.violation(
                    "freed-vector-not-zeroed",
                    dirty + " non-zero floats beyond " + n + " live slots");
        }
        IntIterator rit = removed.getIntIterator();
        while (rit.hasNext()) {
            int ord = rit.next();
            if (store.contains(ord)) {
                r.violation("removed-ordinal-live", "ordinal " + ord);
            }
        }
        r.checked("vectors", n).checked("removed-ordinals", removed.getLongCardinality());
        if (index.trainedState() == null) {
            r.checked("lists", 0);
            return new IvfPqIndex.Inspection(r.build(), 0, -1);
        }
        TrainedState st = index.trainedState();
        int nlist = index.params().nlist();
        float[] routing = st.routing;
        float[] anchors = index.anchors();
        Codebooks cb = index.codebooks();
        RoaringBitmap seen = new RoaringBitmap();
        long codes = 0;
        double[] mean = new double[dim];
        for (int list = 0; list < nlist; list++) {
            InvertedList il = st.lists[list];
            int size = il.size();
            codes += size;
            if (size > 0 && cb.isDeadAnchor(list)) {
                r.violation("list-of-dead-anchor", "list " + list + " holds " + size + " entries");
            }
            long freed = il.nonZeroFreedBytes();
            if (freed > 0) {
                r.violation(
                        "freed-code-not-zeroed", "list " + list + ": " + freed + " non-zero bytes");
            }
            if (st.sums.count(list) != size) {
                r.violation(
                        "sum-count-mismatch",
                        "list " + list + " holds " + size + ", sum counts " + st.sums.count(list));
            }
            Arrays.fill(mean, 0);
            double normSum = 0;
            int counted = 0;
            for (int pos = 0; pos < size; pos++) {
                int ord = il.ordinalAt(pos);
                if (removed.contains(ord)) {
                    r.violation("removed-ordinal-in-list", "ordinal " + ord + " in list " + list);
                }
                if (!store.contains(ord)) {
                    r.violation("list-entry-not-live", "ordinal " + ord + " in list " + list);
                    continue;
                }
                if (!seen.checkedAdd(ord)) {
                    r.violation(
                            "duplicate-list-entry",
                            "ordinal " + ord + " (again in list " + list + ")");
                }
                if (st.mappedList(ord) != list || st.mappedPos(ord) != pos) {
                    r.violation(
                            "list-position-mismatch",
                            "ordinal " + ord + " at list " + list + " pos " + pos);
                }
                int off = store.offset(store.slotOf(ord));
                float[] block = store.block();
                double sq = 0;
                for (int d = 0; d < dim; d++) {
                    mean[d] += block[off + d];
                    sq += (double) block[off + d] * block[off + d];
                }
                normSum += Math.sqrt(sq);
                counted++;
            }
            if (counted == 0) {
                if (size == 0
                        && !Arrays.equals(
                                routing,
                                list * dim,
                                (list + 1) * dim,
                                anchors,
                                list * dim,
                                (list + 1) * dim)) {
                    r.violation("empty-list-centroid-not-anchor", "list " + list);
                }
                continue;
            }
            // The deviation is relative to the mean's norm, floored at a thousandth of the
            // members' average norm so a mean near the origin does not blow it up.
            double diff = 0;
            double norm = 0;
            for (int d = 0; d < dim; d++) {
                double mu = mean[d] / counted;
                double delta = routing[list * dim + d] - mu;
                diff += delta * delta;
                norm += mu * mu;
            }
            double dev = Math.sqrt(diff) / Math.max(Math.sqrt(norm), 1e-3 * normSum / counted);
            if (dev > worst) {
                worst = dev;
                worstList = list;
            }
            if (dev > IvfPqIndex.CENTROID_TOLERANCE) {
                r.violation(
                        "centroid-not-mean",
                        "list " + list + " deviates by " + dev + " (relative)");
            }
        }
        if (codes != n || seen.getLongCardinality() != n) {
            r.violation(
                    "code-count-mismatch",
                    codes
                            + " codes in lists, "
                            + seen.getLongCardinality()
                            + " distinct live ordinals, "
                            + n
                            + " live vectors");
        }
        double codebookWorst = CodebooksChecker.check(cb, r, store, IvfPqIndex.CENTROID_TOLERANCE);
        if (st.osq != null) {
            codebookWorst = Math.max(codebookWorst, checkCentres(r, st, store, dim));
        }
        r.checked("lists", nlist)
                .checked("codes", codes)
                .checked(
                        "max-centroid-deviation-ppb",
                        (long) Math.ceil(Math.max(worst, codebookWorst) * 1e9));
        return new IvfPqIndex.Inspection(r.build(), worst, worstList);
    }

    /**
     * OSQ: every non-empty list's centre is the mean of its first {@code centreMembers} entries,
     * recomputed from the stored vectors (so of live vectors only: a removal re-encodes the list
     * against its survivors); an empty list has none.
     *
     * @return the largest relative deviation of a centre from its members' mean
     */
    private static double checkCentres(
            IntegrityReport.Builder r, TrainedState st, SwapRemoveVectors store, int dim) {
        double worst = 0;
        double[] sum = new double[dim];
        for (int list = 0; list < st.lists.length; list++) {
            InvertedList il = st.lists[list];
            ScalarCodes.Centre centre = st.centres[list];
            if (il.size() == 0) {
                if (centre != null) {
                    r.violation("centre-of-empty-list", "list " + list);
                }
                continue;
            }
            int members = st.centreMembers[list];
            if (centre == null || members < 1 || members > il.size()) {
                r.violation(
                        "centre-not-mean",
                        "list "
                                + list
                                + ": centre of "
                                + members
                                + " members, list holds "
                                + il.size());
                continue;
            }
            Arrays.fill(sum, 0);
            double normSum = 0;
            float[] block = store.block();
            for (int pos = 0; pos < members; pos++) {
                int slot = store.slotOf(il.ordinalAt(pos));
                if (slot < 0) {
                    continue; // counted as list-entry-not-live above
                }
                int off = store.offset(slot);
                double sq = 0;
                for (int d = 0; d < dim; d++) {
                    sum[d] += block[off + d];
                    sq += (double) block[off + d] * block[off + d];
                }
                normSum += Math.sqrt(sq);
            }
            double dev =
                    CodebooksChecker.deviation(sum, 0, centre.centroid(), 0, dim, members, normSum);
            worst = Math.max(worst, dev);
            if (dev > IvfPqIndex.CENTROID_TOLERANCE) {
                r.violation(
                        "centre-not-mean", "list " + list + " deviates by " + dev + " (relative)");
            }
        }
        r.checked("centres", st.lists.length);
        return worst;
    }
}
