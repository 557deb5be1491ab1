package dev.nepenthe.core.index;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Creates and loads one kind of index. Implementations are found with
 * {@link java.util.ServiceLoader} (a {@code META-INF/services} entry), so store-core never
 * depends on an index module.
 */
public interface VectorIndexFactory {

    /**
     * The kind name a collection names in its {@code IndexSpec}: "exact", "hnsw", "ivfpq". When
     * two factories on the class path claim one kind, the first the service loader finds wins.
     *
     * @return the kind's name
     */
    String kind();

    /**
     * A new, empty index. The store also calls it once, and closes the result, to check a
     * spec's parameters before it creates a collection.
     *
     * @param config dimension, metric, parameters and seed
     * @return the index
     * @throws IllegalArgumentException if a parameter is unknown or out of range; the message
     *     names the parameter, the accepted range and the value that arrived
     */
    VectorIndex create(IndexConfig config);

    /**
     * Reads an index written by {@link VectorIndex#save}.
     *
     * @param config the config the index was created with
     * @param file the file {@code save} wrote
     * @return the index as it was saved
     * @throws IOException if the file cannot be read, or is corrupt, too old or too new
     *     ({@link dev.nepenthe.core.CorruptFileException} and its subclasses)
     */
    VectorIndex load(IndexConfig config, Path file) throws IOException;
}
