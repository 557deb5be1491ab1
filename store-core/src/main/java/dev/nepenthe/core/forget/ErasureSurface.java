package dev.nepenthe.core.forget;

import java.io.IOException;

/**
 * A component that holds data derived from records (an index, a cache, a text index, the
 * storage files) and takes part in every forget: it purges what it derived from the forgotten
 * records and proves it. Registered with the store; a surface that cannot verify, or a
 * logical-only one, keeps an operation from sealing and says why.
 */
public interface ErasureSurface {

    /** Stable name, used in operations and evidence ("cache:query", "collection:notes/index:hnsw"). */
    String name();

    ErasureClass erasureClass();

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
