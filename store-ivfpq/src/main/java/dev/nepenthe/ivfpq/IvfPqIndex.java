package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.internal.index.IndexChecks;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.internal.index.TopK;
import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.RoaringBitmap;

/**
 * IVF-PQ whose trained structures forget.
 *
 * <h2>Life cycle</h2>
 * An empty index cannot be trained, so it starts <em>flat</em>: vectors are kept exactly and
 * searched by brute force. When the live count reaches {@code trainSize} (or on an explicit
 * {@link #train()}), it trains on the live vectors and becomes IVF-PQ:
 * <ol>
 *   <li>coarse codebook: k-means (k-means++ seeding, seeded RNG) of {@code nlist} centroids;</li>
 *   <li>PQ codebooks: per subspace, k-means of {@code ksub} centroids on the residuals of the
 *       sample to its nearest coarse centroid;</li>
 *   <li>every live vector is assigned to its nearest coarse centroid and its residual encoded.</li>
 * </ol>
 *
 * <h2>Two kinds of centroid, and why</h2>
 * Each list has a <em>routing centroid</em>, always the mean of its current members (exact
 * double-double sums, see {@link ListSums}): queries probe the lists whose routing centroids are
 * nearest. A removal subtracts the vector from its list's sum, so no removed vector shapes any
 * routing centroid, ever. An empty list has no mean; its routing centroid falls back to its
 * trained coarse centroid.
 *
 * <p>Assignment and encoding use the list's <em>trained</em> coarse centroid (the anchor): a new
 * vector joins the list whose anchor is nearest and its code encodes the residual to that
 * anchor, exactly as a (re)training assigns and encodes. A vector's list and code are then a
 * function of its own vector and the two trained codebooks only. Assigning by (or encoding
 * against) the moving means would make them depend on whichever vectors were members at the
 * time, removed ones included: residue that no later subtraction takes back. It also measured
 * slightly better recall (the residual PQ encodes is the smallest one).
 *
 * <h2>Codebooks that forget</h2>
 * The trained codebooks are exact functions of the training vectors that survive (see
 * {@link Codebooks}): each anchor is the mean of its surviving training members, each PQ
 * sub-centroid the mean of its members' residuals to their anchors. Removing a training member
 * subtracts it from the sums and moves those centroids in microseconds; no retrain is needed for
 * the codebooks to hold nothing of it. What stays is second-order: which member went to which
 * centroid, and the codes of other vectors chosen while it was there (codes are not re-encoded
 * when a centroid moves, see docs/FORGET.md for the recall this costs). An anchor left without
 * members is zeroed and takes no vectors (its list moves to the nearest live anchors); a
 * sub-centroid left without members is zeroed and the codes naming it re-encoded in that subspace.
 * A full retrain runs on {@link #retrain()}, at REBUILD (a fresh index), and by itself
 * ({@code autoRetrain=1}) once {@code driftLimit} percent of the training sample has been
 * removed, because then the codebooks describe too few of the vectors they encode. When too few
 * vectors survive to train ({@link IvfPqParams#minTrainingVectors()}), a retrain drops the
 * codebooks altogether and the index is flat again.
 *
 * <h2>Scoring</h2>
 * L2 and cosine use asymmetric L2 distances (cosine vectors are unit length, so L2 ranks as
 * cosine does); the query-side table of each probed list comes from one per-query dot table plus
 * a precomputed per-list term ({@code ||c||^2 + 2<anchor, c>}), FAISS's precomputed-table trick.
 * Dot uses inner-product tables and probes the lists with the largest {@code <q, centroid>}.
 * PQ scores are reported as the metric's scores (cosine: {@code 1 - d/2}); with {@code rerank > 0}
 * the best {@code max(k, rerank)} candidates are re-scored exactly from the stored vectors.
 *
 * <h2>Concurrency</h2>
 * One read-write lock: searches run in parallel; add, remove, train and retrain are exclusive.
 */
public final class IvfPqIndex implements VectorIndex {

    public static final String KIND = "ivfpq";
    static final String FORMAT = "nepenthe-ivfpq";
    static final int VERSION = 2;
    /** A routing centroid further than this (relative) from its members' mean is a violation. */
    public static final double CENTROID_TOLERANCE = 1e-5;

