package dev.nepenthe.bench.storage;

import dev.nepenthe.bench.BenchStores;
import dev.nepenthe.core.Filter;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What filtered searches and gets cost now that the catalogue keeps no metadata (docs/STORAGE.md,
 * "Metadata lives in the sealed copy"): {@code n} records, HNSW, each with three metadata values (a
 * language of five, a year of 35, a source shared by ten records), checkpointed so every copy lies
 * in a segment. An equality, and an equality and a year range, go through the metadata index; the
 * range decrypts the copies of the records the equality leaves; a get decrypts its record's copy.
 *
 * <p>The set-up reopens the store, prints the time that took and the heap after it (after a
 * collection), and checks a filtered search against the records' metadata, so neither the work nor
 * the check can be dropped.
 */
@State(Scope.Benchmark)
public class MetadataFilterBenchmark extends LoadedStoreState {

    private static final String[] LANGS = {"en", "de", "fr", "es", "it"};

    @Param({"100000"})
    int n;

    @Param({"64"})
    int dim;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        load(
                "nepenthe-metadata-filter",
                n,
                dim,
                IndexSpec.of("hnsw", Map.of("M", "16", "efConstruction", "64", "efSearch", "64")),
                (i, vector) ->
                        VectorRecord.builder("r" + i)
                                .vector(vector)
                                .metadata("lang", LANGS[i % 5])
                                .metadata("year", 1990 + i % 35)
                                .metadata("source", "doc-" + i / 10)
                                .build());
        // One reopen, timed: the open links every record's metadata into the index (one shot,
        // so only a guide; the cost per record is what matters).
        store.close();
        long t0 = System.nanoTime();
        store = BenchStores.open(dir);
        collection = store.collection("bench");
        double openSeconds = (System.nanoTime() - t0) / 1e9;
        for (SearchHit h :
                collection.search(SearchRequest.of(queries[0], 10).filter(enAndDecade()))) {
            int i = Integer.parseInt(h.id().substring(1));
            if (i % 5 != 0
                    || 1990 + i % 35 < 2000
                    || 1990 + i % 35 > 2009
                    || !h.record()
                            .metadata()
                            .equals(
                                    Map.of(
                                            "lang",
                                            "en",
                                            "year",
                                            (long) (1990 + i % 35),
                                            "source",
                                            "doc-" + i / 10))) {
                throw new IllegalStateException(
                        "set-up: hit " + h.id() + " does not pass the filter");
            }
        }
        System.gc();
        System.gc();
        long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        System.out.printf(
                "%n[metadata-filter] n=%d reopen %.2f s, heap after it: %.1f MB%n",
                n, openSeconds, used / 1e6);
    }

    private static Filter enAndDecade() {
        return Filter.eq("lang", "en").and(Filter.range("year", 2000, 2009));
    }

    @Benchmark
    public List<SearchHit> searchUnfiltered() {
        return collection.search(SearchRequest.of(query(), 10));
    }

    @Benchmark
    public List<SearchHit> searchEq() {
        return collection.search(SearchRequest.of(query(), 10).filter(Filter.eq("lang", "en")));
    }

    @Benchmark
    public List<SearchHit> searchEqAndRange() {
        return collection.search(SearchRequest.of(query(), 10).filter(enAndDecade()));
    }

    @Benchmark
    public List<SearchHit> searchRange() {
        return collection.search(
                SearchRequest.of(query(), 10).filter(Filter.range("year", 2000, 2009)));
    }

    @Benchmark
    public VectorRecord get() {
        return collection.get("r" + random.nextInt(n)).orElseThrow();
    }
}
