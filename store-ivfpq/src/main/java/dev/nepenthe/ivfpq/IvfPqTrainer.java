package dev.nepenthe.ivfpq;

import dev.nepenthe.core.internal.index.IndexLock;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs an {@link IvfPqIndex}'s trainings on a thread of their own, one at a time, and swaps each
 * finished one in. It exists apart from the index so that the index keeps adds, removes and
 * queries, and this class the order in which a training takes and drops the index's lock (see
 * {@link IvfPqIndex#trainInBackground()}); the steps themselves are {@link Training}'s.
 *
 * <p>Thread-safe: its state is guarded by the index's lock, which it shares.
 */
final class IvfPqTrainer {
    /** Chunk of ordinals encoded per read-lock hold. */
    private static final int ENCODE_CHUNK = 4096;

    private final IvfPqIndex index;
    private final IndexLock lock;
    private final SwapRemoveVectors store;
    private final IvfPqParams params;

    /** Trainings started so far (each a retrain event once the first has served). */
    private long trainings;

    /** The training in progress, if any (set and cleared under the write lock). */
    private Training inFlight;

    /** At most one thread, which exits when idle. */
    private final ThreadPoolExecutor executor =
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

    private volatile boolean closed;

    IvfPqTrainer(IvfPqIndex index, IndexLock lock) {
        this.index = index;
        this.lock = lock;
        this.store = index.store();
        this.params = index.params();
    }

    /** The training in progress, or null (caller holds the index's lock). */
    Training inFlight() {
        return inFlight;
    }

    /** Trainings started so far (caller holds the index's lock). */
    long trainings() {
        return trainings;
    }

    /** Restores the count a file recorded (before the index is published). */
    void setTrainings(long count) {
        trainings = count;
    }

    /** See {@link IvfPqIndex#trainInBackground()}. */
    CompletableFuture<Void> start() {
        lock.writeLock().lock();
        try {
            if (inFlight != null) {
                return inFlight.done;
            }
            if (closed) {
                return CompletableFuture.failedFuture(
                        new IllegalStateException("ivfpq index: closed"));
            }
            Training t = new Training(++trainings, index.dimension());
            inFlight = t;
            executor.execute(() -> run(t));
            return t.done;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Starts a training for an add or a removal, which do not wait for it: a training that fails
     * leaves the index as it was (flat, or on its old codebooks); the future is for callers of
     * {@link IvfPqIndex#trainInBackground()}, who wait.
     */
    @SuppressWarnings("FutureReturnValueIgnored") // nobody waits for a training an add started
    void startUnobserved() {
        start();
    }

    /** Waits for the training in progress, if any. */
    void await() {
        CompletableFuture<Void> f = lock.read(() -> inFlight == null ? null : inFlight.done);
        if (f != null) {
            f.join();
        }
    }

    /** See {@link IvfPqIndex#hasResidue()}. */
    boolean hasResidue() {
        return lock.readBoolean(
                () ->
                        inFlight != null
                                && inFlight.next == null
                                && !inFlight.removedFromSample.isEmpty());
    }

    /** See {@link IvfPqIndex#trainingProgress()}. */
    Optional<IvfPqIndex.TrainingProgress> progress() {
        return lock.read(
                () ->
                        Optional.ofNullable(inFlight)
                                .map(
                                        t ->
                                                new IvfPqIndex.TrainingProgress(
                                                        t.number, t.phase, t.encoded, t.total)));
    }

    /** Stops a training in progress (it installs nothing) and releases the thread. */
    void close() {
        closed = true;
        executor.shutdown();
    }

    private void run(Training t) {
        try {
            int dim = index.dimension();
            SplittableRandom rnd =
                    new SplittableRandom(index.seed() + 0x9E3779B97F4A7C15L * t.number);
            // 1. The sample: every live vector, or trainSize of them chosen at random (read lock).
            int s = lock.readInt(() -> t.takeSample(store, params, rnd));
            if (s == 0) {
                finishTooFew(t);
                return;
            }
            // 2. The k-means, holding no lock: removals zero their sample rows meanwhile.
            Assignment assignment =
                    Assignment.compute(
                            index.kernels(), params, dim, t.sample, s, rnd, p -> t.phase = p);
            index.duringRetrainCompute.run();
            // 3. Codebooks from the sample as it now is; those removed meanwhile subtracted.
            t.phase = "building codebooks";
            lock.readRun(
                    () ->
                            t.build(
                                    index.kernels(),
                                    index.metric(),
                                    params,
                                    store,
                                    index.osq(),
                                    assignment));
            // 4. Encode every live vector, a chunk of ordinals per read-lock hold; removals keep
            // the new state current between chunks, adds are caught at the swap.
            t.phase = "encoding";
            boolean more = true;
            for (int lo = 0; more && !closed; lo += ENCODE_CHUNK) {
                int from = lo;
                more = lock.readBoolean(() -> t.encodeChunk(store, from, ENCODE_CHUNK));
            }
            // 5. The swap: what was added meanwhile, the batch follow-up, then the new state
            // serves.
            t.phase = "installing";
            lock.writeLock().lock();
            try {
                if (closed) {
                    t.abandon();
                    inFlight = null;
                    t.done.completeExceptionally(
                            new IllegalStateException("ivfpq index: closed during training"));
                    return;
                }
                t.catchUp(store);
                // Nothing of a dead anchor is left to move here: every removal batch finished
                // the next state as it went (finishRemovals), and encoding never picks a
                // disabled anchor.
                if (t.collapsed) {
                    t.next.wipe();
                }
                index.install(t.collapsed ? null : t.next);
                inFlight = null;
            } finally {
                lock.writeLock().unlock();
            }
            t.done.complete(null);
        } catch (Throwable e) {
            lock.writeLock().lock();
            try {
                t.abandon();
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
            index.install(null);
            inFlight = null;
        } finally {
            lock.writeLock().unlock();
        }
        t.done.complete(null);
    }
}
