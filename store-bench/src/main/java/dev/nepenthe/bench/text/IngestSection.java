package dev.nepenthe.bench.text;

import static dev.nepenthe.bench.text.TextBenchHelpers.deleteTree;
import static dev.nepenthe.bench.text.TextBenchHelpers.log;
import static dev.nepenthe.bench.text.TextBenchHelpers.options;
import static dev.nepenthe.bench.text.TextBenchHelpers.rotate;
import static dev.nepenthe.bench.text.TextBenchHelpers.secondsSince;
import static dev.nepenthe.bench.text.TextSettings.ANALYZER;
import static dev.nepenthe.bench.text.TextSettings.DIM;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.Stats;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The text benchmark's second part: end-to-end ingest into a real store, with and without the store
 * embedding the texts and with and without a text index, so that each one's share shows.
 */
final class IngestSection {

    private final String command;
    private final int ingest;
    private final int ingestBatch;
    private final int passes;
    private final int subjectSize;
    private final Path base;
    private final Report report;
    private final List<String> corpus;
    private final LazyEmbedder model;

    IngestSection(TextSettings s, List<String> corpus, LazyEmbedder model) {
        command = s.command;
        ingest = s.ingest;
        ingestBatch = s.ingestBatch;
        passes = s.passes;
        subjectSize = s.subjectSize;
        base = s.base;
        report = s.report;
        this.corpus = corpus;
        this.model = model;
    }

    private enum IngestKind {
        EMBEDDED("text only, embedded by the store; text index + HNSW"),
        VECTORS("text + precomputed vectors; text index + HNSW"),
        NO_TEXT_INDEX("text + precomputed vectors; HNSW, no text index");

        final String label;

        IngestKind(String label) {
            this.label = label;
        }
    }

    void run() throws Exception {
        if (ingest > corpus.size()) {
            throw new IllegalArgumentException(
                    "ingest=" + ingest + ": the corpus holds " + corpus.size() + " texts");
        }
        Embedder e = model.get();
        List<String> texts = corpus.subList(0, ingest);
        // The precomputed vectors are the ones the store computed in the first pass's text-only
        // ingest (read back), so all three variants index the same vectors.
        float[][] vectors = null;
        Map<IngestKind, List<Double>> rates = new LinkedHashMap<>();
        Map<IngestKind, List<Double>> batchMs = new LinkedHashMap<>();
        for (IngestKind k : IngestKind.values()) {
            rates.put(k, new ArrayList<>());
            batchMs.put(k, new ArrayList<>());
        }
        for (int p = 0; p < passes; p++) {
            Path dir = Files.createTempDirectory(base, "nepenthe-text-ingest-");
            try (Nepenthe store =
                    Nepenthe.open(
                            dir.resolve("data"), options(dir.resolve("keys")).withEmbedder(e))) {
                List<IngestKind> order = rotate(List.of(IngestKind.values()), p);
                for (IngestKind kind : order) {
                    CollectionSpec spec =
                            new CollectionSpec(
                                    kind.name().toLowerCase(Locale.ROOT),
                                    DIM,
                                    Metric.COSINE,
                                    IndexSpec.of("hnsw"));
                    if (kind != IngestKind.NO_TEXT_INDEX) {
                        spec = spec.withTextIndex(ANALYZER).withEmbedder(MiniLmEmbedder.NAME);
                    }
                    VectorCollection c = store.createCollection(spec);
                    long s = System.nanoTime();
                    for (int from = 0; from < ingest; from += ingestBatch) {
                        List<VectorRecord> batch = new ArrayList<>(ingestBatch);
                        for (int i = from; i < Math.min(ingest, from + ingestBatch); i++) {
                            VectorRecord.Builder r =
                                    VectorRecord.builder("t" + i)
                                            .subject("s" + i / subjectSize)
                                            .text(texts.get(i));
                            if (kind != IngestKind.EMBEDDED) {
                                r.vector(vectors[i]);
                            }
                            batch.add(r.build());
                        }
                        long b = System.nanoTime();
                        c.upsertAll(batch);
                        batchMs.get(kind).add((System.nanoTime() - b) / 1e6);
                    }
                    rates.get(kind).add(ingest / secondsSince(s));
                    if (kind == IngestKind.EMBEDDED && vectors == null) {
                        vectors = new float[ingest][];
                        for (int i = 0; i < ingest; i++) {
                            vectors[i] =
                                    c.get("t" + i)
                                            .orElseThrow(
                                                    () ->
                                                            new IllegalStateException(
                                                                    "an ingested record is missing"
                                                                        + " from its collection"))
                                            .vector();
                        }
                    }
                    log(
                            "ingest pass %d: %s, %.0f texts/s",
                            p + 1, kind.label, rates.get(kind).getLast());
                }
            } finally {
                deleteTree(dir);
            }
        }
        double embedded = Stats.median(rates.get(IngestKind.EMBEDDED));
        double withVectors = Stats.median(rates.get(IngestKind.VECTORS));
        double plain = Stats.median(rates.get(IngestKind.NO_TEXT_INDEX));
        report.line("### End-to-end text ingest (%d texts, batches of %d)", ingest, ingestBatch)
                .blank()
                .command(command)
                .line("Machine: %s.", Machine.describe())
                .line(
                        "A real store (AES-GCM, fsync before every acknowledgement), one HNSW"
                            + " collection (M 16, efConstruction 100, cosine, %d-d) per variant,"
                            + " fresh for each of %d passes (variants interleaved, order rotating);"
                            + " records of subjects of %d. Texts/s: %d divided by the time until"
                            + " the last `upsertAll` returned (durable in the log; the text index"
                            + " commits at the next checkpoint), median of the passes (range);"
                            + " batch latency pooled.",
                        DIM, passes, subjectSize, ingest)
                .blank()
                .line("| records | texts/s | range | p50 per batch (ms) | p99 per batch (ms) |")
                .line("|---|---:|---|---:|---:|");
        for (IngestKind k : IngestKind.values()) {
            report.line(
                    "| %s | %.0f | %.0f-%.0f | %.0f | %.0f |",
                    k.label,
                    Stats.median(rates.get(k)),
                    Stats.min(rates.get(k)),
                    Stats.max(rates.get(k)),
                    Stats.pct(batchMs.get(k), 50),
                    Stats.pct(batchMs.get(k), 99));
        }
        report.blank()
                .line(
                        "Per text, from the medians: embedding %.2f ms, the text index %.3f ms,"
                                + " storage and HNSW %.3f ms.",
                        1000 / embedded - 1000 / withVectors,
                        1000 / withVectors - 1000 / plain,
                        1000 / plain)
                .blank();
        report.flush();
    }
}
