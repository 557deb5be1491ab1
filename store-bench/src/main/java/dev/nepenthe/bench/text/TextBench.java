package dev.nepenthe.bench.text;

import static dev.nepenthe.bench.text.TextBenchHelpers.deleteTree;
import static dev.nepenthe.bench.text.TextBenchHelpers.join;
import static dev.nepenthe.bench.text.TextBenchHelpers.log;
import static dev.nepenthe.bench.text.TextBenchHelpers.options;
import static dev.nepenthe.bench.text.TextBenchHelpers.secondsSince;
import static dev.nepenthe.bench.text.TextBenchHelpers.unitVectors;
import static dev.nepenthe.bench.text.TextSettings.ANALYZER;
import static dev.nepenthe.bench.text.TextSettings.DIM;
import static dev.nepenthe.bench.text.TextSettings.K;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.data.GcideDataset;
import dev.nepenthe.bench.hnsw.BenchArgs;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * What text costs, on a real corpus (the short definitions of Debian's dict-gcide, see {@link
 * GcideDefinitions}), in four parts:
 *
 * <ol>
 *   <li><b>embed</b>: all-MiniLM-L6-v2 ({@link MiniLmEmbedder}) on every core: {@code embedAll}
 *       over {@code sample} texts in batches of each size in {@code batches}, texts/s; and {@code
 *       embed} one text at a time on one thread, latency.
 *   <li><b>ingest</b>: a real store (AES-GCM, fsync before every acknowledgement) with an HNSW
 *       collection, {@code ingest} texts upserted in batches of {@code ingestBatch}: text only,
 *       embedded by the store (text index and embedder); the same texts with their vectors given
 *       (text index, no embedding); and with their vectors and no text index. The differences are
 *       the embedding's share and the text index's.
 *   <li><b>search</b>: {@code n} chunks in a store with a text index, beside Lucene used directly
 *       as its users run it ({@link LuceneBm25}) over the same texts: BM25 top 10 on both, then our
 *       hybrid (reciprocal rank fusion, window {@code window}) against keyword and vector search
 *       alone. Queries: {@code queries} held-out definitions (never indexed), three words drawn
 *       from each with the seed. Every pass runs every engine over every query, engines interleaved
 *       (their order rotates per pass); one untimed pass warms up first.
 *   <li><b>forget</b>: in the n-chunk collection (subjects of {@code subjectSize} chunks), subjects
 *       forgotten one at a time, then {@code together} forgets issued at once, beside the same
 *       forgets in an identical collection without a text index (its own store).
 * </ol>
 *
 * <p>Vectors for the n chunks (hybrid's vector half, and what HNSW indexes): {@code gcide} takes
 * the cached MiniLM rows ({@code ./nepenthe bench dataset-gcide}) and embeds the three-word queries
 * before timing; {@code random} uses seeded unit vectors for chunks and queries, so the vector half
 * ranks noise and only the timing means anything. The default, {@code auto}, takes gcide when its
 * cache matches the installed dictionary and says so otherwise. Either way the n chunks are loaded
 * with their vectors, not through the embedder, so the setup takes minutes.
 *
 * <p>Nothing the harness prints or writes holds corpus text or a query: tables, counts, times.
 */
public final class TextBench {

    static final String USAGE =
            "./nepenthe bench text [n=100000] [queries=1000] [passes=3] [sample=2000]"
                    + " [batches=64,256] [single=500] [ingest=5000] [ingestBatch=256]"
                    + " [vectors=auto|gcide|random] [subjectSize=5] [forgets=20] [together=20]"
                    + " [warmup=2] [window=100] [seed=42] [sections=embed,ingest,search,forget]"
                    + " [dict=/usr/share/dictd/gcide.dict.dz] [file=GCIDE-CACHE] [dir=TMPDIR]"
                    + " [out=FILE.md]";

    private static final int LOAD_BATCH = 1000;

    private final TextSettings s;
    private final int n;
    private final int queries;
    private final int subjectSize;
    private final long seed;
    private final Set<String> sections;
    private final Path dict;
    private final Path cacheFile;
    private final String vectorsArg;
    private final Path base;
    private final Report report;
    private final LazyEmbedder model = new LazyEmbedder();

    private List<String> corpus;

    /**
     * The n chunks' vectors (cached MiniLM rows or seeded unit vectors), and what they are, for the
     * tables.
     */
    private float[][] chunkVectors;

    private String vectorLabel;
    private boolean realVectors;

    private TextBench(TextSettings s) {
        this.s = s;
        n = s.n;
        queries = s.queries;
        subjectSize = s.subjectSize;
        seed = s.seed;
        sections = s.sections;
        dict = s.dict;
        cacheFile = s.cacheFile;
        vectorsArg = s.vectorsArg;
        base = s.base;
        report = s.report;
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs a = new BenchArgs(argv, USAGE);
        String command = ("./nepenthe bench text " + String.join(" ", argv)).strip();
        new TextBench(new TextSettings(a, command)).run();
    }

    private void run() throws Exception {
        double loadBefore = Machine.loadAverage();
        report.line("## Text: embedding, ingest, BM25 and hybrid search, forgetting text")
                .blank()
                .line("Machine: %s. Load average before: %.2f.", Machine.describe(), loadBefore)
                .line(
                        "Settings: n=%d queries=%d passes=%d sample=%d batches=%s single=%d"
                                + " ingest=%d ingestBatch=%d subjectSize=%d forgets=%d together=%d"
                                + " warmup=%d window=%d k=%d seed=%d sections=%s.",
                        s.n,
                        s.queries,
                        s.passes,
                        s.sample,
                        join(s.batches),
                        s.single,
                        s.ingest,
                        s.ingestBatch,
                        s.subjectSize,
                        s.forgets,
                        s.together,
                        s.warmup,
                        s.window,
                        K,
                        s.seed,
                        String.join(",", sections))
                .blank();
        report.flush();

        long t0 = System.nanoTime();
        if (!Files.exists(dict)) {
            throw new IOException(
                    "no dictionary at "
                            + dict
                            + ": install Debian's dict-gcide (the launcher does it"
                            + " with --install-peers) or name one with dict=");
        }
        corpus = GcideDataset.textsInRowOrder(dict);
        double meanChars = corpus.stream().mapToInt(String::length).average().orElse(0);
        log(
                "corpus: %d definitions (mean %.0f characters) parsed in %.1f s",
                corpus.size(), meanChars, secondsSince(t0));
        report.line(
                        "Corpus: %d dict-gcide definitions (mean %.0f characters), in the dataset's"
                            + " row order (shuffled with its fixed seed %d); the seed %d draws the"
                            + " query words, the random vectors and the forgotten subjects.",
                        corpus.size(), meanChars, GcideDataset.shuffleSeed(), seed)
                .blank();
        report.flush();

        if (sections.contains("embed")) {
            new EmbedSection(s, corpus, model).run();
        }
        if (sections.contains("ingest")) {
            new IngestSection(s, corpus, model).run();
        }
        if (sections.contains("search") || sections.contains("forget")) {
            chooseVectors();
            Path dir = Files.createTempDirectory(base, "nepenthe-text-bench-");
            try {
                nChunks(dir);
            } finally {
                deleteTree(dir);
            }
        }
        report.line("Load average after: %.2f.", Machine.loadAverage()).blank();
        report.flush();
    }

    // ---- 3 and 4. the n-chunk collections ------------------------------------------------------

    /**
     * Vectors for the n chunks: the gcide cache when it fits the dictionary, else seeded unit
     * vectors.
     */
    private void chooseVectors() throws IOException {
        String whyNot = null;
        if (vectorsArg.equals("random")) {
            whyNot = "vectors=random was asked for";
        } else if (!Files.exists(cacheFile)) {
            whyNot =
                    "no gcide vector cache at "
                            + cacheFile
                            + " (./nepenthe bench dataset-gcide builds it, once)";
        } else {
            GcideDataset.Vectors v = GcideDataset.load(cacheFile);
            if (!v.sourceSha256().equals(GcideDataset.sha256Hex(dict))) {
                whyNot =
                        "the cache at "
                                + cacheFile
                                + " was built from another dictionary than "
                                + dict
                                + " (SHA-256 differs); rebuild it with ./nepenthe bench"
                                + " dataset-gcide";
            } else if (v.rows().length < n) {
                whyNot =
                        "the cache at "
                                + cacheFile
                                + " holds "
                                + v.rows().length
                                + " vectors, fewer than n="
                                + n;
            } else {
                chunkVectors = Arrays.copyOf(v.rows(), n);
                realVectors = true;
                vectorLabel =
                        "vectors=gcide: the cached "
                                + MiniLmEmbedder.NAME
                                + " rows of the chunks; query vectors"
                                + " are the three-word queries embedded before timing";
            }
        }
        if (whyNot != null) {
            if (vectorsArg.equals("gcide")) {
                throw new IllegalArgumentException("vectors=gcide: " + whyNot);
            }
            chunkVectors = unitVectors(seed, n);
            vectorLabel =
                    "**vectors=random** ("
                            + whyNot
                            + "): seeded unit vectors for chunks and queries, so the"
                            + " vector half of hybrid ranks noise; only its timing means anything";
        }
        log("%s", vectorLabel.replace("**", ""));
    }

    record Stores(
            Nepenthe text,
            VectorCollection textChunks,
            Nepenthe plain,
            VectorCollection plainChunks,
            Path textFolder) {}

    private void nChunks(Path dir) throws Exception {
        if (n + queries > corpus.size()) {
            throw new IllegalArgumentException(
                    "n + queries = "
                            + (n + queries)
                            + ": the corpus holds "
                            + corpus.size()
                            + " definitions, and the queries must come from definitions not"
                            + " indexed");
        }
        List<String> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ids.add("c" + i);
        }
        List<String> texts = corpus.subList(0, n);
        CollectionSpec spec =
                new CollectionSpec("chunks", DIM, Metric.COSINE, IndexSpec.of("hnsw"));
        try (Nepenthe textStore =
                        Nepenthe.open(dir.resolve("text"), options(dir.resolve("text-keys")));
                Nepenthe plainStore =
                        sections.contains("forget")
                                ? Nepenthe.open(
                                        dir.resolve("plain"), options(dir.resolve("plain-keys")))
                                : null) {
            VectorCollection textChunks = textStore.createCollection(spec.withTextIndex(ANALYZER));
            double textLoad = load(textChunks, ids, texts, "with a text index");
            double plainLoad = Double.NaN;
            VectorCollection plainChunks = null;
            if (plainStore != null) {
                plainChunks = plainStore.createCollection(spec);
                plainLoad = load(plainChunks, ids, texts, "without a text index");
            }
            Stores stores =
                    new Stores(
                            textStore,
                            textChunks,
                            plainStore,
                            plainChunks,
                            dir.resolve("text")
                                    .resolve("collections")
                                    .resolve("chunks")
                                    .resolve("text"));
            if (sections.contains("search")) {
                new SearchSection(s, corpus, model, realVectors, vectorLabel)
                        .run(dir, stores, ids, texts, textLoad, plainLoad);
            }
            if (sections.contains("forget")) {
                new ForgetSection(s).run(stores, textLoad, plainLoad);
            }
        }
    }

    /** Upserts the n chunks in batches and checkpoints; returns records/s. */
    private double load(VectorCollection c, List<String> ids, List<String> texts, String what) {
        long t0 = System.nanoTime();
        long lastLog = t0;
        for (int from = 0; from < n; from += LOAD_BATCH) {
            List<VectorRecord> batch = new ArrayList<>(LOAD_BATCH);
            for (int i = from; i < Math.min(n, from + LOAD_BATCH); i++) {
                batch.add(
                        VectorRecord.builder(ids.get(i))
                                .subject("s" + i / subjectSize)
                                .text(texts.get(i))
                                .vector(chunkVectors[i])
                                .build());
            }
            c.upsertAll(batch);
            if (System.nanoTime() - lastLog > 30e9) {
                lastLog = System.nanoTime();
                log("loading %s: %d of %d", what, Math.min(n, from + LOAD_BATCH), n);
            }
        }
        // Fold the load's log into segments (and commit the text index) now, so the first
        // forget does not pay for it.
        c.checkpoint();
        double rate = n / secondsSince(t0);
        log("loaded %d chunks %s in %.1f s (%.0f/s)", n, what, n / rate, rate);
        return rate;
    }
}
