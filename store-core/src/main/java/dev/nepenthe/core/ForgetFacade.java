package dev.nepenthe.core;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.Readmission;
import dev.nepenthe.core.internal.forget.ForgetProtocol;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.store.StoreServices;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The forget half of the store's API: forgets, legal holds, re-admissions, surfaces and the
 * evidence ledger, each delegated to the store's forget protocol. Package-private and extended only
 * by {@link Nepenthe}, whose public methods these are: apart so that the store facade's file holds
 * the store's lifecycle and collections, and this one the forget protocol's entry points with their
 * contracts.
 */
abstract sealed class ForgetFacade permits Nepenthe {

    /** The keys, journal, forget protocol and signing key the store's collections share. */
    StoreServices services;

    /** The store's forget protocol; null until the store has started it. */
    ForgetProtocol protocol;

    /** Tripped by the first failed write: from then on the store only serves reads. */
    final StorageFault fault = new StorageFault();

    ForgetFacade() {}

    /**
     * @throws IllegalStateException if the store is closed
     */
    abstract void ensureOpen();

    /**
     * Starts forgetting: marks the scope in every collection (from the moment this returns no
     * search, get or list returns a record in scope, and writes in scope are refused), records the
     * operation durably and returns it, BLOCKED. Cleanup, verification and sealing continue on the
     * store's forget worker; follow them with {@link #operation} or {@link #awaitOperation}. The
     * same idempotency key returns the same operation.
     *
     * <p>Costs, on the caller's thread: in every collection, the writer mutex (so it waits for a
     * write in flight, fsync included) and a pass over the scope's candidates (the subject's
     * records for a subject scope, every record of the tenant otherwise; a metadata scope passes
     * over the tenant's records once more to resolve its filter); then each registered surface's
     * {@link ErasureSurface#block}, and one fsynced write of the operation log. Searches never wait
     * for it.
     *
     * @param request the tenant, scope, idempotency key, reason code and options
     * @return the operation as it stands: BLOCKED, or, for a repeated idempotency key, the
     *     operation that key started, in whatever state it has reached
     * @throws IllegalArgumentException if the idempotency key was used for a different request, the
     *     request's probe threshold is outside the store's {@link
     *     dev.nepenthe.core.forget.ProbePolicy}, or a declared identifier has no letter or digit
     * @throws IllegalStateException if the store is closed, or the evidence ledger is damaged (see
     *     {@link #health()})
     * @throws java.io.UncheckedIOException if recording the operation failed; if it was marked, the
     *     next open resumes it
     */
    public ForgetOperation forget(ForgetRequest request) {
        ensureOpen();
        return writing(
                () -> protocol.forget(request),
                "forget: recording the operation failed; if it was marked, the next open"
                        + " resumes it");
    }

    /**
     * A forget operation as it stands now (sealed ones included). Held in memory: no I/O.
     *
     * @param id the operation's id ({@code fop-...})
     * @return the operation, or empty when no operation has this id
     */
    public Optional<ForgetOperation> operation(String id) {
        return protocol.operation(id);
    }

    /**
     * Operations that pass {@code filter}, oldest first. Held in memory: no I/O, but a pass over
     * every operation the store has recorded, sealed ones included, under the forget engine's
     * monitor (keep the filter quick).
     *
     * @param filter which operations to return, for example by state
     * @return the matching operations
     */
    public List<ForgetOperation> operations(Predicate<ForgetOperation> filter) {
        return protocol.operations(filter);
    }

    /**
     * Waits until an operation is SEALED, COMPLETED_WITH_EXCEPTION or NEEDS_REVIEW (or stopped on a
     * failure its note names).
     *
     * @param id the operation's id
     * @param timeout how long to wait at most
     * @return the operation once settled, or stopped on a failure
     * @throws IllegalStateException if it has not settled within {@code timeout}
     * @throws IllegalArgumentException if no operation has this id
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation awaitOperation(String id, Duration timeout) throws InterruptedException {
        return protocol.await(id, timeout);
    }

    /**
     * Runs verification again for an operation in NEEDS_REVIEW, after more was forgotten. It moves
     * the operation to VERIFYING and hands it to the forget worker; follow it with {@link
     * #awaitOperation}.
     *
     * @param operationId the operation's id
     * @return the operation as it stands when the worker has it (VERIFYING, or later)
     * @throws IllegalArgumentException if no operation has this id
     * @throws IllegalStateException if the operation is not in NEEDS_REVIEW, or the evidence ledger
     *     is damaged
     */
    public ForgetOperation reverify(String operationId) {
        return protocol.reverify(operationId);
    }

