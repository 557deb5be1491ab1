package dev.nepenthe.core.index;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link VectorIndexFactory} for a kind whose indexes persist (see {@link #persists()}), made
 * from its name and three method references, so that each index module's service class is a
 * constructor and nothing else. Subclass it with a public no-argument constructor, as {@link
 * java.util.ServiceLoader} needs.
 */
public abstract class PersistentIndexFactory implements VectorIndexFactory {

    /** Reads an index from a file, as {@link VectorIndexFactory#load} does. */
    @FunctionalInterface
    public interface FileLoader {
        /**
         * Reads the index.
         *
         * @param config the config the index was created with
         * @param file the file {@link VectorIndex#save} wrote
         * @return the index as it was saved
         * @throws IOException if the file cannot be read or is corrupt
         */
        VectorIndex read(IndexConfig config, Path file) throws IOException;
    }

    /** Reads an index from a stream, as {@link VectorIndexFactory#readFrom} does. */
    @FunctionalInterface
    public interface StreamLoader {
        /**
         * Reads the index.
         *
         * @param config the config the index was created with
         * @param in the stream, positioned where {@link VectorIndex#writeTo} began
         * @return the index as it was written
         * @throws IOException if the stream fails or ends early
         */
        VectorIndex read(IndexConfig config, DataInputStream in) throws IOException;
    }

    private final String kind;
    private final Function<IndexConfig, ? extends VectorIndex> create;
    private final FileLoader load;
    private final StreamLoader readFrom;

    /**
     * The factory of one kind.
     *
     * @param kind the kind's name (see {@link VectorIndexFactory#kind()})
     * @param create makes a new, empty index
     * @param load reads an index from a file
     * @param readFrom reads an index from a stream
     * @throws NullPointerException if any argument is null
     */
    protected PersistentIndexFactory(
            String kind,
            Function<IndexConfig, ? extends VectorIndex> create,
            FileLoader load,
            StreamLoader readFrom) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.create = Objects.requireNonNull(create, "create");
        this.load = Objects.requireNonNull(load, "load");
        this.readFrom = Objects.requireNonNull(readFrom, "readFrom");
    }

    @Override
    public final String kind() {
        return kind;
    }

    @Override
    public final VectorIndex create(IndexConfig config) {
        return create.apply(config);
    }

    @Override
    public final VectorIndex load(IndexConfig config, Path file) throws IOException {
        return load.read(config, file);
    }

    /**
     * Always true: indexes of this kind can be written to a stream and read back.
     *
     * @return true
     */
    @Override
    public final boolean persists() {
        return true;
    }

    @Override
    public final VectorIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        return readFrom.read(config, in);
    }
}
