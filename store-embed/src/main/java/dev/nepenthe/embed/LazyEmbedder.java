package dev.nepenthe.embed;

import dev.nepenthe.core.embed.Embedder;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * An embedder whose model loads on its first embedding, not when the store opens: a server that
 * registers the bundled model so its collections can name it starts without the load time and heap
 * the model costs (figures in docs/BENCHMARKS.md), and one that never embeds never pays. Its name
 * and dimension are known before the load, which is all the store asks of an embedder when it opens
 * a collection.
 *
 * <p>Safe for concurrent use: the first callers wait for one load; a load that fails is tried again
 * by the next call.
 */
public final class LazyEmbedder implements Embedder {

    private final String name;
    private final int dimension;
    private final Supplier<? extends Embedder> loader;
    private volatile Embedder loaded;

    /**
     * @param name the embedder's name, which the loaded one must have too
     * @param dimension its dimension, which the loaded one must have too
     * @param loader makes the real embedder (called once, on the first embedding)
     * @throws NullPointerException if the name or the loader is null
     * @throws IllegalArgumentException if the dimension is below 1
     */
    public LazyEmbedder(String name, int dimension, Supplier<? extends Embedder> loader) {
        this.name = Objects.requireNonNull(name, "embedder name must not be null");
        this.loader = Objects.requireNonNull(loader, "embedder loader must not be null");
        if (dimension < 1) {
            throw new IllegalArgumentException(
                    "embedder dimension: expected 1 or more, got " + dimension);
        }
        this.dimension = dimension;
    }

    /**
     * The bundled all-MiniLM-L6-v2, loaded on first use.
     *
     * @return a lazy {@link MiniLmEmbedder}
     */
    public static LazyEmbedder miniLm() {
        return new LazyEmbedder(MiniLmEmbedder.NAME, MiniLmEmbedder.DIMENSION, MiniLmEmbedder::new);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int dimension() {
        return dimension;
    }

    /**
     * Whether the model has been loaded (by an embedding).
     *
     * @return true once loaded
     */
    public boolean isLoaded() {
        return loaded != null;
    }

    @Override
    public float[] embed(String text) {
        return model().embed(text);
    }

    @Override
    public List<float[]> embedAll(List<String> texts) {
        return model().embedAll(texts);
    }

    private Embedder model() {
        Embedder e = loaded;
        if (e == null) {
            synchronized (this) {
                e = loaded;
                if (e == null) {
                    e = loader.get();
                    if (!name.equals(e.name()) || e.dimension() != dimension) {
                        // Collections recorded this name and dimension; another model's vectors
                        // would be searched as if they were comparable.
                        throw new IllegalStateException(
                                "lazy embedder: expected '"
                                        + name
                                        + "' of dimension "
                                        + dimension
                                        + ", the loader made '"
                                        + e.name()
                                        + "' of dimension "
                                        + e.dimension());
                    }
                    loaded = e;
                }
            }
        }
        return e;
    }

    @Override
    public String toString() {
        return "LazyEmbedder["
                + name
                + ", "
                + dimension
                + " dimensions, "
                + (loaded != null ? "loaded" : "not loaded")
                + "]";
    }
}