    /**
     * Seals an operation in NEEDS_REVIEW whose suspects the operator judged not to be residue; the
     * override and its reason code go into the evidence and the receipt. Seals on the caller's
     * thread: destroys the subject's keys, appends the evidence (fsynced) and signs the receipt.
     *
     * @param operationId the operation's id
     * @param reasonCode why, as a code (see {@link ForgetRequest#checkReasonCode})
     * @return the sealed operation, with its receipt
     * @throws IllegalArgumentException if no operation has this id or the reason code is not a code
     * @throws IllegalStateException if the operation is not in NEEDS_REVIEW, derived records await
     *     regeneration, a surface failed its checks (an override covers suspects only), or the
     *     evidence ledger is damaged
     * @throws java.io.UncheckedIOException if sealing failed; the operation stays in review
     */
    public ForgetOperation override(String operationId, String reasonCode) {
        return writing(
                () -> protocol.override(operationId, reasonCode),
                "override of " + operationId + " failed; the operation stays in review");
    }

    /**
     * Places a legal hold on a subject or a source (every version) in a tenant. Holds are checked
     * when an operation leaves BLOCKED: a forget marked later whose records fall under the hold
     * stops in COMPLETED_WITH_EXCEPTION, and so does one still BLOCKED; one already in cleanup goes
     * on. Saved in the operation log and recorded in the evidence ledger (both fsynced).
     *
     * @param tenant the tenant
     * @param scope a {@link ForgetScope#subject} or {@link ForgetScope#source} scope; a source's
     *     version is ignored
     * @param reasonCode why, as a code
     * @return the hold, with its id
     * @throws IllegalArgumentException if the scope is neither a subject nor a source, or the
     *     reason code is not a code
     * @throws IllegalStateException if the store is closed or the evidence ledger is damaged
     * @throws java.io.UncheckedIOException if saving the hold failed
     */
    public LegalHold placeHold(String tenant, ForgetScope scope, String reasonCode) {
        return writing(
                () -> protocol.placeHold(tenant, scope, reasonCode),
                "placing the legal hold failed");
    }

    /**
     * Lifts a legal hold; forget operations it stopped go back to BLOCKED and the worker resumes
     * them (another active hold may stop them again). Recorded in the operation log and the
     * evidence ledger.
     *
     * @param holdId the hold's id
     * @throws IllegalArgumentException if no active hold has this id (none, or lifted already)
     * @throws IllegalStateException if the evidence ledger is damaged
     * @throws java.io.UncheckedIOException if recording the lift failed
     */
    public void liftHold(String holdId) {
        writing(
                () -> {
                    protocol.liftHold(holdId);
                    return null;
                },
                "lifting legal hold " + holdId + " failed");
    }

    /**
     * Every legal hold the store has recorded, active or lifted. Held in memory: no I/O.
     *
     * @return the holds
     */
    public List<LegalHold> holds() {
        return protocol.holds();
    }

    /**
     * Re-admits a subject, or record ids, that sealed forgets fenced: from when this returns,
     * writes in the scope that the forgets refused (with a {@link
     * dev.nepenthe.core.forget.ForgottenScopeException}) are accepted, and stored as new records.
     * Nothing from before the forgets comes back: every collection takes a version floor
     * (journaled), and reconciliation at every open still removes a record the lifted fences name
     * whose version is below it (a restored snapshot, a lost journal). The forgets' receipts and
     * ledger entries are untouched and still verify; the re-admission is a ledger entry of its own
     * (keyed hashes of tenant and scope, the reason code, the time, the operations whose fences it
     * lifted).
     *
     * <p>A subject re-admission lifts every fence its sealed subject forgets left: the subject's,
     * and those of the records they removed (their ids may be written again). Record ids forgotten
     * one by one (a {@link ForgetScope#records} forget, or a record another forget removed) may be
     * re-admitted by id, in every collection; a subject's fence then stays, so a record of a
     * subject still forgotten is refused whatever its id. Source and metadata forgets leave fences
     * that stay: forget by id or subject what may come back.
     *
     * <p>Costs, on the caller's thread: two fsynced writes of the operation log, in every
     * collection the writer mutex and one fsynced journal entry, and one ledger append.
     *
     * @param tenant the tenant
     * @param scope a {@link ForgetScope#subject} or {@link ForgetScope#records} scope
     * @param reasonCode why, as a code (see {@link ForgetRequest#checkReasonCode})
     * @return the re-admission, complete, with its ledger entry
     * @throws IllegalArgumentException if the scope is a source or a filter, the reason code is not
     *     a code, or no sealed forget fences the scope (or its fences are lifted already); the
     *     message names the scope by its keyed hash, never the subject or an id
     * @throws IllegalStateException if a forget of the scope is not sealed yet, the evidence ledger
     *     is damaged, or the store is closed
     * @throws java.io.UncheckedIOException if recording it failed; if its intent was recorded, the
     *     next open finishes it
     */
    public Readmission readmit(String tenant, ForgetScope scope, String reasonCode) {
        ensureOpen();
        return writing(
                () -> protocol.readmit(tenant, scope, reasonCode),
                "re-admission failed; if its intent was recorded, the next open finishes it");
    }

