package dev.nepenthe.ivfpq;

import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.BitSet;

/**
 * Everything an IVF-PQ index has once trained: the codebooks, the inverted lists, each list's
 * exact sum and routing centroid, and the ordinal maps. The index serves from one; a training
 * in progress builds the next one beside it and keeps it current with every removal until the
 * swap. Not thread-safe: the index guards it with its lock.
 */
final class TrainedState {
    final Codebooks cb;
    final float[] routing; // nlist * dim: mean of members, or the anchor for an empty list
    final InvertedList[] lists;
    final ListSums sums;
    int[] ordToList; // -1 where not in a list
    int[] ordToPos;
    private final int dim;
    private final int m;
    private final VectorKernels kernels;
    private final SwapRemoveVectors store;

    TrainedState(Codebooks cb, VectorKernels kernels, SwapRemoveVectors store, int ordinalCapacity) {
        this.cb = cb;
        this.kernels = kernels;
        this.store = store;
        this.dim = cb.dim;
        this.m = cb.m;
        this.routing = cb.anchors.clone();
        this.lists = new InvertedList[cb.nlist];
        for (int i = 0; i < lists.length; i++) {
            lists[i] = new InvertedList(m);
        }
        this.sums = new ListSums(cb.nlist, dim);
        this.ordToList = new int[Math.max(16, ordinalCapacity)];
        this.ordToPos = new int[ordToList.length];
        Arrays.fill(ordToList, -1);
    }

    /** Whether {@code ord} has an entry in a list. */
    boolean holds(int ord) {
        return ord >= 0 && ord < ordToList.length && ordToList[ord] >= 0;
    }

    /**
     * Puts {@code ord} (its prepared vector at {@code block[off]}) into the list with the
     * nearest live anchor and encodes its residual. Steps: 1. nearest anchor; 2. residual to it;
     * 3. PQ code; 4. append; 5. add to the list's sum and move its routing centroid.
     */
    void insert(int ord, float[] block, int off) {
        int[] scratch = new int[Math.max(1, m)];
        kernels.nearest(block, off, 1, cb.anchorBlock, scratch, 0);
        int list = scratch[0];
        append(list, ord, block, off, scratch);
    }

    /** Appends {@code ord} to {@code list}, encoded against that list's anchor. */
    void append(int list, int ord, float[] block, int off, int[] scratch) {
        float[] residual = new float[dim];
        byte[] code = new byte[m];
        kernels.subtract(block, off, cb.anchors, list * dim, residual, 0, dim);
        cb.pq.encode(kernels, residual, scratch, code, 0);
        Arrays.fill(residual, 0f);
        int pos = lists[list].append(ord, code, 0);
        ensureOrdinalArrays(ord + 1);
        ordToList[ord] = list;
        ordToPos[ord] = pos;
        sums.add(list, block, off);
        refreshRouting(list);
    }

    /** Appends {@code ord} to {@code list} with a code already made (a file's), adding its vector to the sum. */
    void appendEncoded(int list, int ord, byte[] codes, int codeOff, float[] block, int off) {
        int pos = lists[list].append(ord, codes, codeOff);
        ensureOrdinalArrays(ord + 1);
        ordToList[ord] = list;
        ordToPos[ord] = pos;
        sums.add(list, block, off);
        refreshRouting(list);
    }

    /**
     * Takes a vector that is about to leave the store out of this state: its list entry (bytes
     * zeroed) and sum, and every codebook centroid it trained ({@link Codebooks#removeMember}).
     * Follow a batch with {@link #finish}.
     */
    void forget(int ord, float[] block, int off, Codebooks.Moves moves) {
        if (holds(ord)) {
            int list = ordToList[ord];
            int pos = ordToPos[ord];
            int moved = lists[list].removeAt(pos);
            if (moved >= 0) {
                ordToPos[moved] = pos;
            }
            ordToList[ord] = -1;
            ordToPos[ord] = 0;
            sums.subtract(list, block, off);
            refreshRouting(list);
        }
        cb.removeMember(ord, block, off, moves);
    }

    /**
     * After a batch of {@link #forget}s: moved centroids reach their layouts and tables; a list
     * whose anchor lost its last member moves to the nearest live anchors (re-encoded there);
     * codes naming a sub-centroid that lost its last member are re-encoded in that subspace.
     *
     * @return false when no anchor has a member left: the state cannot assign anything and must
     *     be dropped (retrain or go flat)
     */
    boolean finish(Codebooks.Moves moves) {
        cb.applyMoves(moves);
        if (cb.liveAnchors() == 0) {
            return false;
        }
        for (int a = moves.anchors.nextSetBit(0); a >= 0; a = moves.anchors.nextSetBit(a + 1)) {
            if (moves.deadAnchors.get(a)) {
                rehome(a);
            }
            refreshRouting(a);
        }
        if (!moves.deadRows.isEmpty()) {
            reencodeDeadRows(moves.deadRows);
        }
        return true;
    }

    /** Moves every entry of a list whose anchor died to the list of its nearest live anchor. */
    private void rehome(int list) {
        InvertedList il = lists[list];
        while (il.size() > 0) {
            int pos = il.size() - 1;
            int ord = il.ordinalAt(pos);
            il.removeAt(pos);
            int off = store.offset(store.slotOf(ord));
            sums.subtract(list, store.block(), off);
            ordToList[ord] = -1;
            insert(ord, store.block(), off);
        }
    }

    /**
     * Re-encodes, in the one subspace concerned, every code that names a sub-centroid left
     * without members (it is zero now: data-independent, but a poor reconstruction). One pass
     * over the codes' bytes.
     */
    private void reencodeDeadRows(BitSet deadRows) {
        int ksub = cb.ksub;
        int dsub = cb.dsub;
        float[] residual = new float[dim];
        int[] scratch = new int[1];
        for (int list = 0; list < lists.length; list++) {
            InvertedList il = lists[list];
            byte[] codes = il.codes();
            for (int pos = 0; pos < il.size(); pos++) {
                for (int j = 0; j < m; j++) {
                    if (!deadRows.get(j * ksub + (codes[pos * m + j] & 0xFF))) {
                        continue;
                    }
                    int off = store.offset(store.slotOf(il.ordinalAt(pos)));
                    kernels.subtract(store.block(), off + j * dsub, cb.anchors, list * dim + j * dsub, residual,
                            j * dsub, dsub);
                    il.setCodeByte(pos, j, (byte) cb.pq.encodeSubspace(kernels, residual, j, scratch));
                }
            }
        }
        Arrays.fill(residual, 0f);
    }

    void refreshRouting(int list) {
        if (sums.count(list) == 0) {
            System.arraycopy(cb.anchors, list * dim, routing, list * dim, dim);
        } else {
            sums.mean(list, routing, list * dim);
        }
    }

    private void ensureOrdinalArrays(int n) {
        if (ordToList.length < n) {
            int old = ordToList.length;
            int cap = Math.max(n, old + (old >> 1) + 16);
            ordToList = Arrays.copyOf(ordToList, cap);
            ordToPos = Arrays.copyOf(ordToPos, cap);
            Arrays.fill(ordToList, old, cap, -1);
        }
    }

    /** Zeroes every structure (the state being replaced or dropped). */
    void wipe() {
        cb.wipe();
        Arrays.fill(routing, 0f);
        sums.clear();
        for (InvertedList l : lists) {
            while (l.size() > 0) {
                l.removeAt(l.size() - 1);
            }
        }
        Arrays.fill(ordToList, -1);
        Arrays.fill(ordToPos, 0);
    }
}
