package dev.nepenthe.bench.text;

import dev.nepenthe.bench.data.GcideDataset;
import dev.nepenthe.bench.data.GcideDefinitions;
import dev.nepenthe.bench.hnsw.BenchArgs;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The text benchmark's settings, read from its command line and checked once, for every section to
 * share; also where its report goes.
 */
final class TextSettings {

    static final int DIM = MiniLmEmbedder.DIMENSION;
    static final int K = 10;
    static final String ANALYZER = "english";
    private static final Set<String> SECTIONS = Set.of("embed", "ingest", "search", "forget");

    final String command;
    final int n;
    final int queries;
    final int passes;
    final int sample;
    final int[] batches;
    final int single;
    final int ingest;
    final int ingestBatch;
    final String vectorsArg;
    final int subjectSize;
    final int forgets;
    final int together;
    final int warmup;
    final int window;
    final long seed;
    final Set<String> sections;
    final Path dict;
    final Path cacheFile;
    final Path base;
    final Report report;

    TextSettings(BenchArgs a, String command) {
        this.command = command;
        n = positive(a, "n", 100_000);
        queries = positive(a, "queries", 1000);
        passes = positive(a, "passes", 3);
        sample = positive(a, "sample", 2000);
        batches = a.ints("batches", new int[] {64, 256});
        single = positive(a, "single", 500);
        ingest = positive(a, "ingest", 5000);
        ingestBatch = positive(a, "ingestBatch", 256);
        vectorsArg = a.s("vectors", "auto");
        subjectSize = positive(a, "subjectSize", 5);
        forgets = positive(a, "forgets", 20);
        together = positive(a, "together", 20);
        warmup = a.i("warmup", 2);
        window = positive(a, "window", SearchRequest.DEFAULT_WINDOW);
        seed = a.i("seed", 42);
        sections = new TreeSet<>(List.of(a.s("sections", "embed,ingest,search,forget").split(",")));
        dict = Path.of(a.s("dict", GcideDefinitions.DEFAULT_DICT.toString()));
        cacheFile = Path.of(a.s("file", GcideDataset.defaultFile().toString()));
        base = Path.of(a.s("dir", System.getProperty("java.io.tmpdir")));
        String out = a.s("out", null);
        report = new Report(out == null ? null : Path.of(out));
        if (!SECTIONS.containsAll(sections)) {
            throw new IllegalArgumentException(
                    "sections: expected some of "
                            + new TreeSet<>(SECTIONS)
                            + ", got "
                            + sections
                            + "\nusage: "
                            + TextBench.USAGE);
        }
        if (!Set.of("auto", "gcide", "random").contains(vectorsArg)) {
            throw new IllegalArgumentException(
                    "vectors: expected auto, gcide or random, got '" + vectorsArg + "'");
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("warmup: expected 0 or more, got " + warmup);
        }
        for (int b : batches) {
            if (b < 1) {
                throw new IllegalArgumentException(
                        "batches: expected sizes of 1 or more, got " + Arrays.toString(batches));
            }
        }
    }

    private static int positive(BenchArgs a, String name, int dflt) {
        int v = a.i(name, dflt);
        if (v < 1) {
            throw new IllegalArgumentException(
                    name + ": expected 1 or more, got " + v + "\nusage: " + TextBench.USAGE);
        }
        return v;
    }
}