    private final int dim;
    private final Metric metric;
    private final VectorKernels kernels;
    private final IvfPqParams params;
    private final long seed;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private final SwapRemoveVectors store;
    /** Ordinals removed and not added again: the checker proves none survives anywhere. */
    private final RoaringBitmap removed = new RoaringBitmap();
    private long trainings;
    /** Bumped by every add and remove (under the write lock): a retrain computed aside checks it. */
    private long modifications;
    private final Object retrainMutex = new Object();
    /** Test hook: runs in a retrain after the new state is computed, before the swap. */
    Runnable duringRetrainCompute = () -> {};

    // Trained state; all null while the index is flat.
    private Codebooks cb;
    private float[] routing; // nlist * dim: mean of members, or the anchor for an empty list
    private InvertedList[] lists;
    private ListSums sums;
    private int[] ordToList; // -1 where not in a list
    private int[] ordToPos;

    public IvfPqIndex(int dimension, Metric metric, IvfPqParams params, long seed) {
        this(dimension, metric, params, seed, Kernels.get());
    }

    public IvfPqIndex(int dimension, Metric metric, IvfPqParams params, long seed, VectorKernels kernels) {
        if (dimension <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dimension);
        }
        if (dimension % params.m() != 0) {
            throw new IllegalArgumentException("ivfpq index: m=" + params.m() + " must divide the dimension "
                    + dimension);
        }
        this.dim = dimension;
        this.metric = metric;
        this.params = params;
        this.seed = seed;
        this.kernels = kernels;
        this.store = new SwapRemoveVectors(dimension);
    }

    /** An index from a collection's config (see {@link IvfPqParams} for the parameter names). */
    public static IvfPqIndex create(IndexConfig config) {
        return new IvfPqIndex(config.dimension(), config.metric(), IvfPqParams.from(config), config.seed());
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public int dimension() {
        return dim;
    }

    @Override
    public Metric metric() {
        return metric;
    }

    public IvfPqParams params() {
        return params;
    }

    // ------------------------------------------------------------------ add / remove

    /**
     * Adds a vector. While flat, the add that brings the live count to {@code trainSize} trains
     * the index (k-means cost, see {@link IvfPqParams}) before it returns.
     */
    @Override
    public void add(int ordinal, float[] vector) {
        IndexChecks.checkAdd(ordinal, vector, dim);
        float[] prepared = metric.prepare(vector);
        lock.writeLock().lock();
        try {
            if (store.contains(ordinal)) {
                throw new IllegalArgumentException("ordinal " + ordinal + " is already live in this index");
            }
            store.add(ordinal, prepared);
            removed.remove(ordinal);
            modifications++;
            if (isTrainedLocked()) {
                insertIntoList(ordinal, prepared, new float[dim], new int[Math.max(1, params.m())],
                        new byte[params.m()]);
            } else if (store.size() >= params.trainSize()) {
                trainLocked();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Puts a live ordinal into the list with the nearest anchor and encodes its residual.
     * Steps: 1. nearest anchor (trained coarse centroid); 2. residual to it; 3. PQ code;
     * 4. append; 5. add to the list's sum and move its routing centroid to the new mean.
     */
    private void insertIntoList(int ord, float[] v, float[] residual, int[] scratch, byte[] code) {
        kernels.nearest(v, 0, 1, cb.anchorBlock, scratch, 0);
        int list = scratch[0];
        kernels.subtract(v, 0, cb.anchors, list * dim, residual, 0, dim);
        cb.pq.encode(kernels, residual, scratch, code, 0);
        int pos = lists[list].append(ord, code, 0);
        ensureOrdinalArrays(ord + 1);
        ordToList[ord] = list;
        ordToPos[ord] = pos;
        sums.add(list, v, 0);
        refreshRouting(list);
    }

    private void refreshRouting(int list) {
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

    /**
     * Removes an ordinal: its code and ordinal leave their list (bytes zeroed), its vector is
     * subtracted from the list's sum and, if it trained the codebooks, from every centroid it
     * shaped (see {@link Codebooks}); its stored vector is zeroed. Cost: O(dim) plus, for a
     * training member, O(members of its anchor * dim) and one L2 table recomputation.
     */
    @Override
    public boolean remove(int ordinal) {
        return removeAll(new int[] {ordinal}) == 1;
    }

    /**
     * Removes every live ordinal given, sharing the codebooks' follow-up (layouts, tables, dead
     * centroids) across the batch; with {@code autoRetrain=1}, retrains once afterwards if the
     * batch took the removed share of the training sample past {@code driftLimit}.
     */
    @Override
    public int removeAll(int[] ordinals) {
        int n = 0;
        boolean retrain;
        lock.writeLock().lock();
        try {
            Codebooks.Moves moves = new Codebooks.Moves();
            for (int ord : ordinals) {
                if (removeLocked(ord, moves)) {
                    n++;
                }
            }
            if (isTrainedLocked()) {
                finishRemovalsLocked(moves);
            }
            retrain = n > 0 && params.autoRetrain() && driftExceededLocked();
        } finally {
            lock.writeLock().unlock();
        }
        if (retrain) {
            retrainAside(true);
        }
        return n;
    }

    private boolean removeLocked(int ord, Codebooks.Moves moves) {
        if (!store.contains(ord)) {
            return false;
        }
        if (isTrainedLocked()) {
            // 1. Out of the list: the last entry moves into the hole, the vacated entry is zeroed.
            int list = ordToList[ord];
            int pos = ordToPos[ord];
            int moved = lists[list].removeAt(pos);
            if (moved >= 0) {
                ordToPos[moved] = pos;
            }
            ordToList[ord] = -1;
            ordToPos[ord] = 0;
            // 2. Out of the list's sum: the routing centroid is the mean of the survivors.
            int off = store.offset(store.slotOf(ord));
            sums.subtract(list, store.block(), off);
            refreshRouting(list);
            // 3. Out of every codebook centroid it trained.
            cb.removeMember(ord, store.block(), off, moves);
        }
        // 4. Out of the vector store, bytes zeroed.
        store.remove(ord);
        modifications++;
        removed.add(ord);
        return true;
    }

    /**
     * After a batch of removals: moved centroids reach their layouts and tables; a list whose
     * anchor lost its last member moves to the nearest live anchors (re-encoded there); codes
     * naming a sub-centroid that lost its last member are re-encoded in that subspace. With no
     * live anchor left the codebooks cannot assign anything: the index retrains (or goes flat).
     */
    private void finishRemovalsLocked(Codebooks.Moves moves) {
        cb.applyMoves(moves);
        if (cb.liveAnchors() == 0) {
            trainLocked();
            return;
        }
        for (int a = moves.anchors.nextSetBit(0); a >= 0; a = moves.anchors.nextSetBit(a + 1)) {
            if (moves.deadAnchors.get(a)) {
                rehomeList(a);
            }
            refreshRouting(a);
        }
        if (!moves.deadRows.isEmpty()) {
            reencodeDeadRows(moves.deadRows);
        }
    }

    /** Moves every member of a list whose anchor died to the list of its nearest live anchor. */
    private void rehomeList(int list) {
        InvertedList il = lists[list];
        float[] v = new float[dim];
        float[] residual = new float[dim];
        int[] scratch = new int[Math.max(1, params.m())];
        byte[] code = new byte[params.m()];
        while (il.size() > 0) {
            int pos = il.size() - 1;
            int ord = il.ordinalAt(pos);
            il.removeAt(pos);
            int off = store.offset(store.slotOf(ord));
            sums.subtract(list, store.block(), off);
            System.arraycopy(store.block(), off, v, 0, dim);
            insertIntoList(ord, v, residual, scratch, code);
        }
        Arrays.fill(v, 0f);
        Arrays.fill(residual, 0f);
    }

    /**
     * Re-encodes, in the one subspace concerned, every code that names a sub-centroid left
     * without members (it is zero now: data-independent, but a poor reconstruction). One pass
     * over the codes' bytes of those subspaces.
     */
    private void reencodeDeadRows(java.util.BitSet deadRows) {
        int m = params.m();
        int ksub = params.ksub();
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
                    int dsub = dim / m;
                    kernels.subtract(store.block(), off + j * dsub, cb.anchors, list * dim + j * dsub, residual,
                            j * dsub, dsub);
                    il.setCodeByte(pos, j, (byte) cb.pq.encodeSubspace(kernels, residual, j, scratch));
                }
            }
        }
        Arrays.fill(residual, 0f);
    }

    /** True when more than {@code driftLimit} percent of the training sample has been removed. */
    private boolean driftExceededLocked() {
        return cb != null && cb.removedMembers() * 100L > (long) params.driftLimit() * cb.trainedOn();
    }

    @Override
    public boolean contains(int ordinal) {
        lock.readLock().lock();
        try {
            return store.contains(ordinal);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public int size() {
        lock.readLock().lock();
        try {
            return store.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    // ------------------------------------------------------------------ training

    /** True once the index has codebooks (false while it is flat). */
    public boolean isTrained() {
        lock.readLock().lock();
        try {
            return isTrainedLocked();
        } finally {
            lock.readLock().unlock();
        }
    }

    private boolean isTrainedLocked() {
        return cb != null;
    }

    /**
     * The share of the current codebooks' training sample removed since they were trained, in
     * {@code [0, 1]}; 0 while flat. The codebooks hold nothing of the removed ones (they are
     * exact means of the rest); past {@code driftLimit} they describe too few vectors and
     * {@code autoRetrain=1} retrains.
     */
    public double trainingDrift() {
        lock.readLock().lock();
        try {
            return cb == null || cb.trainedOn() == 0 ? 0 : cb.removedMembers() / (double) cb.trainedOn();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public String erasureResidual() {
        return "codes removed from their lists; list centroids and codebook centroids (coarse and PQ) moved to"
                + " exact means of the surviving vectors; which training vector went to which centroid, and"
                + " codes chosen under centroids that have since moved, remain until a retrain or REBUILD";
    }

    /** The ordinals the current codebooks were trained on that are still live (a copy; empty while flat). */
    public RoaringBitmap lineage() {
        lock.readLock().lock();
        try {
            return cb == null ? new RoaringBitmap() : RoaringBitmap.andNot(cb.lineage(), cb.lineageRemoved());
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Trains now on the live vectors (a sample of {@code trainSize} of them when there are more).
     * On a trained index this is {@link #retrain()}.
     *
     * @throws IllegalStateException if fewer than {@link IvfPqParams#minTrainingVectors()} are live
     */
    public void train() {
        lock.readLock().lock();
        try {
            if (store.size() < params.minTrainingVectors()) {
                throw new IllegalStateException("ivfpq index: training needs at least "
                        + params.minTrainingVectors() + " live vectors (max of nlist and 2^nbits), has " + store.size());
            }
        } finally {
            lock.readLock().unlock();
        }
        retrainAside(false);
    }

    /**
     * Retrains both codebooks on the surviving vectors and re-encodes every code, so no choice
     * made while a removed vector was present remains (what REBUILD gets from a fresh index).
     * Cost: one training ({@code iterations * sample * (nlist + ksub) * dim} multiply-adds) plus
     * encoding every live vector, computed under the read lock (searches go on against the old
     * codebooks; adds and removes wait) and swapped in at once. If too few vectors survive to
     * train, the codebooks are dropped and the index is flat (exact) again.
     */
    public void retrain() {
        retrainAside(false);
    }

    /**
     * Computes a training aside under the read lock, then swaps it in under the write lock.
     * Retrains run one at a time.
     *
     * @param onlyOnDrift retrain only if the drift limit is (still) exceeded
     */
    private void retrainAside(boolean onlyOnDrift) {
        synchronized (retrainMutex) {
            Trained next;
            long seen;
            long training;
            lock.readLock().lock();
            try {
                if (onlyOnDrift && !driftExceededLocked()) {
                    return;
                }
                seen = modifications;
                training = trainings + 1;
                next = computeTraining(training);
                duringRetrainCompute.run();
            } finally {
                lock.readLock().unlock();
            }
            lock.writeLock().lock();
            try {
                if (modifications != seen) {
                    // An add or remove slipped in between the two locks: what was computed no
                    // longer covers every live vector. Train again, exclusively.
                    if (next != null) {
                        next.cb().wipe();
                    }
                    trainLocked();
                    return;
                }
                trainings = training;
                clearTrainedState();
                if (next != null) {
                    install(next);
                }
            } finally {
                lock.writeLock().unlock();
            }
        }
    }

    private void trainLocked() {
        Trained next = computeTraining(++trainings);
        clearTrainedState();
        if (next != null) {
            install(next);
        }
    }

    /**
     * Everything a training produces, computed aside from the live state so that a retrain can
     * run while searches still use the old codebooks, and be swapped in at once.
     */
    private record Trained(Codebooks cb, float[] routing, InvertedList[] lists, ListSums sums, int[] ordToList,
            int[] ordToPos) {}

    /**
     * Trains on the live vectors without touching the trained state: reads only the vector
     * store, so the caller needs the read lock at least. Returns null when too few vectors are
     * live to train (the index is then flat again).
     */
    private Trained computeTraining(long training) {
        int n = store.size();
        if (n < params.minTrainingVectors()) {
            return null; // flat again: exact search over the store, nothing trained to forget
        }
        int nlist = params.nlist();
        int m = params.m();
        SplittableRandom rnd = new SplittableRandom(seed + 0x9E3779B97F4A7C15L * training);
        // 1. The sample: every live vector, or trainSize of them chosen at random.
        int s = Math.min(n, params.trainSize());
        int[] slots = new int[n];
        for (int i = 0; i < n; i++) {
            slots[i] = i;
        }
        for (int i = 0; i < s && s < n; i++) {
            int j = i + rnd.nextInt(n - i);
            int t = slots[i];
            slots[i] = slots[j];
            slots[j] = t;
        }
        float[] sample = new float[s * dim];
        int[] sampleOrds = new int[s];
        for (int i = 0; i < s; i++) {
            System.arraycopy(store.block(), store.offset(slots[i]), sample, i * dim, dim);
            sampleOrds[i] = store.ordinalAt(slots[i]);
        }
        // 2. Codebooks, exact means of the sample's members.
        Codebooks next = Codebooks.train(kernels, metric, params, dim, sample, sampleOrds, rnd);
        Arrays.fill(sample, 0f);
        // 3. Assign every live vector to its nearest live anchor and encode its residual.
        InvertedList[] newLists = new InvertedList[nlist];
        for (int i = 0; i < nlist; i++) {
            newLists[i] = new InvertedList(m);
        }
        ListSums newSums = new ListSums(nlist, dim);
        int[] newOrdToList = new int[Math.max(16, store.ordinalCapacity())];
        int[] newOrdToPos = new int[newOrdToList.length];
        Arrays.fill(newOrdToList, -1);
        int[] listOf = new int[n];
        kernels.nearest(store.block(), 0, n, next.anchorBlock, listOf, 0);
        float[] v = new float[dim];
        float[] residual = new float[dim];
        int[] scratch = new int[m];
        byte[] code = new byte[m];
        for (int slot = 0; slot < n; slot++) {
            System.arraycopy(store.block(), store.offset(slot), v, 0, dim);
            int list = listOf[slot];
            kernels.subtract(v, 0, next.anchors, list * dim, residual, 0, dim);
            next.pq.encode(kernels, residual, scratch, code, 0);
            int ord = store.ordinalAt(slot);
            newOrdToList[ord] = list;
            newOrdToPos[ord] = newLists[list].append(ord, code, 0);
            newSums.add(list, v, 0);
        }
        Arrays.fill(v, 0f);
        Arrays.fill(residual, 0f);
        // 4. Routing centroids: the means of the members (an empty list routes by its anchor).
        float[] newRouting = next.anchors.clone();
        for (int list = 0; list < nlist; list++) {
            if (newSums.count(list) > 0) {
                newSums.mean(list, newRouting, list * dim);
            }
        }
        return new Trained(next, newRouting, newLists, newSums, newOrdToList, newOrdToPos);
    }

    private void install(Trained t) {
        cb = t.cb();
        routing = t.routing();
        lists = t.lists();
        sums = t.sums();
        ordToList = t.ordToList();
        ordToPos = t.ordToPos();
    }

    /** Zeroes and drops every trained structure (codebooks being replaced). */
    private void clearTrainedState() {
        if (cb != null) {
            cb.wipe();
        }
        if (routing != null) {
            Arrays.fill(routing, 0f);
        }
        if (sums != null) {
            sums.clear();
        }
        if (lists != null) {
            for (InvertedList l : lists) {
                while (l.size() > 0) {
                    l.removeAt(l.size() - 1);
                }
            }
        }
        cb = null;
        routing = null;
        lists = null;
        sums = null;
        ordToList = null;
        ordToPos = null;
    }

    // ------------------------------------------------------------------ search

    /**
     * Searches with {@code nprobe} (lists probed) and {@code rerank} (exact re-rank depth) from
     * {@code params}, defaulting to the index's. While flat, the search is exact. A filter
     * selecting fewer vectors than the probed lists would hold is answered exactly from the
     * stored vectors (cheaper and exact).
     */
    @Override
    public SearchResult search(float[] query, int k, Accept accept, SearchParams searchParams) {
        if (searchParams == null) {
            searchParams = SearchParams.DEFAULTS; // the SPI's contract: null means this index's defaults
        }
        IndexChecks.checkSearch(query, k, dim);
        int nprobe = searchParams.get("nprobe", params.nprobe());
        int rerank = searchParams.get("rerank", params.rerank());
        if (nprobe <= 0) {
            throw new IllegalArgumentException("nprobe: expected > 0, got " + nprobe);
        }
        if (rerank < 0) {
            throw new IllegalArgumentException("rerank: expected >= 0, got " + rerank);
        }
        float[] q = metric.prepare(query);
        lock.readLock().lock();
        try {
            if (!isTrainedLocked()) {
                return exactSearch(q, k, accept, false);
            }
            nprobe = Math.min(nprobe, params.nlist());
            long expectedScan = (long) store.size() * nprobe / params.nlist();
            long allowed = accept.cardinality();
            if (accept != Accept.ALL && allowed >= 0 && allowed <= expectedScan) {
                return exactSearch(q, k, accept, true);
            }
            return ivfSearch(q, k, accept, nprobe, rerank);
        } finally {
            lock.readLock().unlock();
        }
    }

    private SearchResult ivfSearch(float[] q, int k, Accept accept, int nprobe, int rerank) {
        int nlist = params.nlist();
        int m = params.m();
        int ksub = params.ksub();
        int mk = m * ksub;
        // 1. Probe: the nprobe non-empty lists whose routing centroids are nearest to the query.
        float[] coarse = new float[nlist];
        boolean dot = metric == Metric.DOT;
        if (dot) {
            kernels.dotBatch(q, routing, 0, nlist, dim, coarse, 0);
        } else {
            kernels.squareDistanceBatch(q, routing, 0, nlist, dim, coarse, 0);
        }
        TopK probes = new TopK(nprobe);
        for (int i = 0; i < nlist; i++) {
            if (lists[i].size() > 0) {
                probes.offer(i, dot ? coarse[i] : -coarse[i]);
            }
        }
        int[] probed = probes.drain(0).ordinals();
        // 2. The per-query table: dot products of each query sub-vector with each sub-centroid.
        float[] qTable = new float[mk];
        kernels.pqDotTable(q, cb.pq.codebooks(), m, ksub, qTable);
        if (!dot) {
            for (int t = 0; t < mk; t++) {
                qTable[t] *= -2f;
            }
        }
        float[] listTable = dot ? qTable : new float[mk];
        int depth = rerank > 0 ? Math.max(k, rerank) : k;
        TopK candidates = new TopK(depth);
        float[] out = new float[64];
        long visited = 0;
        for (int list : probed) {
            InvertedList il = lists[list];
            int size = il.size();
            if (out.length < size) {
                out = new float[Math.max(size, out.length * 2)];
            }
            // 3. Scan the list's codes with its table; the list's own constant is added after.
            float base;
            if (dot) {
                base = kernels.dot(q, 0, cb.anchors, list * dim, dim);
            } else {
                base = kernels.squareDistance(q, 0, cb.anchors, list * dim, dim);
                int off = list * mk;
                float[] l2Terms = cb.l2Terms;
                for (int t = 0; t < mk; t++) {
                    listTable[t] = l2Terms[off + t] + qTable[t];
                }
            }
            kernels.pqDistanceBatch(listTable, ksub, il.codes(), 0, size, m, out, 0);
            visited += size;
            for (int i = 0; i < size; i++) {
                int ord = il.ordinalAt(i);
                if (accept != Accept.ALL && !accept.accepts(ord)) {
                    continue;
                }
                candidates.offer(ord, approximateScore(base + out[i]));
            }
        }
        if (rerank == 0) {
            return candidates.drain(visited);
        }
        // 4. Re-rank the best candidates exactly from the stored vectors.
        SearchResult approx = candidates.drain(visited);
        TopK top = new TopK(k);
        float[] block = store.block();
        for (int ord : approx.ordinals()) {
            top.offer(ord, metric.score(kernels, q, block, store.offset(store.slotOf(ord)), dim));
        }
        return top.drain(visited + approx.size());
    }

    /** A PQ value (inner product for dot, squared distance otherwise) as the metric's score. */
    private float approximateScore(float value) {
        return switch (metric) {
            case DOT -> value;
            case L2 -> -value;
            case COSINE -> 1f - value / 2f;
        };
    }

    /** Brute force over the store, or, with {@code enumerate}, over the accepted ordinals only. */
    private SearchResult exactSearch(float[] q, int k, Accept accept, boolean enumerate) {
        TopK top = new TopK(k);
        float[] block = store.block();
        long visited = 0;
        if (enumerate) {
            java.util.PrimitiveIterator.OfInt it = accept.ordinals();
            while (it.hasNext()) {
                int ord = it.nextInt();
                int slot = store.slotOf(ord);
                if (slot >= 0) {
                    top.offer(ord, metric.score(kernels, q, block, store.offset(slot), dim));
                    visited++;
                }
            }
            return top.drain(visited);
        }
        int n = store.size();
        float[] scores = new float[256];
        for (int start = 0; start < n; start += 256) {
            int c = Math.min(256, n - start);
            metric.scoreBatch(kernels, q, block, store.offset(start), c, dim, scores);
            visited += c;
            for (int i = 0; i < c; i++) {
                int ord = store.ordinalAt(start + i);
                if (accept == Accept.ALL || accept.accepts(ord)) {
                    top.offer(ord, scores[i]);
                }
            }
        }
        return top.drain(visited);
    }

    // ------------------------------------------------------------------ inspection

    /**
     * Lists with their routing centroids and members, the codebooks' training lineage (live
     * members only) and counts: trainings so far (each a retrain event), lineage members removed
     * since the last one, whether the codebooks are tainted.
     */
    @Override
    public dev.nepenthe.core.index.IndexDescription describe() {
        lock.readLock().lock();
        try {
            java.util.Map<String, Number> stats = new java.util.TreeMap<>();
            stats.put("nlist", params.nlist());
            stats.put("m", params.m());
            stats.put("trained", isTrainedLocked() ? 1 : 0);
            stats.put("trainings", trainings);
            stats.put("trainingMembers", cb == null ? 0 : cb.trainedOn());
            stats.put("trainingMembersRemoved", cb == null ? 0 : cb.removedMembers());
            stats.put("deadAnchors", cb == null ? 0 : params.nlist() - cb.liveAnchors());
            java.util.List<dev.nepenthe.core.index.IndexDescription.Partition> parts = new java.util.ArrayList<>();
            if (lists != null) {
                for (int l = 0; l < lists.length; l++) {
                    InvertedList list = lists[l];
                    int[] members = new int[list.size()];
                    for (int i = 0; i < members.length; i++) {
                        members[i] = list.ordinalAt(i);
                    }
                    parts.add(new dev.nepenthe.core.index.IndexDescription.Partition(l,
                            Arrays.copyOfRange(routing, l * dim, (l + 1) * dim), members));
                }
            }
            int[] lin = cb == null ? null : RoaringBitmap.andNot(cb.lineage(), cb.lineageRemoved()).toArray();
            return new dev.nepenthe.core.index.IndexDescription(KIND, store.size(), stats, parts, lin);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The routing centroid of a list (the mean of its members; the anchor when empty), or null while flat. */
    public float[] centroid(int list) {
        lock.readLock().lock();
        try {
            return routing == null ? null : Arrays.copyOfRange(routing, list * dim, (list + 1) * dim);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The ordinals in a list, in entry order (empty while flat). */
    public int[] listMembers(int list) {
        lock.readLock().lock();
        try {
            if (lists == null) {
                return new int[0];
            }
            InvertedList l = lists[list];
            int[] out = new int[l.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = l.ordinalAt(i);
            }
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The list a live ordinal is in, or -1 (also while flat). */
    public int listOf(int ordinal) {
        lock.readLock().lock();
        try {
            return ordToList == null || ordinal < 0 || ordinal >= ordToList.length ? -1 : ordToList[ordinal];
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Bytes the inverted lists hold per live vector (m code bytes plus a 4-byte ordinal, plus slack). */
    public double listBytesPerVector() {
        lock.readLock().lock();
        try {
            if (lists == null || store.size() == 0) {
                return 0;
            }
            long bytes = 0;
            for (InvertedList l : lists) {
                bytes += l.bytesAllocated();
            }
            return bytes / (double) store.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The integrity report plus the largest centroid deviation it measured. */
    public record Inspection(IntegrityReport report, double maxCentroidDeviation, int worstList) {}

    @Override
    public IntegrityReport verifyIntegrity() {
        return inspect().report();
    }

    /**
     * Checks, under the read lock:
     * <ul>
     *   <li>the vector store's maps agree and its freed floats are zero; no removed ordinal is live;</li>
     *   <li>every list entry is a live, non-removed ordinal, appears once, and sits where the
     *       ordinal maps say; freed list bytes are zero; codes = live vectors;</li>
     *   <li>every non-empty list's routing centroid equals the mean of its members, recomputed
     *       here from the stored vectors (largest relative deviation reported); an empty list's
     *       equals its anchor; list counts equal the sums' counts;</li>
     *   <li>codebooks (see {@link Codebooks#check}): every anchor and PQ sub-centroid equals the
     *       mean recomputed from its surviving training members, centroids without members are
     *       zero, removed members' records are wiped, ranking layouts and score tables hold the
     *       current centroids and nothing older.</li>
     * </ul>
     */
    public Inspection inspect() {
        lock.readLock().lock();
        try {
            return IvfPqChecker.inspect(this);
        } finally {
            lock.readLock().unlock();
        }
    }

    // ------------------------------------------------------------------ persistence

    /**
     * Writes the index: parameters, the live vectors, the removed-ordinal set and, when trained,
     * the codebooks, their lineage and every list's entries. List sums are not written: loading
     * recomputes them from the members, so a loaded centroid is the mean by construction.
     */
    @Override
    public void save(Path file) throws IOException {
        lock.readLock().lock();
        try {
            IvfPqFile.write(file, this);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Reads a file written by {@link #save}; dimension and metric must match {@code config}. The
     * index parameters and seed come from the file (the codes were made with them); the
     * parameters in {@code config} are not applied.
     */
    public static IvfPqIndex load(IndexConfig config, Path file) throws IOException {
        return IvfPqFile.read(config, file);
    }

    // Package-private accessors for IvfPqFile (called with the lock held or before publication).
    long seed() {
        return seed;
    }

    VectorKernels kernels() {
        return kernels;
    }

    long trainings() {
        return trainings;
    }

    SwapRemoveVectors store() {
        return store;
    }

    RoaringBitmap removedOrdinals() {
        return removed;
    }

    float[] anchors() {
        return cb.anchors;
    }

    ProductQuantizer quantizer() {
        return cb == null ? null : cb.pq;
    }

    Codebooks codebooks() {
        return cb;
    }

    InvertedList list(int i) {
        return lists[i];
    }


    float[] routing() {
        return routing;
    }

    int sumCount(int list) {
        return sums.count(list);
    }

    /** The list the ordinal maps say holds {@code ord}, or -1. */
    int mappedList(int ord) {
        return ord < ordToList.length ? ordToList[ord] : -1;
    }

    /** The position the ordinal maps say {@code ord} has in its list. */
    int mappedPos(int ord) {
        return ord < ordToPos.length ? ordToPos[ord] : -1;
    }

    /**
     * Installs loaded state: the codebooks (recomputed from their members' stored vectors) and
     * list entries (codes as written); rebuilds the ordinal maps, the sums and routing centroids
     * from the stored vectors.
     */
    void installLoaded(long trainingCount, RoaringBitmap removedOrds, Codebooks codebooks, int[][] listOrds,
            byte[][] listCodes) {
        trainings = trainingCount;
        removed.or(removedOrds);
        if (codebooks == null) {
            return;
        }
        int nlist = params.nlist();
        cb = codebooks;
        routing = cb.anchors.clone();
        lists = new InvertedList[nlist];
        sums = new ListSums(nlist, dim);
        ordToList = new int[Math.max(16, store.ordinalCapacity())];
        ordToPos = new int[ordToList.length];
        Arrays.fill(ordToList, -1);
        for (int list = 0; list < nlist; list++) {
            lists[list] = new InvertedList(params.m());
            for (int i = 0; i < listOrds[list].length; i++) {
                int ord = listOrds[list][i];
                int slot = store.slotOf(ord);
                if (slot < 0) {
                    throw new IllegalArgumentException("list " + list + " names ordinal " + ord
                            + " that has no stored vector");
                }
                if (ord < ordToList.length && ordToList[ord] >= 0) {
                    throw new IllegalArgumentException("ordinal " + ord + " appears in two lists");
                }
                ensureOrdinalArrays(ord + 1);
                ordToList[ord] = list;
                ordToPos[ord] = lists[list].append(ord, listCodes[list], i * params.m());
                sums.add(list, store.block(), store.offset(slot));
            }
            refreshRouting(list);
        }
        int listed = 0;
        for (int[] o : listOrds) {
            listed += o.length;
        }
        if (listed != store.size()) {
            throw new IllegalArgumentException(listed + " list entries for " + store.size() + " stored vectors");
        }
        for (int list = 0; list < nlist; list++) {
            if (cb.isDeadAnchor(list) && lists[list].size() > 0) {
                throw new IllegalArgumentException("list " + list + " holds " + lists[list].size()
                        + " entries but its anchor has no training member");
            }
        }
    }

    /** Registered through {@code META-INF/services}. */
    public static final class Factory implements VectorIndexFactory {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public VectorIndex create(IndexConfig config) {
            return IvfPqIndex.create(config);
        }

        @Override
        public VectorIndex load(IndexConfig config, Path file) throws IOException {
            return IvfPqIndex.load(config, file);
        }
    }
}
