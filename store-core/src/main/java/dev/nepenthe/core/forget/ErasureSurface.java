package dev.nepenthe.core.forget;

import java.io.IOException;

/**
 * A component that holds data derived from records (an index, a cache, a text index, the
 * storage files) and takes part in every forget: it stops serving the scope when the forget is
 * marked, purges what it derived from the forgotten records and proves it. Registered with the
 * store; a surface that cannot block or verify, or a logical-only one, keeps an operation from
 * sealing and says why.
 *
 * <p>Order for one operation: {@link #block} (on the caller's thread, before
 * {@code forget()} returns; again at registration for operations still unsealed, including
 * those a legal hold keeps open), then {@link #purge} and {@link #verify} on the forget worker,
 * then {@link #release} once the operation has sealed.
 */
public interface ErasureSurface {

    /** Stable name, used in operations and evidence ("cache:query", "collection:notes/index:hnsw"). */
    String name();

    ErasureClass erasureClass();

    /**
     * Stops serving anything derived from the scope's records, from before this returns until
     * {@link #release}: the store's own reads are blocked at the same moment, and a surface
     * that kept serving would hand out what the store no longer does (for the whole of a legal
     * hold, too). Must be quick: it runs inside {@code forget()}. Throwing keeps the operation
     * from sealing (the surface is reported as not blocked).
     */
    void block(BlockedScope scope) throws IOException;

    /**
     * The operation has sealed: what it blocked is gone from the store (and, after a clean
     * {@link #verify}, from this surface), so the block can be dropped.
     */
    default void release(String operationId) {}

    /**
     * Removes everything derived from the forgotten records. Called after the records left the
     * store's primary structures; may be called again when an operation resumes after a crash.
     *
     * @return how many items were removed (the surface's own unit)
     */
    long purge(ForgottenRecords forgotten) throws IOException;

    /**
     * Proves nothing derived from the forgotten records remains. Throwing counts as "cannot
     * verify" and blocks sealing.
     */
    SurfaceOutcome verify(ForgottenRecords forgotten, long purged) throws IOException;
}
