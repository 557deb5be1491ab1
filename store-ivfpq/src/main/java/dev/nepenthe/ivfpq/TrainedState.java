package dev.nepenthe.ivfpq;

import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.BitSet;

/**
 * Everything an IVF-PQ index has once trained: the codebooks, the inverted lists, each list's exact
 * sum and routing centroid, and the ordinal maps. The index serves from one; a training in progress
 * builds the next one beside it and keeps it current with every removal until the swap. Not
 * thread-safe: the index guards it with its lock.
 *
 * <h2>OSQ codes</h2>
 *
 * With {@link IvfPqParams.Codes#OSQ} each list keeps a <em>centre</em> its entries are encoded
 * against: the exact mean of the list's first {@code centreMembers} entries, all live. A removal
 * re-encodes the list against the mean of its survivors (so no centre ever includes a removed
 * vector); an add encodes against the centre as it is, and a list that has doubled since its centre
 * was set is re-encoded against its current mean (amortised O(1) per add). Between re-encodings
 * only appends happen, which is why the centre's members are a prefix of the list.
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

    /** OSQ codes, or null for PQ. */
    final ScalarCodes osq;

    /** Per list, with OSQ: the centre its entries are encoded against (null while empty). */
    final ScalarCodes.Centre[] centres;

    /** Per list, with OSQ: how many of its first entries the centre is the mean of. */
    final int[] centreMembers;

    private final ScalarEncoder encoder;

    /** Lists a removal left to re-encode against their survivors' mean ({@link #finish}). */
    private final BitSet dirty = new BitSet();

    TrainedState(
            Codebooks cb,
            VectorKernels kernels,
            SwapRemoveVectors store,
            int ordinalCapacity,
            ScalarCodes osq) {
        this.cb = cb;
        this.kernels = kernels;
        this.store = store;
        this.dim = cb.dim;
        this.m = cb.m;
        this.osq = osq;
        this.centres = osq == null ? null : new ScalarCodes.Centre[cb.nlist];
        this.centreMembers = osq == null ? null : new int[cb.nlist];
        this.encoder = osq == null ? null : osq.encoder();
        this.routing = cb.anchors.clone();
        this.lists = new InvertedList[cb.nlist];
        int entryBytes = osq == null ? m : osq.bytesPerVector();
        for (int i = 0; i < lists.length; i++) {
            lists[i] = new InvertedList(entryBytes);
        }
        this.sums = new ListSums(cb.nlist, dim);
        this.ordToList = new int[Math.max(16, ordinalCapacity)];
        this.ordToPos = new int[ordToList.length];
        Arrays.fill(ordToList, -1);
    }

    /**
     * The state a file describes: the codebooks (recomputed from their members' stored vectors) and
     * the list entries (codes as written); the ordinal maps, the sums and the routing centroids are
     * rebuilt from the stored vectors.
     *
     * @throws IllegalArgumentException if the lists disagree with the store or the codebooks
     */
    static TrainedState fromLoaded(
            Codebooks codebooks,
            VectorKernels kernels,
            SwapRemoveVectors store,
            ScalarCodes osq,
            int[][] listOrds,
            byte[][] listCodes,
            float[][] centres,
            int[] centreMembers) {
        TrainedState st = new TrainedState(codebooks, kernels, store, store.ordinalCapacity(), osq);
        int entryBytes = osq == null ? codebooks.m : osq.bytesPerVector();
        int listed = 0;
        for (int list = 0; list < codebooks.nlist; list++) {
            if (listOrds[list].length > 0 && codebooks.isDeadAnchor(list)) {
                throw new IllegalArgumentException(
                        "list "
                                + list
                                + " holds "
                                + listOrds[list].length
                                + " entries but its anchor has no training member");
            }
            for (int i = 0; i < listOrds[list].length; i++) {
                int ord = listOrds[list][i];
                int slot = store.slotOf(ord);
                if (slot < 0) {
                    throw new IllegalArgumentException(
                            "list "
                                    + list
                                    + " names ordinal "
                                    + ord
                                    + " that has no stored vector");
                }
                if (st.holds(ord)) {
                    throw new IllegalArgumentException("ordinal " + ord + " appears in two lists");
                }
                st.appendEncoded(
                        list,
                        ord,
                        listCodes[list],
                        i * entryBytes,
                        store.block(),
                        store.offset(slot));
                listed++;
            }
            if (osq != null && listOrds[list].length > 0) {
                st.setCentre(list, centres[list], centreMembers[list]);
            }
        }
        if (listed != store.size()) {
            throw new IllegalArgumentException(
                    listed + " list entries for " + store.size() + " stored vectors");
        }
        return st;
    }

    /** The list the ordinal maps say holds {@code ord}, or -1. */
    int mappedList(int ord) {
        return ord < ordToList.length ? ordToList[ord] : -1;
    }

    /** The position the ordinal maps say {@code ord} has in its list, or -1. */
    int mappedPos(int ord) {
        return ord < ordToPos.length ? ordToPos[ord] : -1;
    }

    /** The list a live ordinal is in, or -1. */
    int listOf(int ord) {
        return holds(ord) ? ordToList[ord] : -1;
    }

    /** A copy of list {@code l}'s routing centroid. */
    float[] routingOf(int l) {
        return Arrays.copyOfRange(routing, l * dim, (l + 1) * dim);
    }

    /** List {@code l}'s ordinals, in entry order. */
    int[] membersOf(int l) {
        InvertedList list = lists[l];
        int[] out = new int[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = list.ordinalAt(i);
        }
        return out;
    }

    /** Bytes the lists have allocated for entries (codes and ordinals). */
    long bytesAllocated() {
        long bytes = 0;
        for (InvertedList l : lists) {
            bytes += l.bytesAllocated();
        }
        return bytes;
    }

    /** Whether {@code ord} has an entry in a list. */
    boolean holds(int ord) {
        return ord >= 0 && ord < ordToList.length && ordToList[ord] >= 0;
    }

    /**
     * Puts {@code ord} (its prepared vector at {@code block[off]}) into the list with the nearest
     * live anchor and encodes its residual. Steps: 1. nearest anchor; 2. residual to it; 3. PQ
     * code; 4. append; 5. add to the list's sum and move its routing centroid.
     */
    void insert(int ord, float[] block, int off) {
        int[] scratch = new int[Math.max(1, m)];
        kernels.nearest(block, off, 1, cb.anchorBlock, scratch, 0);
        int list = scratch[0];
        append(list, ord, block, off, scratch);
    }

    /**
     * Appends {@code ord} to {@code list}: with PQ encoded against the list's anchor, with OSQ
     * against the list's centre (a list's first member is its own centre; a list that doubled since
     * its centre was set is re-encoded against its mean).
     */
    void append(int list, int ord, float[] block, int off, int[] scratch) {
        byte[] code;
        if (osq == null) {
            float[] residual = new float[dim];
            code = new byte[m];
            kernels.subtract(block, off, cb.anchors, list * dim, residual, 0, dim);
            cb.pq.encode(kernels, residual, scratch, code, 0);
            Arrays.fill(residual, 0f);
        } else {
            code = new byte[osq.bytesPerVector()];
            if (centres[list] == null) {
                centres[list] = osq.centre(block, off);
                centreMembers[list] = 1;
            }
            encoder.encode(block, off, centres[list], code, 0);
        }
        int pos = lists[list].append(ord, code, 0);
        Arrays.fill(code, (byte) 0);
        ensureOrdinalArrays(ord + 1);
        ordToList[ord] = list;
        ordToPos[ord] = pos;
        sums.add(list, block, off);
        refreshRouting(list);
        if (osq != null
                && lists[list].size() >= 2 * centreMembers[list]
                && lists[list].size() >= 8) {
            reencode(list);
        }
    }

    /**
     * With OSQ: re-encodes every entry of a list against the exact mean of its entries (all live),
     * which becomes its centre; the old centre is wiped. An empty list has no centre. Cost: one
     * encoding per entry.
     */
    private void reencode(int list) {
        InvertedList il = lists[list];
        if (centres[list] != null) {
            centres[list].wipe();
            centres[list] = null;
        }
        centreMembers[list] = 0;
        if (il.size() == 0) {
            return;
        }
        centres[list] =
                osq.centre(routing, list * dim); // the routing centroid is the members' mean
        int[] offsets = new int[il.size()];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = store.offset(store.slotOf(il.ordinalAt(i)));
        }
        encoder.encodeList(
                store.block(), offsets, offsets.length, centres[list], il.writableCodes(), 0);
        centreMembers[list] = il.size();
    }

    /**
     * With OSQ, from a file: the centre a list's entries were encoded against and how many of its
     * first entries it is the mean of (the checker proves it).
     */
    void setCentre(int list, float[] centroid, int members) {
        centres[list] = osq.centre(centroid, 0);
        centreMembers[list] = members;
    }

    /** Whether a removal left a list to re-encode (OSQ). */
    boolean hasPendingReencodes() {
        return !dirty.isEmpty();
    }

    /**
     * Appends {@code ord} to {@code list} with a code already made (a file's), adding its vector to
     * the sum.
     */
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
            if (osq != null) {
                dirty.set(list); // its centre may include the removed vector: re-encoded in finish
            }
        }
        cb.removeMember(ord, block, off, moves);
    }

    /**
     * After a batch of {@link #forget}s: moved centroids reach their layouts and tables; a list
     * whose anchor lost its last member moves to the nearest live anchors (re-encoded there); codes
     * naming a sub-centroid that lost its last member are re-encoded in that subspace.
     *
     * @return false when no anchor has a member left: the state cannot assign anything and must be
     *     dropped (retrain or go flat)
     */
    boolean finish(Codebooks.Moves moves) {
        // OSQ first: a list whose centre held a removed vector is re-encoded against the mean
        // of its survivors before anything else reads it.
        for (int list = dirty.nextSetBit(0); list >= 0; list = dirty.nextSetBit(list + 1)) {
            reencode(list);
        }
        dirty.clear();
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
        if (!moves.deadRows.isEmpty() && osq == null) {
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
        if (osq != null) {
            reencode(list); // empty now: its centre is wiped
        }
    }

    /**
     * Re-encodes, in the one subspace concerned, every code that names a sub-centroid left without
     * members (it is zero now: data-independent, but a poor reconstruction). One pass over the
     * codes' bytes.
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
                    kernels.subtract(
                            store.block(),
                            off + j * dsub,
                            cb.anchors,
                            list * dim + j * dsub,
                            residual,
                            j * dsub,
                            dsub);
                    il.setCodeByte(
                            pos, j, (byte) cb.pq.encodeSubspace(kernels, residual, j, scratch));
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
        if (centres != null) {
            for (int i = 0; i < centres.length; i++) {
                if (centres[i] != null) {
                    centres[i].wipe();
                    centres[i] = null;
                }
            }
        }
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
