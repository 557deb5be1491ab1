package dev.nepenthe.core.index;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Creates and loads one kind of index. Implementations are found with {@link
 * java.util.ServiceLoader} (a {@code META-INF/services} entry), so store-core never depends on an
 * index module.
 */
public interface VectorIndexFactory {

    /**
     * The kind name a collection names in its {@code IndexSpec}: "exact", "hnsw", "ivfpq". When two
     * factories on the class path claim one kind, the first the service loader finds wins.
     *
     * @return the kind's name
     */
    String kind();

    /**
     * A new, empty index. The store also calls it once, and closes the result, to check a spec's
     * parameters before it creates a collection.
     *
     * @param config dimension, metric, parameters and seed
     * @return the index
     * @throws IllegalArgumentException if a parameter is unknown or out of range; the message names
     *     the parameter, the accepted range and the value that arrived
     */
    VectorIndex create(IndexConfig config);

    /**
     * Reads an index written by {@link VectorIndex#save}.
     *
     * @param config the config the index was created with
     * @param file the file {@code save} wrote
     * @return the index as it was saved
     * @throws IOException if the file cannot be read, or is corrupt, too old or too new ({@link
     *     dev.nepenthe.core.CorruptFileException} and its subclasses)
     */
    VectorIndex load(IndexConfig config, Path file) throws IOException;

    /**
     * Whether indexes of this kind can be written to a stream and read back ({@link
     * VectorIndex#writeTo}, {@link #readFrom}). A store persists such an index as an encrypted
     * generation and loads it at open instead of rebuilding it; for other kinds it rebuilds at
     * every open. False by default.
     *
     * @return true if both stream methods are implemented
     */
    default boolean persists() {
        return false;
    }

    /**
     * Reads an index written by {@link VectorIndex#writeTo}, consuming exactly what it wrote. The
     * index is checked structurally before it is returned (what the full {@link
     * VectorIndex#verifyIntegrity()} checks stays on demand).
     *
     * @param config the config the index was created with
     * @param in the stream, positioned where {@code writeTo} began
     * @return the index as it was written
     * @throws IOException if the stream fails or ends early
     * @throws IllegalArgumentException if what was read is not a valid index of this kind for
     *     {@code config}, saying what was expected and what was found
     * @throws UnsupportedOperationException unless {@link #persists()}
     */
    default VectorIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        throw new UnsupportedOperationException(kind() + " indexes cannot be read from a stream");
    }
}
