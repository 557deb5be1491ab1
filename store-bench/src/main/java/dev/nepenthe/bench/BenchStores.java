package dev.nepenthe.bench;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The real store the harnesses measure (AES-GCM, fsync before every acknowledgement, the default
 * options), laid out the same way in each: the store in {@code data/} of a scratch folder, its
 * keystore beside it in {@code keys/}, and one cosine collection named {@code bench}.
 */
public final class BenchStores {

    private static final int LOAD_BATCH = 1000;

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

    /**
     * Upserts records 0 to {@code n - 1}, as {@code record} makes them, 1,000 at a time: the batch
     * the harnesses load with.
     */
    public static void load(VectorCollection c, int n, IntFunction<VectorRecord> record) {
        for (int start = 0; start < n; start += LOAD_BATCH) {
            List<VectorRecord> batch = new ArrayList<>(LOAD_BATCH);
            for (int i = start; i < Math.min(n, start + LOAD_BATCH); i++) {
                batch.add(record.apply(i));
            }
            c.upsertAll(batch);
        }
    }

    /** Creates the cosine collection {@code bench} of {@code dim} dimensions over {@code index}. */
    public static VectorCollection createBench(Nepenthe store, int dim, IndexSpec index) {
        return store.createCollection(new CollectionSpec("bench", dim, Metric.COSINE, index));
    }
}
