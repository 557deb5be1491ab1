package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.BitSet;
import java.util.SplittableRandom;
import org.roaringbitmap.RoaringBitmap;

/**
 * The trained codebooks of an IVF-PQ index, kept as exact functions of the training vectors that
 * survive (the influence rule in docs/DESIGN.md).
 *
 * <h2>What each centroid is</h2>
 *
 * Training fixes, once, which centroid each training vector (a <em>member</em>) belongs to: its
 * coarse centroid (the <em>anchor</em> a list is assigned and encoded by) and, per subspace, its PQ
 * sub-centroid. From then on:
 *
 * <ul>
 *   <li>an anchor is the mean of its surviving members;
 *   <li>a sub-centroid {@code (j, c)} is the mean, over the surviving members whose sub-code {@code
 *       j} is {@code c}, of sub-vector {@code j} of their residual to their anchor as it is now;
 *   <li>a centroid with no surviving member is zero (and an anchor with none takes no vectors).
 * </ul>
 *
 * Sums and counts are kept exactly (double-double, see {@link ListSums}), so removing a member
 * moves its anchor and its m sub-centroids to the new means in O(dim) plus, because its anchor
 * moved, one shift per sub-code of the anchor's other members (their residuals moved with it):
 * O(members of the anchor * dim), microseconds. No retrain is needed for the codebooks to carry no
 * trace of a removed vector. Which member went where is the second-order part: a choice made while
 * the removed vector was present, as an HNSW neighbour list is.
 *
 * <p>Derived copies follow every move at once: the anchors' and sub-centroids' ranking layouts
 * ({@link CentroidBlock}) are overwritten in place and the L2 score tables recomputed, so no older
 * copy of a centroid stays reachable. {@link #check} recomputes all of it from the stored vectors.
 *
 * <p>Not thread-safe: the index calls it under its write lock (reads under its read lock).
 */
final class Codebooks {
    final int nlist;
    final int dim;
    final int m;
    final int ksub;
    final int dsub;

    /**
     * Bytes of training sub-codes per member: m with PQ codes, 0 without (OSQ trains anchors only).
     */
    final int cm;

    private final Metric metric;
    private final VectorKernels kernels;

    /** nlist * dim: the anchors (coarse centroids), zero where dead. */
    final float[] anchors;

    final CentroidBlock anchorBlock;

    /** The PQ codebooks; null for OSQ codes (no trained sub-codebook). */
    final ProductQuantizer pq;

    /**
     * nlist * m * ksub: {@code ||c||^2 + 2<anchor_i sub j, c>}; null for the dot metric and OSQ.
     */
    float[] l2Terms;

    private final ListSums anchorSums;
    private final ListSums subSums;

    /** Member index to ordinal. */
    private final int[] memberOrd;

    /** Member index to anchor, -1 once removed. */
    private final int[] memberAnchor;

    /** Member index to its m training sub-codes, zeroed once removed. */
    private final byte[] memberCodes;

    /** Ordinal to member index, -1 where none (or removed). */
    private final int[] memberOf;

    /** Per anchor, the indexes of its surviving members (unordered), and their count. */
    private final int[][] anchorMembers;

    private final int[] anchorMemberCount;
    private final int[] posInAnchor;
    private final RoaringBitmap lineage;
    private final RoaringBitmap lineageRemoved = new RoaringBitmap();

    /** What a batch of member removals moved, for {@link #applyMoves} and the index's follow-up. */
    static final class Moves {
        final BitSet anchors = new BitSet();
        final BitSet rows = new BitSet();
        final BitSet deadAnchors = new BitSet();
        final BitSet deadRows = new BitSet();

        boolean isEmpty() {
            return anchors.isEmpty() && rows.isEmpty();
        }
    }

    /** Where the members' vectors are: a training sample or the index's store. */
    interface MemberVectors {
        float[] block();

        int offset(int member);
    }

