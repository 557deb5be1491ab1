package dev.nepenthe.bench.storage;

import dev.nepenthe.bench.BenchStores;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The state the storage JMH benchmarks share: a real store in a scratch folder holding {@code n}
 * seeded low-rank records in one checkpointed collection, every copy in a segment, and held-out
 * queries from the same draw, with the JMH settings they share (average time in microseconds, 3 + 5
 * iterations of 2 s, one fork). A benchmark says what each record carries; the store is closed and
 * its folder deleted after the trial.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public abstract class LoadedStoreState {

    /** Queries held out of the draw, after the records. */
    private static final int QUERIES = 1000;

    /** Makes record {@code i} around its drawn vector. */
    @FunctionalInterface
    protected interface RecordMaker {
        VectorRecord make(int i, float[] vector);
    }

    protected Path dir;
    protected Nepenthe store;
    protected VectorCollection collection;
    protected float[][] queries;
    protected SplittableRandom random;

    /**
     * Opens a store in a new folder named after {@code prefix}, creates the collection over {@code
     * index}, loads {@code n} records of {@code dim} dimensions made by {@code maker}, checkpoints,
     * and keeps the queries and a seeded random source for the benchmark methods.
     */
    protected final void load(String prefix, int n, int dim, IndexSpec index, RecordMaker maker)
            throws IOException {
        dir = Files.createTempDirectory(prefix);
        store = BenchStores.open(dir);
        collection = BenchStores.createBench(store, dim, index);
        float[][] rows = Datasets.lowRank(7, n + QUERIES, dim, 100, 16, 0.3);
        BenchStores.load(collection, n, i -> maker.make(i, rows[i]));
        collection.checkpoint();
        queries = Arrays.copyOfRange(rows, n, n + QUERIES);
        random = new SplittableRandom(11);
    }

    /** One of the held-out queries, at random. */
    protected final float[] query() {
        return queries[random.nextInt(queries.length)];
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        store.close();
        TestFiles.deleteTree(dir);
    }
}
