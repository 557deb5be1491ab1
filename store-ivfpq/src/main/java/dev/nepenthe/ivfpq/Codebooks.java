package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.BitSet;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;
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
 * copy of a centroid stays reachable. {@link CodebooksChecker} recomputes all of it from the stored
 * vectors.
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

    final Metric metric;
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

    final ListSums anchorSums;
    final ListSums subSums;

    /** Member index to ordinal. */
    final int[] memberOrd;

    /** Member index to anchor, -1 once removed. */
    final int[] memberAnchor;

    /** Member index to its m training sub-codes, zeroed once removed. */
    final byte[] memberCodes;

    /** Ordinal to member index, -1 where none (or removed). */
    final int[] memberOf;

    /** Per anchor, the indexes of its surviving members (unordered), and their count. */
    private final int[][] anchorMembers;

    private final int[] anchorMemberCount;
    private final int[] posInAnchor;
    private final RoaringBitmap lineage;
    final RoaringBitmap lineageRemoved = new RoaringBitmap();

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
    private static final class MemberVectors {
        final float[] block;
        final IntUnaryOperator offsetOf;

        MemberVectors(float[] block, IntUnaryOperator offsetOf) {
            this.block = block;
            this.offsetOf = offsetOf;
        }

        int offset(int member) {
            return offsetOf.applyAsInt(member);
        }
    }

    private Codebooks(
            VectorKernels kernels,
            Metric metric,
            IvfPqParams params,
            int dim,
            int[] memberOrd,
            Assignment assignment,
            MemberVectors vectors) {
        boolean hasPq = params.codes() == IvfPqParams.Codes.PQ;
        int[] memberAnchor = assignment.anchorOf();
        byte[] memberCodes = assignment.codes();
        this.kernels = kernels;
        this.metric = metric;
        this.nlist = params.nlist();
        this.dim = dim;
        this.m = params.m();
        this.ksub = params.ksub();
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
        float[] block = vectors.block;
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
        MemberVectors vectors = new MemberVectors(sample, member -> member * dim);
        return new Codebooks(kernels, metric, params, dim, ords, assignment, vectors);
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
        MemberVectors vectors =
                new MemberVectors(
                        store.block(), member -> store.offset(store.slotOf(ords[member])));
        Assignment recorded = new Assignment(anchorOf, codes);
        return new Codebooks(kernels, metric, params, dim, ords, recorded, vectors);
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
    float[] computeL2Terms() {
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
    @SuppressWarnings("ArrayRecordComponent") // handed to the file writer once, never compared
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
        return IntStream.range(0, memberOrd.length)
                .filter(i -> memberAnchor[i] >= 0 && (memberCodes[i * cm + j] & 0xFF) == c)
                .map(i -> memberOrd[i])
                .toArray();
    }
}
