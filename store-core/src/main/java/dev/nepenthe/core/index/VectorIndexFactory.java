package dev.nepenthe.core.index;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Creates and loads one kind of index. Implementations are found with
 * {@link java.util.ServiceLoader} (a {@code META-INF/services} entry), so store-core never
 * depends on an index module.
 */
public interface VectorIndexFactory {

    /** The kind name a collection names in its {@code IndexSpec}: "exact", "hnsw", "ivfpq". */
    String kind();

    /**
     * A new, empty index.
     *
     * @throws IllegalArgumentException if a parameter is unknown or out of range; the message
     *     names the parameter, the accepted range and the value that arrived
     */
    VectorIndex create(IndexConfig config);

    /** Reads an index written by {@link VectorIndex#save}. */
    VectorIndex load(IndexConfig config, Path file) throws IOException;
}
