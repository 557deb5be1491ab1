package dev.nepenthe.bench;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The real store the harnesses measure (AES-GCM, fsync before every acknowledgement, the default
 * options), laid out the same way in each: the store in {@code data/} of a scratch folder, its
 * keystore beside it in {@code keys/}, and one cosine collection named {@code bench}.
 */
public final class BenchStores {

    private BenchStores() {}

    /** The default options with the keystore in {@code dir/keys}. */
    public static StoreOptions options(Path dir) {
        return StoreOptions.defaults().withKeystore(dir.resolve("keys"));
    }

    /** Opens (or creates) the store in {@code dir/data} with {@code options}. */
    public static Nepenthe open(Path dir, StoreOptions options) throws IOException {
        return Nepenthe.open(dir.resolve("data"), options);
    }

    /** Opens (or creates) the store in {@code dir/data} with {@link #options}. */
    public static Nepenthe open(Path dir) throws IOException {
        return open(dir, options(dir));
    }

    /** Creates the cosine collection {@code bench} of {@code dim} dimensions over {@code index}. */
    public static VectorCollection createBench(Nepenthe store, int dim, IndexSpec index) {
        return store.createCollection(new CollectionSpec("bench", dim, Metric.COSINE, index));
    }
}
