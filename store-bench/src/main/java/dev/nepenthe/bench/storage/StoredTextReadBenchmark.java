package dev.nepenthe.bench.storage;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What reading a record's text from its sealed copy costs a get and a search (docs/STORAGE.md, "A
 * record's text lives in its sealed copy"): the same store of {@code n} records, HNSW, once with no
 * text and once with {@code textBytes} of text per record, checkpointed so every copy lies in a
 * segment. A get or a hit of a record with text reads its copy from the segment file (the page
 * cache's, after the first reads) and decrypts it; one without reads nothing. The ratio of the two
 * rows is the price.
 *
 * <p>Each method returns what the store returned, and the set-up checks a get's text against the
 * text written, so neither the work nor the check can be dropped.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class StoredTextReadBenchmark {

    @Param({"20000"})
    int n;

    @Param({"384"})
    int dim;

    @Param({"0", "1000"})
    int textBytes;

    private Path dir;
    private Nepenthe store;
    private VectorCollection collection;
    private float[][] queries;
    private SplittableRandom random;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("nepenthe-text-read");
        store =
                Nepenthe.open(
                        dir.resolve("data"),
                        StoreOptions.defaults().withKeystore(dir.resolve("keys")));
        IndexSpec hnsw =
                IndexSpec.of("hnsw", Map.of("M", "16", "efConstruction", "100", "efSearch", "64"));
        collection = store.createCollection(new CollectionSpec("bench", dim, Metric.COSINE, hnsw));
        float[][] rows = Datasets.lowRank(7, n + 1000, dim, 100, 16, 0.3);
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(
                    VectorRecord.builder("r" + i)
                            .subject("s" + i % 1000)
                            .vector(rows[i])
                            .text(text(i))
                            .build());
            if (batch.size() == 1000) {
                collection.upsertAll(batch);
                batch.clear();
            }
        }
        collection.checkpoint();
        queries = java.util.Arrays.copyOfRange(rows, n, n + 1000);
        random = new SplittableRandom(11);
        String got = collection.get("r" + (n / 2)).orElseThrow().text();
        if (!java.util.Objects.equals(got, text(n / 2))) {
            throw new IllegalStateException(
                    "set-up: record r" + (n / 2) + " read back the wrong text");
        }
    }

    /** {@code textBytes} of ASCII naming the record, or null for none. */
    private String text(int i) {
        if (textBytes == 0) {
            return null;
        }
        StringBuilder b = new StringBuilder(textBytes).append("record ").append(i).append(':');
        while (b.length() < textBytes) {
            b.append(" word").append(b.length() % 97);
        }
        return b.substring(0, textBytes);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        store.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Benchmark
    public VectorRecord get() {
        return collection.get("r" + random.nextInt(n)).orElseThrow();
    }

    @Benchmark
    public List<SearchHit> search() {
        return collection.search(SearchRequest.of(queries[random.nextInt(queries.length)], 10));
    }
}