    private Codebooks(
            VectorKernels kernels,
            Metric metric,
            int nlist,
            int dim,
            int m,
            int ksub,
            boolean hasPq,
            int[] memberOrd,
            int[] memberAnchor,
            byte[] memberCodes,
            MemberVectors vectors) {
        this.kernels = kernels;
        this.metric = metric;
        this.nlist = nlist;
        this.dim = dim;
        this.m = m;
        this.ksub = ksub;
        this.dsub = dim / m;
        this.cm = hasPq ? m : 0;
        int s = memberOrd.length;
        if (memberCodes.length != (long) s * cm) {
            throw new IllegalArgumentException(
                    "codebooks: expected "
                            + (long) s * cm
                            + " member code bytes, got "
                            + memberCodes.length);
        }
        this.memberOrd = memberOrd;
        this.memberAnchor = memberAnchor;
        this.memberCodes = memberCodes;
        this.lineage = RoaringBitmap.bitmapOf(memberOrd);
        int maxOrd = s == 0 ? 0 : lineage.last();
        this.memberOf = new int[maxOrd + 1];
        Arrays.fill(memberOf, -1);
        this.anchorSums = new ListSums(nlist, dim);
        this.subSums = hasPq ? new ListSums(m * ksub, dsub) : null;
        this.anchorMemberCount = new int[nlist];
        this.posInAnchor = new int[s];
        float[] block = vectors.block();
        for (int i = 0; i < s; i++) {
            if (memberOf[memberOrd[i]] >= 0) {
                throw new IllegalArgumentException(
                        "codebooks: ordinal " + memberOrd[i] + " is a member twice");
            }
            memberOf[memberOrd[i]] = i;
            int a = memberAnchor[i];
            if (a < 0 || a >= nlist) {
                throw new IllegalArgumentException(
                        "codebooks: member "
                                + memberOrd[i]
                                + " names anchor "
                                + a
                                + ", expected [0, "
                                + nlist
                                + ")");
            }
            anchorSums.add(a, block, vectors.offset(i));
            anchorMemberCount[a]++;
        }
        this.anchorMembers = new int[nlist][];
        for (int a = 0; a < nlist; a++) {
            anchorMembers[a] = new int[anchorMemberCount[a]];
            anchorMemberCount[a] = 0;
        }
        for (int i = 0; i < s; i++) {
            int a = memberAnchor[i];
            posInAnchor[i] = anchorMemberCount[a];
            anchorMembers[a][anchorMemberCount[a]++] = i;
        }
        // Anchors first: the sub-centroids are means of residuals to them.
        this.anchors = new float[nlist * dim];
        for (int a = 0; a < nlist; a++) {
            if (anchorSums.count(a) > 0) {
                anchorSums.mean(a, anchors, a * dim);
            }
        }
        for (int i = 0; i < s; i++) {
            int off = vectors.offset(i);
            int a = memberAnchor[i];
            for (int j = 0; j < cm; j++) {
                int row = j * ksub + (memberCodes[i * cm + j] & 0xFF);
                subSums.add(row, block, off + j * dsub);
                subSums.shift(row, anchors, a * dim + j * dsub, -1);
            }
        }
        if (hasPq) {
            float[] codebooks = new float[m * ksub * dsub];
            for (int row = 0; row < m * ksub; row++) {
                if (subSums.count(row) > 0) {
                    subSums.mean(row, codebooks, row * dsub);
                }
            }
            this.pq = new ProductQuantizer(dim, m, ksub, codebooks);
        } else {
            this.pq = null;
        }
        this.anchorBlock = CentroidBlock.of(anchors, 0, nlist, dim);
        for (int a = 0; a < nlist; a++) {
            if (anchorSums.count(a) == 0) {
                anchorBlock.disable(a);
            }
        }
        if (liveAnchors() == 0) {
            throw new IllegalArgumentException("codebooks: no anchor has a member");
        }
        this.l2Terms = metric == Metric.DOT || !hasPq ? null : computeL2Terms();
    }

    /** Which anchor and which sub-codes each sample vector got: what a training decides. */
    record Assignment(int[] anchorOf, byte[] codes) {}

    /**
     * The lock-free part of a training, on a copy of {@code s} sample vectors: k-means of the
     * anchors, each sample vector's anchor fixed, anchors set to their members' means; k-means of
     * each subspace's codebook on the residuals to those anchors, each sub-code fixed. Cost: {@code
     * iterations * s * (nlist + ksub) * dim} multiply-adds. Every intermediate centroid is zeroed
     * before returning; only the assignment leaves.
     *
     * @param sample {@code s * dim} floats (prepared vectors); read, not kept
     * @param phase told the step being run ("coarse k-means", "PQ k-means")
     */
    static Assignment assign(
            VectorKernels kernels,
            IvfPqParams params,
            int dim,
            float[] sample,
            int s,
            SplittableRandom rnd,
            java.util.function.Consumer<String> phase) {
        int nlist = params.nlist();
        int m = params.m();
        int ksub = params.ksub();
        phase.accept("coarse k-means");
        float[] coarse =
                KMeans.train(kernels, sample, s, dim, nlist, params.iterations(), rnd.split());
        int[] anchorOf = KMeans.assign(kernels, sample, s, dim, coarse, nlist);
        float[] anchors = exactMeans(sample, s, dim, anchorOf, nlist);
        if (params.codes() != IvfPqParams.Codes.PQ) {
            Arrays.fill(coarse, 0f);
            Arrays.fill(anchors, 0f);
            return new Assignment(
                    anchorOf, new byte[0]); // OSQ: anchors only, nothing trained per subspace
        }
        float[] residuals = new float[s * dim];
        for (int i = 0; i < s; i++) {
            kernels.subtract(sample, i * dim, anchors, anchorOf[i] * dim, residuals, i * dim, dim);
        }
        phase.accept("PQ k-means");
        ProductQuantizer trained =
                ProductQuantizer.train(
                        kernels, residuals, s, dim, m, ksub, params.iterations(), rnd.split());
        byte[] codes = new byte[s * m];
        int[] scratch = new int[m];
        float[] r = new float[dim];
        for (int i = 0; i < s; i++) {
            System.arraycopy(residuals, i * dim, r, 0, dim);
            trained.encode(kernels, r, scratch, codes, i * m);
        }
        Arrays.fill(residuals, 0f);
        Arrays.fill(r, 0f);
        Arrays.fill(coarse, 0f);
        Arrays.fill(anchors, 0f);
        trained.wipe();
        return new Assignment(anchorOf, codes);
    }

