package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.engine.BackgroundPriority;
import dev.nepenthe.core.internal.io.CrashPoints;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The forget worker: one thread that carries operations on through cleanup, verification and
 * sealing, in batches of the operations that wait for the same step ({@link BatchQueue}), and the
 * pool their parallel work runs in. Apart from the protocol, which takes requests on the callers'
 * threads, because this is the only code that runs on the worker: how batches are taken, how a
 * failure stops one operation or a batch, and how a simulated crash stops everything. Its state is
 * guarded by the protocol's monitor ({@link ForgetContext#monitor}).
 */
final class ForgetWorker {

    private static final System.Logger LOG = System.getLogger(ForgetWorker.class.getName());

    private final ForgetContext ctx;
    private final CleanupPhase cleanup;
    private final VerifyPhase verify;
    private final SealPhase seal;
    private final ExecutorService worker;
    private final ForkJoinPool parallel;

    /**
     * The protocol's writes, shared: held for each batch step, so a pause of the protocol's writes
     * ({@code ForgetProtocol.pauseWrites}) waits for the step under way and holds the next.
     */
    private final Lock writes;

    /** What the worker has yet to advance; under the monitor. */
    private final BatchQueue queue = new BatchQueue();

    /** Whether a drain of the queue is queued on or running in the worker; under the monitor. */
    private boolean draining;

    /**
     * Set by a simulated crash (tests): the worker takes nothing more, as if the process had died.
     */
    private boolean crashed;

    private volatile boolean closing;

    ForgetWorker(
            ForgetContext ctx,
            CleanupPhase cleanup,
            VerifyPhase verify,
            SealPhase seal,
            int workerNice,
            Lock writes) {
        this.ctx = ctx;
        this.writes = writes;
        this.cleanup = cleanup;
        this.verify = verify;
        this.seal = seal;
        this.parallel =
                new ForkJoinPool(
                        Runtime.getRuntime().availableProcessors(),
                        pool -> {
                            ForkJoinWorkerThread t =
                                    ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                            t.setName("nepenthe-forget-parallel-" + t.getPoolIndex());
                            t.setDaemon(true);
                            return t;
                        },
                        null,
                        false);
        this.worker =
                Executors.newSingleThreadExecutor(
                        r -> {
                            // Searches come first: the worker runs at a lower OS priority
                            // (search latency while forgets run: docs/BENCHMARKS.md).
                            Thread t =
                                    new Thread(
                                            () -> {
                                                if (workerNice > 0) {
                                                    BackgroundPriority.lowerCurrentThread(
                                                            workerNice);
                                                }
                                                r.run();
                                            },
                                            "nepenthe-forget");
                            t.setDaemon(true);
                            return t;
                        });
    }

    /** Whether a simulated crash stopped the worker; under the monitor. */
    boolean crashed() {
        return crashed;
    }

