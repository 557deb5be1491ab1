package dev.nepenthe.bench.storage;

import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

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
@State(Scope.Benchmark)
public class StoredTextReadBenchmark extends LoadedStoreState {

    @Param({"20000"})
    int n;

    @Param({"384"})
    int dim;

    @Param({"0", "1000"})
    int textBytes;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        load(
                "nepenthe-text-read",
                n,
                dim,
                IndexSpec.of("hnsw", Map.of("M", "16", "efConstruction", "100", "efSearch", "64")),
                (i, vector) ->
                        VectorRecord.builder("r" + i)
                                .subject("s" + i % 1000)
                                .vector(vector)
                                .text(text(i))
                                .build());
        String got = collection.get("r" + (n / 2)).orElseThrow().text();
        if (!Objects.equals(got, text(n / 2))) {
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

    @Benchmark
    public VectorRecord get() {
        return collection.get("r" + random.nextInt(n)).orElseThrow();
    }

    @Benchmark
    public List<SearchHit> search() {
        return collection.search(SearchRequest.of(query(), 10));
    }
}