    /**
     * The codebooks an assignment gives: every centroid the exact mean of its members' sample
     * vectors. Cost: one pass over the sample.
     */
    static Codebooks fromSample(
            VectorKernels kernels,
            Metric metric,
            IvfPqParams params,
            int dim,
            float[] sample,
            int[] ords,
            Assignment assignment) {
        return new Codebooks(
                kernels,
                metric,
                params.nlist(),
                dim,
                params.m(),
                params.ksub(),
                params.codes() == IvfPqParams.Codes.PQ,
                ords,
                assignment.anchorOf(),
                assignment.codes(),
                new MemberVectors() {
                    @Override
                    public float[] block() {
                        return sample;
                    }

                    @Override
                    public int offset(int member) {
                        return member * dim;
                    }
                });
    }

    /**
     * Codebooks from their members as a file records them (each member's anchor and sub-codes): the
     * centroids are recomputed as the members' means from the stored vectors, so loaded codebooks
     * are exact by construction.
     */
    static Codebooks fromMembers(
            VectorKernels kernels,
            Metric metric,
            IvfPqParams params,
            int dim,
            SwapRemoveVectors store,
            int[] ords,
            int[] anchorOf,
            byte[] codes) {
        for (int ord : ords) {
            if (!store.contains(ord)) {
                throw new IllegalArgumentException(
                        "codebooks: training member " + ord + " has no stored vector");
            }
        }
        return new Codebooks(
                kernels,
                metric,
                params.nlist(),
                dim,
                params.m(),
                params.ksub(),
                params.codes() == IvfPqParams.Codes.PQ,
                ords,
                anchorOf,
                codes,
                storeVectors(store, ords));
    }

    private static MemberVectors storeVectors(SwapRemoveVectors store, int[] ords) {
        return new MemberVectors() {
            @Override
            public float[] block() {
                return store.block();
            }

            @Override
            public int offset(int member) {
                return store.offset(store.slotOf(ords[member]));
            }
        };
    }

    private static float[] exactMeans(float[] points, int n, int dim, int[] assign, int k) {
        ListSums sums = new ListSums(k, dim);
        for (int i = 0; i < n; i++) {
            sums.add(assign[i], points, i * dim);
        }
        float[] means = new float[k * dim];
        for (int c = 0; c < k; c++) {
            if (sums.count(c) > 0) {
                sums.mean(c, means, c * dim);
            }
        }
        sums.clear();
        return means;
    }

    // ------------------------------------------------------------------ members

    /** Whether {@code ord} is a training member that has not been removed. */
    boolean isMember(int ord) {
        return ord >= 0 && ord < memberOf.length && memberOf[ord] >= 0;
    }

    /** Anchors with at least one surviving member (the others take no vectors). */
    int liveAnchors() {
        int n = 0;
        for (int a = 0; a < nlist; a++) {
            if (anchorSums.count(a) > 0) {
                n++;
            }
        }
        return n;
    }

    boolean isDeadAnchor(int a) {
        return anchorSums.count(a) == 0;
    }

    /** How many vectors the codebooks were trained on. */
    int trainedOn() {
        return lineage.getCardinality();
    }

    /** How many of them have been removed since. */
    int removedMembers() {
        return lineageRemoved.getCardinality();
    }

    RoaringBitmap lineage() {
        return lineage;
    }

    RoaringBitmap lineageRemoved() {
        return lineageRemoved;
    }