    /**
     * Stops the worker after the batch step it is in (waiting up to two minutes); unfinished
     * operations resume at the next open. Returns whether it stopped with nothing in hand.
     */
    boolean stop() {
        closing = true;
        worker.shutdown();
        boolean stopped = false;
        try {
            if (!worker.awaitTermination(2, TimeUnit.MINUTES)) {
                LOG.log(
                        Level.WARNING,
                        "the forget worker did not stop within 2 minutes; closing anyway");
            } else {
                stopped = true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        parallel.shutdown();
        return stopped;
    }

    void submit(String id) {
        synchronized (ctx.monitor) {
            if (closing) {
                return;
            }
            queue.add(id);
            if (draining) {
                return; // the worker takes it with the next batch
            }
            draining = true;
        }
        // The phases run in the forget's own pool, so that their parallel streams (the probe on
        // more than two cores, a REBUILD's index rebuild) stay out of the common pool: the pool's
        // threads are started from the worker and inherit its lower priority, while the common
        // pool's threads, shared with the application, never do.
        // The storage's crash points on the way report to this store's test points (CrashPoints).
        worker.execute(
                () ->
                        parallel.submit(
                                        () ->
                                                CrashPoints.during(
                                                        ctx.points,
                                                        () -> {
                                                            drain();
                                                            return null;
                                                        }))
                                .join());
    }

    /** Takes batches off the queue and advances each one step, until nothing waits. */
    private void drain() {
        try {
            while (true) {
                List<LiveOperation> batch;
                synchronized (ctx.monitor) {
                    batch = closing || crashed ? List.of() : queue.take(ctx.operations);
                    if (batch.isEmpty()) {
                        draining =
                                false; // in the same hold as the take: a submit from now on starts
                        // a drain
                        return;
                    }
                }
                List<LiveOperation> again;
                // Outside the monitor: a pause waits for this step while the monitor is free.
                writes.lock();
                try {
                    again = advance(batch);
                } finally {
                    writes.unlock();
                }
                synchronized (ctx.monitor) {
                    queue.putBack(again);
                }
            }
        } finally {
            synchronized (ctx.monitor) {
                draining = false;
            }
        }
    }

    /**
     * Advances a batch one step (see {@link BatchQueue}): holds and cleanup for operations waiting
     * for cleanup, or verification and sealing for operations in VERIFYING. A failure in an
     * operation's own part stops that operation only; a failure of a shared part stops every
     * operation of the batch (each resumes at the next open).
     *
     * @return the operations with a step still to go, oldest first, for the queue's front
     */
    private List<LiveOperation> advance(List<LiveOperation> batch) {
        try {
            // A read-only store changes nothing: each operation waits, scope blocked, for a reopen.
            ctx.fault.ensureWritable();
            if (stateOf(batch.get(0)) == OperationState.VERIFYING) {
                verifyAndSeal(batch);
                return waiting(batch);
            }
            List<LiveOperation> deferred = cleanup.cleanup(batch);
            List<LiveOperation> again = waiting(batch.subList(0, batch.size() - deferred.size()));
            again.addAll(deferred);
            return again;
        } catch (ForgetCrash.Simulated crash) {
            synchronized (ctx.monitor) {
                // As if the process died here: the worker takes nothing more, and every operation
                // of the batch that had not finished reports the crash.
                crashed = true;
                for (LiveOperation op : batch) {
                    if (!op.pub.state.isSettled()
                            || (op.pub.state == OperationState.SEALED && op.pub.receipt == null)) {
                        op.failure = crash.getMessage();
                    }
                }
                ctx.monitor.notifyAll();
            }
            return List.of();
        } catch (Throwable t) {
            for (LiveOperation op : batch) {
                if (!stateOf(op).isSettled() && op.failure == null) {
                    ctx.fail(op, t);
                }
            }
            return List.of();
        }
    }

    /**
     * VERIFYING for a batch: the structure checks once for all (see {@link
     * VerifyPhase#shareChecks}), then each operation's own proofs, and each clean one sealed before
     * the next is verified.
     */
    private void verifyAndSeal(List<LiveOperation> batch) throws IOException {
        VerifyPhase.Shared shared = verify.shareChecks(batch);
        int sealed = 0;
        for (LiveOperation op : batch) {
            if (stateOf(op) != OperationState.VERIFYING || op.failure != null) {
                continue;
            }
            boolean[] clean = {false};
            if (!ctx.onItsOwn(op, () -> clean[0] = verify.verify(op, shared)) || !clean[0]) {
                continue; // in NEEDS_REVIEW, or stopped on a failure of its own
            }
            // Sealing starts after verify's frame is gone: its locals hold the forgotten
            // records, which must not outlive SEALED (heap dumps).
            if (ctx.onItsOwn(op, () -> seal.seal(op, null))
                    && ++sealed == 1
                    && op != batch.get(batch.size() - 1)) {
                // One operation of the batch sealed, the others not yet verified.
                ctx.crashPoint("batch-sealed-partway");
            }
        }
    }

    private OperationState stateOf(LiveOperation op) {
        synchronized (ctx.monitor) {
            return op.pub.state;
        }
    }

    /**
     * The operations of {@code ops} with a step still to go (neither settled nor stopped), in
     * order.
     */
    private List<LiveOperation> waiting(List<LiveOperation> ops) {
        List<LiveOperation> out = new ArrayList<>();
        synchronized (ctx.monitor) {
            for (LiveOperation op : ops) {
                if (!op.pub.state.isSettled() && op.failure == null) {
                    out.add(op);
                }
            }
        }
        return out;
    }
}
