package dev.nepenthe.core.storage;

import dev.nepenthe.core.VectorRecord;
import java.io.Closeable;
import java.io.IOException;
import java.util.Collection;
import java.util.List;

/**
 * The storage seam of a collection: where its records persist. The collection keeps the
 * authoritative in-memory view; the log makes it survive a restart.
 *
 * <p>The current implementation ({@link RecordLogFile}) is an interim, plaintext, append-only
 * file; the durable storage with per-subject keys replaces it behind this interface.
 */
public interface RecordLog extends Closeable {

    /** Appends a batch of upserts durably (returns after fsync). */
    void append(List<VectorRecord> batch) throws IOException;

    /**
     * Replaces the whole log with exactly {@code live}: the bytes of every record not in it,
     * and of every superseded version, are gone from the file system when this returns.
     */
    void rewrite(Collection<VectorRecord> live) throws IOException;

    /** Every record in log order; a later entry for the same tenant and id supersedes an earlier one. */
    List<VectorRecord> replay() throws IOException;
}