    /**
     * Takes a removed vector's contribution out of every centroid it shaped: its sub-codes' sums
     * and its anchor's sum lose it, and, because the anchor moved, every other member's residual
     * moves with it in its sub-codes' sums. The anchor's new value is set at once (later removals
     * in the batch measure from it); sub-centroids and layouts wait for {@link #applyMoves}.
     *
     * @param block the array holding the removed vector (still stored), at {@code off}
     * @return false if {@code ord} is not a surviving member (nothing to do)
     */
    boolean removeMember(int ord, float[] block, int off, Moves moves) {
        if (!isMember(ord)) {
            return false;
        }
        int i = memberOf[ord];
        int a = memberAnchor[i];
        // 1. Its residual (v - anchor) leaves each of its m sub-centroids.
        for (int j = 0; j < cm; j++) {
            int row = j * ksub + (memberCodes[i * cm + j] & 0xFF);
            subSums.subtract(row, block, off + j * dsub);
            if (subSums.count(row) > 0) {
                subSums.shift(row, anchors, a * dim + j * dsub, +1);
            }
            moves.rows.set(row);
        }
        // 2. It leaves its anchor; its record of membership is wiped (its codes are a
        // description of the removed vector).
        anchorSums.subtract(a, block, off);
        int pos = posInAnchor[i];
        int last = --anchorMemberCount[a];
        int movedMember = anchorMembers[a][last];
        anchorMembers[a][pos] = movedMember;
        posInAnchor[movedMember] = pos;
        anchorMembers[a][last] = 0;
        memberOf[ord] = -1;
        memberAnchor[i] = -1;
        posInAnchor[i] = 0;
        Arrays.fill(memberCodes, i * cm, (i + 1) * cm, (byte) 0);
        lineageRemoved.add(ord);
        moves.anchors.set(a);
        // 3. The anchor moves to the survivors' mean, and with it every surviving member's
        // residual: each of their sub-code sums shifts by (old - new).
        float[] old = Arrays.copyOfRange(anchors, a * dim, (a + 1) * dim);
        if (anchorSums.count(a) == 0) {
            Arrays.fill(anchors, a * dim, (a + 1) * dim, 0f);
            moves.deadAnchors.set(a);
        } else {
            anchorSums.mean(a, anchors, a * dim);
            for (int p = 0; p < anchorMemberCount[a]; p++) {
                int k = anchorMembers[a][p];
                for (int j = 0; j < cm; j++) {
                    int row = j * ksub + (memberCodes[k * cm + j] & 0xFF);
                    subSums.shift(row, old, j * dsub, +1);
                    subSums.shift(row, anchors, a * dim + j * dsub, -1);
                    moves.rows.set(row);
                }
            }
        }
        Arrays.fill(old, 0f);
        return true;
    }

    /**
     * Brings every derived copy in line with the moved sums: sub-centroids become their new means
     * (zero when no member is left), the ranking layouts are overwritten in place, and the L2 score
     * tables are recomputed. Cost: O(moved * dim) plus one table computation ({@code nlist * m *
     * ksub * dsub} multiply-adds) when the metric keeps tables.
     */
    void applyMoves(Moves moves) {
        if (moves.isEmpty()) {
            return;
        }
        for (int a = moves.anchors.nextSetBit(0); a >= 0; a = moves.anchors.nextSetBit(a + 1)) {
            if (anchorSums.count(a) == 0) {
                anchorBlock.disable(a);
            } else {
                anchorBlock.set(a, anchors, a * dim);
            }
        }
        float[] codebooks = pq == null ? null : pq.codebooks();
        for (int row = moves.rows.nextSetBit(0); row >= 0; row = moves.rows.nextSetBit(row + 1)) {
            if (subSums.count(row) == 0) {
                Arrays.fill(codebooks, row * dsub, (row + 1) * dsub, 0f);
                moves.deadRows.set(row);
            } else {
                subSums.mean(row, codebooks, row * dsub);
            }
            pq.refresh(row / ksub, row % ksub);
        }
        if (l2Terms != null) {
            float[] next = computeL2Terms();
            Arrays.fill(l2Terms, 0f);
            l2Terms = next;
        }
    }

    /** {@code ||c||^2 + 2 <anchor_i sub j, c>} for every list i, subspace j, centroid c. */
    private float[] computeL2Terms() {
        int mk = m * ksub;
        float[] norms = pq.centroidNorms();
        float[] terms = new float[nlist * mk];
        float[] a = new float[dim];
        float[] dots = new float[mk];
        for (int i = 0; i < nlist; i++) {
            System.arraycopy(anchors, i * dim, a, 0, dim);
            kernels.pqDotTable(a, pq.codebooks(), m, ksub, dots);
            for (int t = 0; t < mk; t++) {
                terms[i * mk + t] = norms[t] + 2 * dots[t];
            }
        }
        Arrays.fill(a, 0f);
        return terms;
    }

