package dev.nepenthe.core.forget;

import java.io.IOException;

/**
 * A component that holds data derived from records (an index, a cache, a text index, the storage
 * files) and takes part in every forget: it stops serving the scope when the forget is marked,
 * purges what it derived from the forgotten records and proves it. Registered with the store; a
 * surface that cannot block or verify, or a logical-only one, keeps an operation from sealing and
 * says why.
 *
 * <p>Order for one operation: {@link #block} (on the caller's thread, before {@code forget()}
 * returns; again at registration for operations still unsealed, including those a legal hold keeps
 * open), then {@link #purge} and {@link #verify} on the forget worker, then {@link #release} once
 * the operation has sealed. Calls for one operation come one at a time, but {@link #block} for a
 * new operation may run on a caller's thread while the worker purges or verifies another, so an
 * implementation must be safe for that.
 */
public interface ErasureSurface {

    /**
     * Stable name, used in operations and evidence ("cache:query", "collection:notes/index:hnsw").
     *
     * @return the name, unique among the store's surfaces
     */
    String name();

    /**
     * How completely this surface can erase; {@link ErasureClass#LOGICAL_ONLY} keeps every
     * operation from sealing.
     *
     * @return the surface's erasure class
     */
    ErasureClass erasureClass();

    /**
     * Stops serving anything derived from the scope's records, from before this returns until
     * {@link #release}: the store's own reads are blocked at the same moment, and a surface that
     * kept serving would hand out what the store no longer does (for the whole of a legal hold,
     * too). Must be quick: it runs inside {@code forget()}. Throwing keeps the operation from
     * sealing (the surface is reported as not blocked); {@code forget()} itself still returns.
     *
     * @param scope the records the operation blocked, by collection
     * @throws IOException if the surface could not block; recorded against the operation
     */
    void block(BlockedScope scope) throws IOException;

    /**
     * The operation has sealed: what it blocked is gone from the store (and, after a clean {@link
     * #verify}, from this surface), so the block can be dropped. A runtime exception thrown here is
     * logged and ignored. Does nothing by default.
     *
     * @param operationId the sealed operation
     */
    default void release(String operationId) {}

    /**
     * Removes everything derived from the forgotten records. Called after the records left the
     * store's primary structures; may be called again when an operation resumes after a crash. The
     * vectors in {@code forgotten} are zeroed once the call returns.
     *
     * @param forgotten what the operation removed, with copies of the vectors
     * @return how many items were removed (the surface's own unit), handed back to {@link #verify}
     * @throws IOException if the purge failed: the operation stops in CLEANUP, with a note, and
     *     resumes at the next open (a runtime exception does the same)
     */
    long purge(ForgottenRecords forgotten) throws IOException;

    /**
     * Proves nothing derived from the forgotten records remains. Throwing counts as "cannot verify"
     * and blocks sealing. Runs again for every re-verification of the operation.
     *
     * @param forgotten what the operation removed, with copies of the vectors (zeroed once the
     *     verification is done)
     * @param purged what {@link #purge} returned for this operation, 0 if it never ran
     * @return what the surface checked and found; problems keep the operation in NEEDS_REVIEW
     * @throws IOException if the surface cannot verify; the operation goes to NEEDS_REVIEW
     */
    SurfaceOutcome verify(ForgottenRecords forgotten, long purged) throws IOException;
}
