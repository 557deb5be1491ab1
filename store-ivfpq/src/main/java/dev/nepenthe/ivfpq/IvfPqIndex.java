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
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.RoaringBitmap;

/**
 * IVF-PQ whose trained structures forget.
 *
 * <h2>Life cycle</h2>
 *
 * An empty index cannot be trained, so it starts <em>flat</em>: vectors are kept exactly and
 * searched by brute force. When the live count reaches {@code trainSize} (or on an explicit {@link
 * #train()} or {@link #trainInBackground()}), it trains on the live vectors, on its own thread, and
 * becomes IVF-PQ once the training is swapped in:
 *
 * <ol>
 *   <li>coarse codebook: k-means (k-means++ seeding, seeded RNG) of {@code nlist} centroids, then
 *       each centroid the exact mean of the sample vectors nearest to it;
 *   <li>PQ codebooks: per subspace, k-means of {@code ksub} centroids on the residuals of the
 *       sample to those anchors, then each the exact mean of its members' residuals;
 *   <li>every live vector is assigned to its nearest coarse centroid and its residual encoded.
 * </ol>
 *
 * <h2>Two kinds of centroid, and why</h2>
 *
 * Each list has a <em>routing centroid</em>, always the mean of its current members (exact
 * double-double sums, see {@link ListSums}): queries probe the lists whose routing centroids are
 * nearest. A removal subtracts the vector from its list's sum, so no removed vector shapes any
 * routing centroid, ever. An empty list has no mean; its routing centroid falls back to its trained
 * coarse centroid.
 *
 * <p>Assignment and encoding use the list's <em>trained</em> coarse centroid (the anchor): a new
 * vector joins the list whose anchor is nearest and its code encodes the residual to that anchor,
 * exactly as a (re)training assigns and encodes. A vector's list and code are then a function of
 * its own vector and the two trained codebooks only. Assigning by (or encoding against) the moving
 * means would make them depend on whichever vectors were members at the time, removed ones
 * included: residue that no later subtraction takes back. It also measured slightly better recall
 * (the residual PQ encodes is the smallest one).
 *
 * <h2>Codebooks that forget</h2>
 *
 * The trained codebooks are exact functions of the training vectors that survive (see {@link
 * Codebooks}): each anchor is the mean of its surviving training members, each PQ sub-centroid the
 * mean of its members' residuals to their anchors. Removing a training member subtracts it from the
 * sums and moves those centroids in microseconds; no retrain is needed for the codebooks to hold
 * nothing of it. What stays is second-order: which member went to which centroid, and the codes of
 * other vectors chosen while it was there (codes are not re-encoded when a centroid moves, see
 * docs/FORGET.md for the recall this costs). An anchor left without members is zeroed and takes no
 * vectors (its list moves to the nearest live anchors); a sub-centroid left without members is
 * zeroed and the codes naming it re-encoded in that subspace. A full retrain runs on {@link
 * #retrain()}, at REBUILD (a fresh index), and by itself ({@code autoRetrain=1}) once {@code
 * driftLimit} percent of the training sample has been removed, because then the codebooks describe
 * too few of the vectors they encode. When too few vectors survive to train ({@link
 * IvfPqParams#minTrainingVectors()}), a retrain drops the codebooks altogether and the index is
 * flat again.
 *
 * <h2>Scoring</h2>
 *
 * L2 and cosine use asymmetric L2 distances (cosine vectors are unit length, so L2 ranks as cosine
 * does); the query-side table of each probed list comes from one per-query dot table plus a
 * precomputed per-list term ({@code ||c||^2 + 2<anchor, c>}), FAISS's precomputed-table trick. Dot
 * uses inner-product tables and probes the lists with the largest {@code <q, centroid>}. PQ scores
 * are reported as the metric's scores (cosine: {@code 1 - d/2}); with {@code rerank > 0} the best
 * {@code max(k, rerank)} candidates are re-scored exactly from the stored vectors.
 *
 * <h2>Concurrency</h2>
 *
 * One read-write lock: searches run in parallel; adds and removes are exclusive and brief. A
 * training takes the read lock to copy its sample, none for its k-means, the read lock a chunk at a
 * time to encode, and the write lock only to swap (see {@link #trainInBackground()}).
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

    /** The OSQ codec (a seeded rotation, no trained state), or null with PQ codes. */
    private final ScalarCodes osq;

    /** Ordinals removed and not added again: the checker proves none survives anywhere. */
    private final RoaringBitmap removed = new RoaringBitmap();

    /** Trainings started so far (each a retrain event once the first has served). */
    private long trainings;

    /**
     * Test hook: runs in a training after the k-means (no lock held), before the codebooks are
     * built.
     */
    Runnable duringRetrainCompute = () -> {};

    /** What the index serves from once trained; null while it is flat. */
    private TrainedState state;

    /** The training in progress, if any (set and cleared under the write lock). */
    private Training inFlight;

    /** Trains in the background: at most one thread, which exits when idle. */
    private final ThreadPoolExecutor trainer;

    private volatile boolean closed;

    public IvfPqIndex(int dimension, Metric metric, IvfPqParams params, long seed) {
        this(dimension, metric, params, seed, Kernels.get());
    }

    public IvfPqIndex(
            int dimension, Metric metric, IvfPqParams params, long seed, VectorKernels kernels) {
        if (dimension <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dimension);
        }
        if (dimension % params.m() != 0) {
            throw new IllegalArgumentException(
                    "ivfpq index: m=" + params.m() + " must divide the dimension " + dimension);
        }
        this.dim = dimension;
        this.metric = metric;
        this.params = params;
        this.seed = seed;
        this.kernels = kernels;
        this.store = new SwapRemoveVectors(dimension);
        this.osq =
                params.codes() == IvfPqParams.Codes.OSQ
                        ? new ScalarCodes(dimension, metric, params.bits(), seed)
                        : null;
        this.trainer =
                new ThreadPoolExecutor(
                        0,
                        1,
                        5,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        r -> {
                            Thread t = new Thread(r, "nepenthe-ivfpq-training");
                            t.setDaemon(true);
                            return t;
                        });
    }

    /** An index from a collection's config (see {@link IvfPqParams} for the parameter names). */
    public static IvfPqIndex create(IndexConfig config) {
        return new IvfPqIndex(
                config.dimension(), config.metric(), IvfPqParams.from(config), config.seed());
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
     * Adds a vector. Once trained, it joins the list of its nearest anchor: O(nlist * dim + m *
     * ksub * dim / m). While flat, the add that brings the live count to {@code trainSize} starts a
     * training in the background and returns at once (see {@link #trainInBackground()}).
     */
    @Override
    public void add(int ordinal, float[] vector) {
        IndexChecks.checkAdd(ordinal, vector, dim);
        float[] prepared = metric.prepare(vector);
        boolean startTraining = false;
        lock.writeLock().lock();
        try {
            if (store.contains(ordinal)) {
                throw new IllegalArgumentException(
                        "ordinal " + ordinal + " is already live in this index");
            }
            store.add(ordinal, prepared);
            removed.remove(ordinal);
            if (state != null) {
                state.insert(ordinal, prepared, 0);
            }
            if (inFlight != null) {
                inFlight.added.add(ordinal);
            } else if (state == null && store.size() >= params.trainSize()) {
                startTraining = true;
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (startTraining) {
            trainInBackground();
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
     * centroids) across the batch; with {@code autoRetrain=1}, starts a retrain in the background
     * if the batch took the removed share of the training sample past {@code driftLimit}.
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
            if (state != null && !state.finish(moves)) {
                // No anchor has a training member left: nothing can be assigned. Flat until a
                // training on the survivors (started below when enough are live).
                dropState();
            }
            if (inFlight != null) {
                inFlight.finishRemovals();
            }
            retrain =
                    n > 0
                            && inFlight == null
                            && (state == null
                                    ? store.size() >= params.trainSize()
                                    : params.autoRetrain() && driftExceededLocked());
        } finally {
            lock.writeLock().unlock();
        }
        if (retrain) {
            trainInBackground();
        }
        return n;
    }

    private boolean removeLocked(int ord, Codebooks.Moves moves) {
        if (!store.contains(ord)) {
            return false;
        }
        int off = store.offset(store.slotOf(ord));
        // 1. Out of the serving state: list entry, list sum, every codebook centroid it trained.
        if (state != null) {
            state.forget(ord, store.block(), off, moves);
        }
        // 2. Out of a training in progress, wherever that training has got to.
        if (inFlight != null) {
            inFlight.forget(ord, store.block(), off);
        }
        // 3. Out of the vector store, bytes zeroed.
        store.remove(ord);
        removed.add(ord);
        return true;
    }

    /** True when more than {@code driftLimit} percent of the training sample has been removed. */
    private boolean driftExceededLocked() {
        Codebooks cb = state == null ? null : state.cb;
        return cb != null
                && cb.removedMembers() * 100L > (long) params.driftLimit() * cb.trainedOn();
    }

    private void dropState() {
        if (state != null) {
            state.wipe();
            state = null;
        }
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

    /**
     * True once the index has codebooks (false while it is flat, including during its first
     * training).
     */
    public boolean isTrained() {
        lock.readLock().lock();
        try {
            return state != null;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The share of the current codebooks' training sample removed since they were trained, in
     * {@code [0, 1]}; 0 while flat. The codebooks hold nothing of the removed ones (they are exact
     * means of the rest); past {@code driftLimit} they describe too few of the vectors they encode,
     * and {@code autoRetrain=1} retrains.
     */
    public double trainingDrift() {
        lock.readLock().lock();
        try {
            Codebooks cb = state == null ? null : state.cb;
            return cb == null || cb.trainedOn() == 0
                    ? 0
                    : cb.removedMembers() / (double) cb.trainedOn();
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public String erasureResidual() {
        return "codes removed from their lists; list centroids and codebook centroids (coarse and"
                + " PQ) moved to exact means of the surviving vectors; which training vector"
                + " went to which centroid, and codes chosen under centroids that have since"
                + " moved, remain until a retrain or REBUILD";
    }

    /**
     * The ordinals the current codebooks were trained on that are still live (a copy; empty while
     * flat).
     */
    public RoaringBitmap lineage() {
        lock.readLock().lock();
        try {
            Codebooks cb = state == null ? null : state.cb;
            return cb == null
                    ? new RoaringBitmap()
                    : RoaringBitmap.andNot(cb.lineage(), cb.lineageRemoved());
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Where a training stands: its number, the step it is on ("sampling", "coarse k-means", "PQ
     * k-means", "building codebooks", "encoding", "installing"), and for encoding the vectors done
     * out of those to do.
     */
    public record TrainingProgress(long training, String phase, long done, long total) {}

    /** The training in progress, or empty when none is. */
    public Optional<TrainingProgress> trainingProgress() {
        lock.readLock().lock();
        try {
            Training t = inFlight;
            return t == null
                    ? Optional.empty()
                    : Optional.of(new TrainingProgress(t.number, t.phase, t.encoded, t.total));
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Starts a training on the live vectors in the background (a sample of {@code trainSize} when
     * there are more), or returns the one already running. Adds, removes and searches go on
     * meanwhile: the k-means holds no lock, encoding takes the read lock a chunk at a time, and
     * only the swap takes the write lock, for as long as it takes to encode what was added
     * meanwhile. Searches use the old codebooks (or exact search, while flat) until the swap. Cost:
     * {@code iterations * sample * (nlist + ksub) * dim} multiply-adds, then encoding every live
     * vector.
     *
     * @return completes when the new codebooks serve (or the index went flat: too few vectors)
     */
    public CompletableFuture<Void> trainInBackground() {
        lock.writeLock().lock();
        try {
            if (inFlight != null) {
                return inFlight.done;
            }
            if (closed) {
                return CompletableFuture.failedFuture(
                        new IllegalStateException("ivfpq index: closed"));
            }
            Training t = new Training(++trainings);
            inFlight = t;
            trainer.execute(() -> runTraining(t));
            return t.done;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Waits for the training in progress, if any (for callers that need trained codebooks now). */
    public void awaitTraining() {
        CompletableFuture<Void> f;
        lock.readLock().lock();
        try {
            f = inFlight == null ? null : inFlight.done;
        } finally {
            lock.readLock().unlock();
        }
        if (f != null) {
            f.join();
        }
    }

    /**
     * Trains now on the live vectors and returns when the new codebooks serve. On a trained index
     * this is {@link #retrain()}.
     *
     * @throws IllegalStateException if fewer than {@link IvfPqParams#minTrainingVectors()} are live
     */
    public void train() {
        lock.readLock().lock();
        try {
            if (store.size() < params.minTrainingVectors()) {
                throw new IllegalStateException(
                        "ivfpq index: training needs at least "
                                + params.minTrainingVectors()
                                + " live vectors (max of nlist and 2^nbits), has "
                                + store.size());
            }
        } finally {
            lock.readLock().unlock();
        }
        retrain();
    }

    /**
     * Retrains both codebooks on the surviving vectors and re-encodes every code, so no choice made
     * while a removed vector was present remains (what REBUILD gets from a fresh index), and
     * returns when they serve. Waits for a training already in progress first (it may have sampled
     * before the caller's last change). Writers are held only as {@link #trainInBackground()} says.
     * If too few vectors survive to train, the codebooks are dropped and the index is flat (exact)
     * again.
     */
    public void retrain() {
        awaitTraining();
        trainInBackground().join();
    }

    /**
     * Waits for a training the load started (the add that reached {@code trainSize}), so an index
     * rebuilt at open serves trained codebooks, as it did when training ran inside that add.
     */
    @Override
    public void afterBulkLoad() {
        awaitTraining();
    }

    /**
     * True while a training in progress was reading a vector that has since been removed: its
     * k-means intermediates may hold a mean that included it until it builds its codebooks from the
     * survivors (the removed one zeroed and subtracted).
     */
    @Override
    public boolean hasResidue() {
        lock.readLock().lock();
        try {
            return inFlight != null
                    && inFlight.next == null
                    && !inFlight.removedFromSample.isEmpty();
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Waits for the training in progress (see {@link #hasResidue()}); at most one training's
     * length.
     */
    @Override
    public void purgeResidue() {
        awaitTraining();
    }

    /**
     * A training's copy of its sample, its next state as built so far, and what happened meanwhile.
     */
    private final class Training {
        final long number;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        /** Sample ordinals, ascending, and their vectors in the same order. */
        int[] sampleOrds;

        float[] sample;
        final RoaringBitmap removedFromSample = new RoaringBitmap();

        /** Ordinals added since the training started: encoded at the swap unless already. */
        final RoaringBitmap added = new RoaringBitmap();

        /** Built after the k-means, under the read lock; kept current by every removal since. */
        TrainedState next;

        /** Removals from {@link #next} not yet followed up ({@link #finishRemovals}). */
        Codebooks.Moves moves = new Codebooks.Moves();

        /** Set when removals left {@link #next} without a live anchor: it installs nothing. */
        boolean collapsed;

        volatile String phase = "sampling";
        volatile long encoded;
        volatile long total;

        Training(long number) {
            this.number = number;
        }

        /**
         * After a batch of removals: the next state's moved centroids reach their layouts and
         * tables at once, as the serving state's do, so no derived copy of a removed vector's
         * influence waits for the swap.
         */
        void finishRemovals() {
            if (next != null && !collapsed && (!moves.isEmpty() || next.hasPendingReencodes())) {
                collapsed = !next.finish(moves);
                moves = new Codebooks.Moves();
            }
        }

        /** A vector about to leave the store: out of this training, wherever it has got to. */
        void forget(int ord, float[] block, int off) {
            added.remove(ord);
            if (next != null) {
                next.forget(ord, block, off, moves);
                return;
            }
            int row = sampleOrds == null ? -1 : Arrays.binarySearch(sampleOrds, ord);
            if (row >= 0 && !removedFromSample.contains(ord)) {
                // The k-means may be reading it: zero it now, so nothing read after this holds
                // it, and subtract it (as the zero vector it will be built from) once built.
                Arrays.fill(sample, row * dim, (row + 1) * dim, 0f);
                removedFromSample.add(ord);
            }
        }
    }

    /** Chunk of ordinals encoded per read-lock hold. */
    private static final int ENCODE_CHUNK = 4096;

    private void runTraining(Training t) {
        try {
            // 1. The sample: every live vector, or trainSize of them chosen at random (read lock).
            SplittableRandom rnd = new SplittableRandom(seed + 0x9E3779B97F4A7C15L * t.number);
            int s = 0;
            lock.readLock().lock();
            try {
                int n = store.size();
                if (n >= params.minTrainingVectors()) {
                    s = Math.min(n, params.trainSize());
                    int[] slots = new int[n];
                    for (int i = 0; i < n; i++) {
                        slots[i] = i;
                    }
                    for (int i = 0; i < s && s < n; i++) {
                        int j = i + rnd.nextInt(n - i);
                        int tmp = slots[i];
                        slots[i] = slots[j];
                        slots[j] = tmp;
                    }
                    int[] ords = new int[s];
                    for (int i = 0; i < s; i++) {
                        ords[i] = store.ordinalAt(slots[i]);
                    }
                    Arrays.sort(ords);
                    float[] sample = new float[s * dim];
                    for (int i = 0; i < s; i++) {
                        System.arraycopy(
                                store.block(),
                                store.offset(store.slotOf(ords[i])),
                                sample,
                                i * dim,
                                dim);
                    }
                    t.sampleOrds = ords;
                    t.sample = sample;
                }
            } finally {
                lock.readLock().unlock();
            }
            if (s == 0) {
                finishTooFew(t);
                return;
            }
            // 2. The k-means, holding no lock: removals zero their sample rows meanwhile.
            Codebooks.Assignment assignment =
                    Codebooks.assign(kernels, params, dim, t.sample, s, rnd, p -> t.phase = p);
            duringRetrainCompute.run();
            // 3. Codebooks from the sample as it now is; those removed meanwhile subtracted.
            t.phase = "building codebooks";
            lock.readLock().lock();
            try {
                Codebooks cb =
                        Codebooks.fromSample(
                                kernels, metric, params, dim, t.sample, t.sampleOrds, assignment);
                org.roaringbitmap.IntIterator it = t.removedFromSample.getIntIterator();
                while (it.hasNext()) {
                    int ord = it.next();
                    int row = Arrays.binarySearch(t.sampleOrds, ord);
                    cb.removeMember(ord, t.sample, row * dim, t.moves);
                }
                t.next = new TrainedState(cb, kernels, store, store.ordinalCapacity(), osq);
                t.finishRemovals();
                Arrays.fill(t.sample, 0f);
                t.total = store.size();
            } finally {
                lock.readLock().unlock();
            }
            // 4. Encode every live vector, a chunk of ordinals per read-lock hold; removals keep
            // the new state current between chunks, adds are caught at the swap.
            t.phase = "encoding";
            for (int lo = 0; !closed; lo += ENCODE_CHUNK) {
                lock.readLock().lock();
                try {
                    int cap = store.ordinalCapacity();
                    if (lo >= cap) {
                        break;
                    }
                    for (int ord = lo; ord < Math.min(cap, lo + ENCODE_CHUNK); ord++) {
                        if (!t.collapsed && store.contains(ord) && !t.next.holds(ord)) {
                            t.next.insert(ord, store.block(), store.offset(store.slotOf(ord)));
                            t.encoded++;
                        }
                    }
                } finally {
                    lock.readLock().unlock();
                }
            }
            // 5. The swap: what was added meanwhile, the batch follow-up, then the new state
            // serves.
            t.phase = "installing";
            lock.writeLock().lock();
            try {
                if (closed) {
                    t.next.wipe();
                    inFlight = null;
                    t.done.completeExceptionally(
                            new IllegalStateException("ivfpq index: closed during training"));
                    return;
                }
                org.roaringbitmap.IntIterator it = t.added.getIntIterator();
                while (!t.collapsed && it.hasNext()) {
                    int ord = it.next();
                    if (store.contains(ord) && !t.next.holds(ord)) {
                        t.next.insert(ord, store.block(), store.offset(store.slotOf(ord)));
                    }
                }
                // Nothing of a dead anchor is left to move here: every removal batch finished
                // the next state as it went (finishRemovals), and encoding never picks a
                // disabled anchor.
                dropState();
                if (t.collapsed) {
                    t.next.wipe();
                } else {
                    state = t.next;
                }
                inFlight = null;
            } finally {
                lock.writeLock().unlock();
            }
            t.done.complete(null);
        } catch (Throwable e) {
            lock.writeLock().lock();
            try {
                if (t.next != null) {
                    t.next.wipe();
                }
                if (t.sample != null) {
                    Arrays.fill(t.sample, 0f);
                }
                if (inFlight == t) {
                    inFlight = null;
                }
            } finally {
                lock.writeLock().unlock();
            }
            t.done.completeExceptionally(e);
        }
    }

    /**
     * Too few live vectors to train: the index is flat (the old codebooks, if any, are dropped).
     */
    private void finishTooFew(Training t) {
        lock.writeLock().lock();
        try {
            dropState();
            inFlight = null;
        } finally {
            lock.writeLock().unlock();
        }
        t.done.complete(null);
    }

    /** Stops a training in progress (it installs nothing) and releases its thread. */
    @Override
    public void close() {
        closed = true;
        trainer.shutdown();
    }

    // ------------------------------------------------------------------ search

    /**
     * Searches with {@code nprobe} (lists probed) and {@code rerank} (exact re-rank depth) from
     * {@code params}, defaulting to the index's. While flat, the search is exact. A filter
     * selecting fewer vectors than the probed lists would hold is answered exactly from the stored
     * vectors (cheaper and exact).
     */
    @Override
    public SearchResult search(float[] query, int k, Accept accept, SearchParams searchParams) {
        if (searchParams == null) {
            searchParams =
                    SearchParams.DEFAULTS; // the SPI's contract: null means this index's defaults
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
            if (state == null) {
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
        TrainedState st = state;
        InvertedList[] lists = st.lists;
        float[] routing = st.routing;
        int nlist = params.nlist();
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
        int depth = rerank > 0 ? Math.max(k, rerank) : k;
        TopK candidates = new TopK(depth);
        long visited =
                st.osq == null
                        ? scanPq(st, q, probed, accept, candidates)
                        : scanOsq(st, q, probed, accept, candidates);
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

    /**
     * OSQ: the query rotated once, then per probed list its residual to the list's centre quantized
     * once and every entry scored from its levels and corrections (see {@link ScalarCodes}).
     *
     * @return entries scanned
     */
    private long scanOsq(TrainedState st, float[] q, int[] probed, Accept accept, TopK candidates) {
        ScalarCodes.QueryScorer scorer = st.osq.scorer();
        scorer.setQuery(q);
        float[] out = new float[64];
        long visited = 0;
        for (int list : probed) {
            InvertedList il = st.lists[list];
            int size = il.size();
            if (out.length < size) {
                out = new float[Math.max(size, out.length * 2)];
            }
            scorer.setList(st.centres[list]);
            scorer.score(il.codes(), 0, size, out, 0);
            visited += size;
            for (int i = 0; i < size; i++) {
                int ord = il.ordinalAt(i);
                if (accept != Accept.ALL && !accept.accepts(ord)) {
                    continue;
                }
                candidates.offer(ord, approximateScore(out[i]));
            }
        }
        return visited;
    }

    /**
     * PQ: one per-query table of sub-vector dot products, then per probed list the list's table
     * (FAISS's precomputed-table trick for L2) and one batch scan of its codes.
     *
     * @return entries scanned
     */
    private long scanPq(TrainedState st, float[] q, int[] probed, Accept accept, TopK candidates) {
        Codebooks cb = st.cb;
        int m = params.m();
        int ksub = params.ksub();
        int mk = m * ksub;
        boolean dot = metric == Metric.DOT;
        // 2. The per-query table: dot products of each query sub-vector with each sub-centroid.
        float[] qTable = new float[mk];
        kernels.pqDotTable(q, cb.pq.codebooks(), m, ksub, qTable);
        if (!dot) {
            for (int t = 0; t < mk; t++) {
                qTable[t] *= -2f;
            }
        }
        float[] listTable = dot ? qTable : new float[mk];
        float[] out = new float[64];
        long visited = 0;
        for (int list : probed) {
            InvertedList il = st.lists[list];
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
        return visited;
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
     * Lists with their routing centroids and members, the codebooks' training lineage (live members
     * only) and counts: trainings so far (each a retrain event), lineage members removed since the
     * last one, whether the codebooks are tainted.
     */
    @Override
    public dev.nepenthe.core.index.IndexDescription describe() {
        lock.readLock().lock();
        try {
            java.util.Map<String, Number> stats = new java.util.TreeMap<>();
            stats.put("nlist", params.nlist());
            stats.put("m", params.m());
            stats.put("osqBits", osq == null ? 0 : params.bits());
            Codebooks cb = state == null ? null : state.cb;
            InvertedList[] lists = state == null ? null : state.lists;
            float[] routing = state == null ? null : state.routing;
            stats.put("trained", state != null ? 1 : 0);
            stats.put("training", inFlight != null ? 1 : 0);
            stats.put("trainings", trainings);
            stats.put("trainingMembers", cb == null ? 0 : cb.trainedOn());
            stats.put("trainingMembersRemoved", cb == null ? 0 : cb.removedMembers());
            stats.put("deadAnchors", cb == null ? 0 : params.nlist() - cb.liveAnchors());
            java.util.List<dev.nepenthe.core.index.IndexDescription.Partition> parts =
                    new java.util.ArrayList<>();
            if (lists != null) {
                for (int l = 0; l < lists.length; l++) {
                    InvertedList list = lists[l];
                    int[] members = new int[list.size()];
                    for (int i = 0; i < members.length; i++) {
                        members[i] = list.ordinalAt(i);
                    }
                    parts.add(
                            new dev.nepenthe.core.index.IndexDescription.Partition(
                                    l,
                                    Arrays.copyOfRange(routing, l * dim, (l + 1) * dim),
                                    members));
                }
            }
            int[] lin =
                    cb == null
                            ? null
                            : RoaringBitmap.andNot(cb.lineage(), cb.lineageRemoved()).toArray();
            return new dev.nepenthe.core.index.IndexDescription(
                    KIND, store.size(), stats, parts, lin);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The routing centroid of a list (the mean of its members; the anchor when empty), or null
     * while flat.
     */
    public float[] centroid(int list) {
        lock.readLock().lock();
        try {
            return state == null
                    ? null
                    : Arrays.copyOfRange(state.routing, list * dim, (list + 1) * dim);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** The ordinals in a list, in entry order (empty while flat). */
    public int[] listMembers(int list) {
        lock.readLock().lock();
        try {
            if (state == null) {
                return new int[0];
            }
            InvertedList l = state.lists[list];
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
            return state == null || !state.holds(ordinal) ? -1 : state.ordToList[ordinal];
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Bytes the inverted lists hold per live vector (m code bytes plus a 4-byte ordinal, plus
     * slack).
     */
    public double listBytesPerVector() {
        lock.readLock().lock();
        try {
            if (state == null || store.size() == 0) {
                return 0;
            }
            long bytes = 0;
            for (InvertedList l : state.lists) {
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
     *
     * <ul>
     *   <li>the vector store's maps agree and its freed floats are zero; no removed ordinal is
     *       live;
     *   <li>every list entry is a live, non-removed ordinal, appears once, and sits where the
     *       ordinal maps say; freed list bytes are zero; codes = live vectors;
     *   <li>every non-empty list's routing centroid equals the mean of its members, recomputed here
     *       from the stored vectors (largest relative deviation reported); an empty list's equals
     *       its anchor; list counts equal the sums' counts;
     *   <li>codebooks (see {@link Codebooks#check}): every anchor and PQ sub-centroid equals the
     *       mean recomputed from its surviving training members, centroids without members are
     *       zero, removed members' records are wiped, ranking layouts and score tables hold the
     *       current centroids and nothing older.
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

    @Override
    public void writeTo(java.io.DataOutputStream out) throws IOException {
        lock.readLock().lock();
        try {
            IvfPqFile.writeTo(out, this);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Reads a file written by {@link #save}; dimension and metric must match {@code config}. The
     * index parameters and seed come from the file (the codes were made with them); the parameters
     * in {@code config} are not applied.
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
        return state.cb.anchors;
    }

    ProductQuantizer quantizer() {
        return state == null ? null : state.cb.pq;
    }

    Codebooks codebooks() {
        return state == null ? null : state.cb;
    }

    TrainedState trainedState() {
        return state;
    }

    /** Bytes of one list entry's code: m with PQ, OSQ's entry size otherwise. */
    int entryBytes() {
        return osq == null ? params.m() : osq.bytesPerVector();
    }

    InvertedList list(int i) {
        return state.lists[i];
    }

    float[] routing() {
        return state.routing;
    }

    int sumCount(int list) {
        return state.sums.count(list);
    }

    /** The list the ordinal maps say holds {@code ord}, or -1. */
    int mappedList(int ord) {
        return ord < state.ordToList.length ? state.ordToList[ord] : -1;
    }

    /** The position the ordinal maps say {@code ord} has in its list. */
    int mappedPos(int ord) {
        return ord < state.ordToPos.length ? state.ordToPos[ord] : -1;
    }

    /**
     * Installs loaded state: the codebooks (recomputed from their members' stored vectors) and list
     * entries (codes as written); rebuilds the ordinal maps, the sums and routing centroids from
     * the stored vectors.
     */
    void installLoaded(
            long trainingCount,
            RoaringBitmap removedOrds,
            Codebooks codebooks,
            int[][] listOrds,
            byte[][] listCodes,
            float[][] centres,
            int[] centreMembers) {
        trainings = trainingCount;
        removed.or(removedOrds);
        if (codebooks == null) {
            return;
        }
        int nlist = params.nlist();
        TrainedState st = new TrainedState(codebooks, kernels, store, store.ordinalCapacity(), osq);
        int[] scratch = new int[Math.max(1, params.m())];
        int listed = 0;
        for (int list = 0; list < nlist; list++) {
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
                        i * entryBytes(),
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
        state = st;
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

        @Override
        public boolean persists() {
            return true;
        }

        @Override
        public VectorIndex readFrom(IndexConfig config, java.io.DataInputStream in)
                throws IOException {
            return IvfPqFile.readFrom(config, in);
        }
    }
}