    /** Zeroes every centroid, sum, table and membership record (codebooks being replaced). */
    void wipe() {
        Arrays.fill(anchors, 0f);
        anchorBlock.wipe();
        if (pq != null) {
            pq.wipe();
        }
        if (l2Terms != null) {
            Arrays.fill(l2Terms, 0f);
        }
        anchorSums.clear();
        if (subSums != null) {
            subSums.clear();
        }
        Arrays.fill(memberCodes, (byte) 0);
        Arrays.fill(memberAnchor, -1);
        Arrays.fill(memberOf, -1);
    }

    // ------------------------------------------------------------------ persistence

    /** Surviving members' ordinals, anchors and codes, for the file. */
    record Members(int[] ords, int[] anchors, byte[] codes) {}

    Members survivingMembers() {
        int n = memberOrd.length - lineageRemoved.getCardinality();
        int[] ords = new int[n];
        int[] anch = new int[n];
        byte[] codes = new byte[n * cm];
        int k = 0;
        for (int i = 0; i < memberOrd.length; i++) {
            if (memberAnchor[i] >= 0) {
                ords[k] = memberOrd[i];
                anch[k] = memberAnchor[i];
                System.arraycopy(memberCodes, i * cm, codes, k * cm, cm);
                k++;
            }
        }
        return new Members(ords, anch, codes);
    }

    /**
     * Restores the record of which lineage members were removed (a file's, after {@link
     * #fromMembers}).
     */
    void markRemoved(RoaringBitmap removedMembers) {
        lineage.or(removedMembers);
        lineageRemoved.or(removedMembers);
    }

    /** The surviving members of anchor {@code a}, by ordinal (for tests and inspection). */
    int[] anchorMemberOrds(int a) {
        int[] out = new int[anchorMemberCount[a]];
        for (int p = 0; p < out.length; p++) {
            out[p] = memberOrd[anchorMembers[a][p]];
        }
        return out;
    }

    /**
     * The surviving members whose sub-code {@code j} is {@code c}, by ordinal (for tests and
     * inspection).
     */
    int[] subCentroidMemberOrds(int j, int c) {
        return java.util.stream.IntStream.range(0, memberOrd.length)
                .filter(i -> memberAnchor[i] >= 0 && (memberCodes[i * cm + j] & 0xFF) == c)
                .map(i -> memberOrd[i])
                .toArray();
    }

    // ------------------------------------------------------------------ checking

    /**
     * The codebooks' first-order proof, recomputed from the stored vectors: every anchor is the
     * mean of its surviving members, every sub-centroid the mean of its members' residuals to their
     * anchors as they are now, every centroid without members zero (and a dead anchor out of the
     * ranking), removed members' records wiped, the ranking layouts and score tables exactly what
     * the centroids give. Cost: one pass over the members plus one table computation.
     *
     * @return the largest relative deviation of a centroid from its recomputed mean
     */
    double check(IntegrityReport.Builder r, SwapRemoveVectors store, double tolerance) {
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
                if (memberOf[ord] >= 0 || !lineageRemoved.contains(ord)) {
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
            if (memberOf[ord] != i || lineageRemoved.contains(ord)) {
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
            if (aCount[a] != anchorSums.count(a)) {
                r.violation(
                        "member-count-mismatch",
                        "anchor "
                                + a
                                + ": "
                                + aCount[a]
                                + " members, sum counts "
                                + anchorSums.count(a));
            }
            if (aCount[a] == 0) {
                if (!allZero(anchors, a * dim, dim) || !anchorBlock.isDisabled(a)) {
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
            if (!anchorBlock.holds(a, anchors, a * dim)) {
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
            if (sCount[row] != subSums.count(row)) {
                r.violation(
                        "member-count-mismatch",
                        "sub-centroid "
                                + row
                                + ": "
                                + sCount[row]
                                + " members, sum counts "
                                + subSums.count(row));
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
        if (metric != Metric.DOT && pq != null) {
            float[] expected = computeL2Terms();
            if (!Arrays.equals(expected, l2Terms)) {
                r.violation("stale-score-table", "L2 tables differ from the current centroids");
            }
            Arrays.fill(expected, 0f);
        }
        r.checked("codebook-members", members)
                .checked("codebook-centroids", nlist + (long) cm * ksub)
                .checked(
                        "codebook-members-removed-and-subtracted",
                        lineageRemoved.getLongCardinality());
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