    /**
     * Every re-admission the store has recorded, oldest first (a pending one, which the next open
     * finishes, has no ledger entry yet). Held in memory: no I/O.
     *
     * @return the re-admissions
     */
    public List<Readmission> readmissions() {
        return protocol.readmissions();
    }

    /**
     * Registers a component that holds data derived from records (a query cache, a text index):
     * every later forget purges and verifies it, and cannot seal while it fails. Before this
     * returns, the surface blocks the scope of every operation not yet sealed (on the caller's
     * thread); a block that throws is recorded against that operation, not thrown here. Surfaces
     * are not saved: register them again after every open.
     *
     * @param surface the surface; its {@link ErasureSurface#name()} must be new to this store
     * @throws IllegalArgumentException if a surface with the same name is registered
     */
    public void registerSurface(ErasureSurface surface) {
        protocol.registerSurface(surface);
    }

    /**
     * Re-reads the evidence ledger and checks its hash chain and every signature, that it still
     * holds the head the store anchored after its last append, and that every sealed operation's
     * receipt names an entry it holds. A ledger cut short, rolled back or replaced fails here (and
     * from then on the store refuses new forgets, see {@link #health()}). Costs a read of the whole
     * file and a signature check per entry, under the forget engine's monitor.
     *
     * @return the verification; {@link LedgerVerification#ok()} is false when the chain breaks or
     *     the cross-checks fail, and its problem says what
     * @throws IOException if the file cannot be read or its header is not a ledger's
     */
    public LedgerVerification verifyLedger() throws IOException {
        return protocol.verifyLedger();
    }

    /**
     * A read-only view of the evidence ledger for auditors: its entries, one operation's entries,
     * receipt and head checks (what {@link LedgerAudit#read} gives from the file and the public key
     * alone). Reads and verifies the whole file on each call.
     *
     * @return the ledger as it is on disk now
     * @throws IOException if the file cannot be read or its header is not a ledger's
     */
    public LedgerAudit evidence() throws IOException {
        return LedgerAudit.read(protocol.ledger().file(), services.signingKey().publicKey());
    }

    /**
     * The evidence ledger's head now, to hand to an outside witness ({@code SEQ:HASH}). Held in
     * memory: no I/O.
     *
     * @return the last entry's sequence number and hash
     */
    public LedgerHead ledgerHead() {
        return protocol.ledger().head();
    }

    /**
     * When the evidence ledger is damaged and no sound copy of it exists: keeps the damaged file
     * (renamed, unchanged) and starts a new ledger whose first, signed entry records the damage,
     * the archived file's SHA-256 and the sealed operations whose entries were lost, with the
     * operator's reason code. Forgets resume. See docs/FORGET.md, "When the ledger is damaged".
     *
     * @param reasonCode why, as a code
     * @return the new ledger's head
     * @throws IllegalStateException if the ledger is sound (it is never restarted then), or the
     *     store is closed
     * @throws IllegalArgumentException if the reason code is not a code
     * @throws java.io.UncheckedIOException if the restart failed; the store still refuses forgets
     */
    public LedgerHead restartLedger(String reasonCode) {
        ensureOpen();
        return writing(
                () -> protocol.restartLedger(reasonCode),
                "restarting the evidence ledger failed; the store still refuses forgets");
    }

    /**
     * Whether the store accepts forgets, and what is wrong if it does not. Held in memory: no I/O
     * (it reports what the last check found; {@link #verifyLedger()} checks the file again).
     *
     * @return the store's health
     * @throws IllegalStateException if the store is closed
     */
    public StoreHealth health() {
        ensureOpen();
        return protocol.health();
    }

    /**
     * The evidence ledger file (verify it offline with {@link #publicKeyPem()} and {@code
     * LedgerVerifier}).
     *
     * @return the path, in the keystore folder
     */
    public Path ledgerFile() {
        return protocol.ledger().file();
    }

    /**
     * The store's Ed25519 public key as PEM: what an auditor needs to verify the ledger and
     * receipts.
     *
     * @return the PEM text
     */
    public String publicKeyPem() {
        return services.signingKey().publicKeyPem();
    }

    /** A write of the forget protocol's that may fail on the disk. */
    @FunctionalInterface
    private interface ProtocolWrite<T> {
        T run() throws IOException;
    }

    /**
     * Runs a write of the forget protocol's, refused once the store is read-only; a failure trips
     * the read-only latch and is thrown unchecked with {@code failure} as its message.
     */
    private <T> T writing(ProtocolWrite<T> write, String failure) {
        fault.ensureWritable();
        try {
            return write.run();
        } catch (IOException e) {
            throw fault.trip(new UncheckedIOException(failure, e));
        }
    }
}
