package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * What the forget engine's parts share: the operations by id, the collections and registered
 * surfaces, where operations and evidence are kept, and the one monitor under which an operation's
 * state changes (the protocol's). A state change is saved under the monitor, and saving wakes
 * everyone who waits for an operation to settle.
 */
final class ForgetContext {

    private static final System.Logger LOG = System.getLogger(ForgetContext.class.getName());

    /** Guards {@link #operations} and every operation's fields; waiters wait on it. */
    final Object monitor;

    /**
     * Every operation this store knows, in the order it learned of them; under {@link #monitor}.
     */
    final Map<String, LiveOperation> operations = new LinkedHashMap<>();

    final Supplier<List<CollectionEngine>> engines;
    final List<ErasureSurface> surfaces = new CopyOnWriteArrayList<>();
    final OperationStore store;
    final AnchoredLedger ledger;
    final ForgetEvidence evidence;
    final SnapshotRegistry snapshots;
    final ScopeHashes hashes;
    final WriteFences fences;
    final HeldRecords held;

    /**
     * The store's read-only latch: a step that fails to write trips it, and nothing advances after.
     */
    final StorageFault fault;

    /** The store's test points: where a test stops the worker dead. */
    final TestPoints points;

    /**
     * The protocol's writes: held shared by every step that writes the keystore folder, exclusively
     * by a pause (see {@code ForgetProtocol.pauseWrites}).
     */
    final ReentrantReadWriteLock writes;

    ForgetContext(
            Object monitor,
            Supplier<List<CollectionEngine>> engines,
            OperationStore store,
            AnchoredLedger ledger,
            ForgetEvidence evidence,
            SnapshotRegistry snapshots,
            ScopeHashes hashes,
            StorageFault fault,
            TestPoints points,
            ReentrantReadWriteLock writes) {
        this.monitor = monitor;
        this.writes = writes;
        this.fault = fault;
        this.points = points;
        this.engines = engines;
        this.store = store;
        this.ledger = ledger;
        this.evidence = evidence;
        this.snapshots = snapshots;
        this.hashes = hashes;
        this.fences = new WriteFences(hashes);
        this.held = new HeldRecords(hashes);
    }

    /**
     * The collections as the forget engine works on them (a view made per call: collections come
     * and go).
     */
    List<CollectionEraser> collections() {
        return engines.get().stream().map(CollectionEraser::new).toList();
    }

    /** A call into a registered surface that returns what it counted. */
    @FunctionalInterface
    interface SurfaceCall<T> {
        T run() throws IOException;
    }

    /**
     * Runs a call into a registered surface with this thread's share of {@link #writes} let go
     * meanwhile, and taken again after. A surface is a component outside the store (a replicated
     * log, a cache) and writes none of the store's files, and it may wait for something that waits
     * for a pause: a replicated log's surface waits for the group's other members, while the
     * group's leader copies its store to one of them. Between two writes of a step the files are a
     * state a crash could leave, which is all a pause needs. The caller holds no collection's
     * writer mutex and not {@link #monitor}.
     */
    <T> T atSurface(SurfaceCall<T> call) throws IOException {
        int held = writes.getReadHoldCount();
        for (int i = 0; i < held; i++) {
            writes.readLock().unlock();
        }
        try {
            return call.run();
        } finally {
            for (int i = 0; i < held; i++) {
                writes.readLock().lock();
            }
        }
    }

    /** {@link #atSurface} for a call that returns nothing and throws nothing checked. */
    void runAtSurface(Runnable call) {
        try {
            atSurface(
                    () -> {
                        call.run();
                        return null;
                    });
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a Runnable throws none
        }
    }

    /** A named phase at which a test may stop the worker dead (see {@link ForgetCrash}). */
    void crashPoint(String where) {
        ForgetCrash.point(points, where);
    }

    /** Saves an operation and wakes its waiters; the caller holds {@link #monitor}. */
    void save(LiveOperation op, boolean withSecret) throws IOException {
        store.save(op, withSecret);
        monitor.notifyAll();
    }

    /**
     * Saves several operations with one fsync and wakes their waiters; the caller holds {@link
     * #monitor}. A crash during it leaves some of them saved and the rest as they were, as a crash
     * between separate saves would: each resumes from its own last state.
     */
    void saveAll(List<LiveOperation> ops, boolean withSecret) throws IOException {
        store.saveAll(ops, withSecret);
        monitor.notifyAll();
    }

    /** A step of one operation inside a batch's step. */
    @FunctionalInterface
    interface OwnStep {
        void run() throws IOException;
    }

    /**
     * Runs one operation's own part of a batch's step: if it fails, that operation stops (it
     * resumes at the next open) and the others of the batch go on. A simulated crash stops
     * everything, as a real one would.
     *
     * @return whether the step completed
     */
    boolean onItsOwn(LiveOperation op, OwnStep step) {
        try {
            step.run();
            return true;
        } catch (ForgetCrash.Simulated crash) {
            throw crash;
        } catch (Throwable t) {
            fail(op, t);
            return false;
        }
    }

    /**
     * Stops an operation on a failure: it waits, its note names the failure, and it resumes at the
     * next open.
     */
    void fail(LiveOperation op, Throwable t) {
        // Messages of the store's exceptions name files, counts and ids of operations, never
        // content.
        LOG.log(
                Level.ERROR,
                "forget operation " + op.pub.id + " stopped in " + op.pub.state + ": " + t);
        fault.trip(t);
        synchronized (monitor) {
            op.failure = t.getClass().getSimpleName() + ": " + t.getMessage();
            op.pub.note =
                    "stopped in "
                            + op.pub.state
                            + " ("
                            + op.failure
                            + "); it resumes at the next open";
            monitor.notifyAll();
        }
    }

    /** Appends an entry to the evidence ledger (anchored in the operation log). */
    LedgerEntry appendEvidence(Map<String, Object> body) throws IOException {
        synchronized (monitor) {
            return ledger.append(body);
        }
    }

    /** Publishes the active legal holds to the delete guard. */
    void refreshHolds() {
        synchronized (monitor) {
            held.refresh(store.holds().values());
        }
    }

    /** Rebuilds the write fences from every operation and re-admission. */
    void refreshFences() {
        synchronized (monitor) {
            fences.refresh(operations.values(), store.readmissions().values());
        }
    }
}
