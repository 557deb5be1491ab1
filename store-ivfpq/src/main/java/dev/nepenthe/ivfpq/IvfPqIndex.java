package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IndexDescription;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.PersistentIndexFactory;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.BlockBackedIndex;
import dev.nepenthe.core.internal.index.IndexChecks;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
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
 * The trained codebooks are exact functions of the training vectors that survive: removing a
 * training member subtracts it from every centroid it shaped, with no retrain ({@code Codebooks}
 * says what each centroid is and what stays second-order; docs/FORGET.md the recall this costs). An
 * anchor left without members takes no vectors (its list moves to the nearest live anchors); codes
 * naming a sub-centroid left without members are re-encoded in that subspace. A full retrain runs
 * on {@link #retrain()}, at REBUILD (a fresh index), and by itself ({@code autoRetrain=1}) once
 * {@code driftLimit} percent of the training sample has been removed, because then the codebooks
 * describe too few of the vectors they encode. When too few vectors survive to train ({@link
 * IvfPqParams#minTrainingVectors()}), a retrain drops the codebooks altogether and the index is
 * flat again.
 *
 * <h2>Scoring</h2>
 *
 * Queries probe the lists whose routing centroids are nearest and score their entries from the
 * codes, optionally re-ranking the best exactly (see {@code IvfPqSearcher} for the tables).
 *
 * <h2>Concurrency</h2>
 *
 * One read-write lock: searches run in parallel; adds and removes are exclusive and brief. A
 * training takes the read lock to copy its sample, none for its k-means, the read lock a chunk at a
 * time to encode, and the write lock only to swap (see {@link #trainInBackground()}; the steps are
 * {@code IvfPqTrainer}'s).
 */
public final class IvfPqIndex extends BlockBackedIndex {

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

    private final IvfPqSearcher searcher;

    /** The OSQ codec (a seeded rotation, no trained state), or null with PQ codes. */
    private final ScalarCodes osq;

    /** Ordinals removed and not added again: the checker proves none survives anywhere. */
    private final RoaringBitmap removed = new RoaringBitmap();

    /**
     * Test hook: runs in a training after the k-means (no lock held), before the codebooks are
     * built.
     */
    Runnable duringRetrainCompute = () -> {};

    /** What the index serves from once trained; null while it is flat. */
    private TrainedState state;

    /** Runs trainings in the background and swaps them in. */
    private final IvfPqTrainer trainer;

    public IvfPqIndex(int dimension, Metric metric, IvfPqParams params, long seed) {
        this(dimension, metric, params, seed, Kernels.get());
    }

    public IvfPqIndex(
            int dimension, Metric metric, IvfPqParams params, long seed, VectorKernels kernels) {
        super(KIND, dimension, metric);
        if (dimension % params.m() != 0) {
            throw new IllegalArgumentException(
                    "ivfpq index: m=" + params.m() + " must divide the dimension " + dimension);
        }
        this.dim = dimension;
        this.metric = metric;
        this.params = params;
        this.seed = seed;
        this.kernels = kernels;
        this.searcher = new IvfPqSearcher(dimension, metric, kernels, params, store);
        this.osq =
                params.codes() == IvfPqParams.Codes.OSQ
                        ? new ScalarCodes(dimension, metric, params.bits(), seed)
                        : null;
        this.trainer = new IvfPqTrainer(this, lock);
    }

    /** An index from a collection's config (see {@link IvfPqParams} for the parameter names). */
    public static IvfPqIndex create(IndexConfig config) {
        return new IvfPqIndex(
                config.dimension(), config.metric(), IvfPqParams.from(config), config.seed());
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
                throw IndexChecks.alreadyLive(ordinal);
            }
            store.add(ordinal, prepared);
            removed.remove(ordinal);
            if (state != null) {
                state.insert(ordinal, prepared, 0);
            }
            Training inFlight = trainer.inFlight();
            if (inFlight != null) {
                inFlight.added.add(ordinal);
            } else if (state == null && store.size() >= params.trainSize()) {
                startTraining = true;
            }
        } finally {
            lock.writeLock().unlock();
        }
        if (startTraining) {
            trainer.startUnobserved();
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
            Training inFlight = trainer.inFlight();
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
            trainer.startUnobserved();
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
        Training inFlight = trainer.inFlight();
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
        Codebooks cb = codebooks();
        return cb != null
                && cb.removedMembers() * 100L > (long) params.driftLimit() * cb.trainedOn();
    }

    private void dropState() {
        if (state != null) {
            state.wipe();
            state = null;
        }
    }

    // ------------------------------------------------------------------ training

    /**
     * True once the index has codebooks (false while it is flat, including during its first
     * training).
     */
    public boolean isTrained() {
        return lock.readBoolean(() -> state != null);
    }

    /**
     * The share of the current codebooks' training sample removed since they were trained, in
     * {@code [0, 1]}; 0 while flat. The codebooks hold nothing of the removed ones (they are exact
     * means of the rest); past {@code driftLimit} they describe too few of the vectors they encode,
     * and {@code autoRetrain=1} retrains.
     */
    public double trainingDrift() {
        return lock.readDouble(
                () -> {
                    Codebooks cb = codebooks();
                    return cb == null || cb.trainedOn() == 0
                            ? 0
                            : cb.removedMembers() / (double) cb.trainedOn();
                });
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
        return lock.read(
                () -> {
                    Codebooks cb = codebooks();
                    return cb == null
                            ? new RoaringBitmap()
                            : RoaringBitmap.andNot(cb.lineage(), cb.lineageRemoved());
                });
    }

    /**
     * Where a training stands: its number, the step it is on ("sampling", "coarse k-means", "PQ
     * k-means", "building codebooks", "encoding", "installing"), and for encoding the vectors done
     * out of those to do.
     */
    public record TrainingProgress(long training, String phase, long done, long total) {}

    /** The training in progress, or empty when none is. */
    public Optional<TrainingProgress> trainingProgress() {
        return trainer.progress();
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
        return trainer.start();
    }

    /** Waits for the training in progress, if any (for callers that need trained codebooks now). */
    public void awaitTraining() {
        trainer.await();
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
        return trainer.hasResidue();
    }

    /**
     * Waits for the training in progress (see {@link #hasResidue()}); at most one training's
     * length.
     */
    @Override
    public void purgeResidue() {
        awaitTraining();
    }

    /** Stops a training in progress (it installs nothing) and releases its thread. */
    @Override
    public void close() {
        trainer.close();
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
        // The SPI's contract: null means this index's defaults.
        SearchParams given = searchParams == null ? SearchParams.DEFAULTS : searchParams;
        IndexChecks.checkSearch(query, k, dim);
        int nprobe = given.get("nprobe", params.nprobe());
        int rerank = given.get("rerank", params.rerank());
        if (nprobe <= 0) {
            throw new IllegalArgumentException("nprobe: expected > 0, got " + nprobe);
        }
        if (rerank < 0) {
            throw new IllegalArgumentException("rerank: expected >= 0, got " + rerank);
        }
        float[] q = metric.prepare(query);
        return lock.read(() -> searcher.search(state, q, k, accept, nprobe, rerank));
    }

    // ------------------------------------------------------------------ inspection

    /**
     * Lists with their routing centroids and members, the codebooks' training lineage (live members
     * only) and counts: trainings so far (each a retrain event), lineage members removed since the
     * last one, whether the codebooks are tainted.
     */
    @Override
    public IndexDescription describe() {
        return lock.read(this::describeLocked);
    }

    private IndexDescription describeLocked() {
        Map<String, Number> stats = new TreeMap<>();
        stats.put("nlist", params.nlist());
        stats.put("m", params.m());
        stats.put("osqBits", osq == null ? 0 : params.bits());
        Codebooks cb = codebooks();
        stats.put("trained", state != null ? 1 : 0);
        stats.put("training", trainer.inFlight() != null ? 1 : 0);
        stats.put("trainings", trainer.trainings());
        stats.put("trainingMembers", cb == null ? 0 : cb.trainedOn());
        stats.put("trainingMembersRemoved", cb == null ? 0 : cb.removedMembers());
        stats.put("deadAnchors", cb == null ? 0 : params.nlist() - cb.liveAnchors());
        List<IndexDescription.Partition> parts = new ArrayList<>();
        for (int l = 0; state != null && l < state.lists.length; l++) {
            parts.add(new IndexDescription.Partition(l, state.routingOf(l), state.membersOf(l)));
        }
        int[] lin =
                cb == null
                        ? null
                        : RoaringBitmap.andNot(cb.lineage(), cb.lineageRemoved()).toArray();
        return new IndexDescription(KIND, store.size(), stats, parts, lin);
    }

    /**
     * The routing centroid of a list (the mean of its members; the anchor when empty), or null
     * while flat.
     */
    public float[] centroid(int list) {
        return lock.read(() -> state == null ? null : state.routingOf(list));
    }

    /** The ordinals in a list, in entry order (empty while flat). */
    public int[] listMembers(int list) {
        return lock.read(() -> state == null ? new int[0] : state.membersOf(list));
    }

    /** The list a live ordinal is in, or -1 (also while flat). */
    public int listOf(int ordinal) {
        return lock.readInt(() -> state == null ? -1 : state.listOf(ordinal));
    }

    /**
     * Bytes the inverted lists hold per live vector (m code bytes plus a 4-byte ordinal, plus
     * slack).
     */
    public double listBytesPerVector() {
        return lock.readDouble(
                () ->
                        state == null || store.size() == 0
                                ? 0
                                : state.bytesAllocated() / (double) store.size());
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
     *   <li>codebooks (see {@code CodebooksChecker}): every anchor and PQ sub-centroid equals the
     *       mean recomputed from its surviving training members, centroids without members are
     *       zero, removed members' records are wiped, ranking layouts and score tables hold the
     *       current centroids and nothing older.
     * </ul>
     */
    public Inspection inspect() {
        return lock.read(() -> IvfPqChecker.inspect(this));
    }

    // ------------------------------------------------------------------ persistence

    /**
     * Writes the index: parameters, the live vectors, the removed-ordinal set and, when trained,
     * the codebooks, their lineage and every list's entries. List sums are not written: loading
     * recomputes them from the members, so a loaded centroid is the mean by construction.
     */
    @Override
    public void save(Path file) throws IOException {
        lock.readIo(() -> IvfPqFile.write(file, this));
    }

    @Override
    public void writeTo(DataOutputStream out) throws IOException {
        lock.readIo(() -> IvfPqFile.writeTo(out, this));
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
        return trainer.trainings();
    }

    ScalarCodes osq() {
        return osq;
    }

    /**
     * Serves {@code next} from now on (null: flat), wiping what served before (caller holds the
     * write lock).
     */
    void install(TrainedState next) {
        dropState();
        state = next;
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
        trainer.setTrainings(trainingCount);
        removed.or(removedOrds);
        if (codebooks != null) {
            state =
                    TrainedState.fromLoaded(
                            codebooks,
                            kernels,
                            store,
                            osq,
                            listOrds,
                            listCodes,
                            centres,
                            centreMembers);
        }
    }

    /** Registered through {@code META-INF/services}. */
    public static final class Factory extends PersistentIndexFactory {
        public Factory() {
            super(KIND, IvfPqIndex::create, IvfPqIndex::load, IvfPqFile::readFrom);
        }
    }
}
