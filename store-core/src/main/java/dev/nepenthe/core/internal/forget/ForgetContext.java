package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * What the forget engine's parts share: the operations by id, the collections and registered
 * surfaces, where operations and evidence are kept, and the one monitor under which an
 * operation's state changes (the protocol's). A state change is saved under the monitor, and
 * saving wakes everyone who waits for an operation to settle.
 */
final class ForgetContext {

    /** Guards {@link #operations} and every operation's fields; waiters wait on it. */
    final Object monitor;
    /** Every operation this store knows, in the order it learned of them; under {@link #monitor}. */
    final Map<String, LiveOperation> operations = new LinkedHashMap<>();
    final Supplier<List<CollectionEngine>> engines;
    final List<ErasureSurface> surfaces = new CopyOnWriteArrayList<>();
    final OperationStore store;
    final AnchoredLedger ledger;
    final ForgetEvidence evidence;
    final SnapshotRegistry snapshots;
    final ScopeHashes hashes;
    final WriteFences fences;

    ForgetContext(Object monitor, Supplier<List<CollectionEngine>> engines, OperationStore store, AnchoredLedger ledger,
            ForgetEvidence evidence, SnapshotRegistry snapshots, ScopeHashes hashes) {
        this.monitor = monitor;
        this.engines = engines;
        this.store = store;
        this.ledger = ledger;
        this.evidence = evidence;
        this.snapshots = snapshots;
        this.hashes = hashes;
        this.fences = new WriteFences(hashes);
    }

    /** The collections as the forget engine works on them (a view made per call: collections come and go). */
    List<CollectionEraser> collections() {
        return engines.get().stream().map(CollectionEraser::new).toList();
    }

    /** Saves an operation and wakes its waiters; the caller holds {@link #monitor}. */
    void save(LiveOperation op, boolean withSecret) throws IOException {
        store.save(op, withSecret);
        monitor.notifyAll();
    }

    /** Appends an entry to the evidence ledger (anchored in the operation log). */
    LedgerEntry appendEvidence(Map<String, Object> body) throws IOException {
        synchronized (monitor) {
            return ledger.append(body);
        }
    }

    /** Rebuilds the write fences from every operation and re-admission. */
    void refreshFences() {
        synchronized (monitor) {
            fences.refresh(operations.values(), store.readmissions().values());
        }
    }
}
