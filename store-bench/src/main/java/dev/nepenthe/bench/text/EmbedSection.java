package dev.nepenthe.bench.text;

import static dev.nepenthe.bench.text.TextBenchHelpers.log;
import static dev.nepenthe.bench.text.TextBenchHelpers.rotate;
import static dev.nepenthe.bench.text.TextBenchHelpers.secondsSince;
import static dev.nepenthe.bench.text.TextSettings.DIM;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.Stats;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The text benchmark's first part: how fast the embedder turns texts into vectors, in batches on
 * every core and one at a time on one thread.
 */
final class EmbedSection {

    private final String command;
    private final int sample;
    private final int single;
    private final int[] batches;
    private final int passes;
    private final Report report;
    private final List<String> corpus;
    private final LazyEmbedder model;

    EmbedSection(TextSettings s, List<String> corpus, LazyEmbedder model) {
        command = s.command;
        sample = s.sample;
        single = s.single;
        batches = s.batches;
        passes = s.passes;
        report = s.report;
        this.corpus = corpus;
        this.model = model;
    }

    void run() {
        if (sample > corpus.size()) {
            throw new IllegalArgumentException(
                    "sample=" + sample + ": the corpus holds " + corpus.size() + " texts");
        }
        Embedder e = model.get();
        List<String> texts = corpus.subList(0, sample);
        int singles = Math.min(single, sample);
        double meanChars = texts.stream().mapToInt(String::length).average().orElse(0);
        // Warm-up, outside every figure: the first batches compile the tokenizer's and the
        // runtime's Java side.
        e.embedAll(texts.subList(0, Math.min(256, sample)));
        for (int i = 0; i < Math.min(50, sample); i++) {
            e.embed(texts.get(i));
        }
        Map<Integer, List<Double>> rates = new LinkedHashMap<>();
        Map<Integer, List<Double>> callMs = new LinkedHashMap<>();
        for (int b : batches) {
            rates.put(b, new ArrayList<>());
            callMs.put(b, new ArrayList<>());
        }
        List<Double> singleRates = new ArrayList<>();
        List<Double> singleMs = new ArrayList<>();
        long sink = 0;
        for (int p = 0; p < passes; p++) {
            for (int b : rotate(batches, p)) {
                long s = System.nanoTime();
                for (int i = 0; i < sample; i += b) {
                    long c = System.nanoTime();
                    sink += e.embedAll(texts.subList(i, Math.min(sample, i + b))).size();
                    callMs.get(b).add((System.nanoTime() - c) / 1e6);
                }
                rates.get(b).add(sample / secondsSince(s));
            }
            long s = System.nanoTime();
            for (int i = 0; i < singles; i++) {
                long c = System.nanoTime();
                sink += e.embed(texts.get(i)).length;
                singleMs.add((System.nanoTime() - c) / 1e6);
            }
            singleRates.add(singles / secondsSince(s));
            log("embed: pass %d of %d done", p + 1, passes);
        }
        if (sink < 0) {
            throw new AssertionError();
        }
        report.line(
                        "### Embedding throughput (%s, %d-d, in-process ONNX Runtime)",
                        MiniLmEmbedder.NAME, DIM)
                .blank()
                .command(command)
                .line("Machine: %s.", Machine.describe())
                .line(
                        "`embedAll` over %d texts (mean %.0f characters) in batches, on every core"
                            + " (the model embeds a batch's texts in parallel); `embed` over the"
                            + " first %d of them one at a time on one thread. Model load and first"
                            + " call: %.1f s. Texts/s: median of %d passes (range); per-call"
                            + " latencies pooled over the passes.",
                        sample, meanChars, singles, model.loadSeconds(), passes)
                .blank()
                .line(
                        "| call | batch | texts per pass | texts/s | range | p50 per call (ms) |"
                                + " p99 per call (ms) |")
                .line("|---|---:|---:|---:|---|---:|---:|");
        for (int b : batches) {
            report.line(
                    "| embedAll | %d | %d | %.0f | %.0f-%.0f | %.1f | %.1f |",
                    b,
                    sample,
                    Stats.median(rates.get(b)),
                    Stats.min(rates.get(b)),
                    Stats.max(rates.get(b)),
                    Stats.pct(callMs.get(b), 50),
                    Stats.pct(callMs.get(b), 99));
        }
        report.line(
                        "| embed (1 thread) | 1 | %d | %.0f | %.0f-%.0f | %.2f | %.2f |",
                        singles,
                        Stats.median(singleRates),
                        Stats.min(singleRates),
                        Stats.max(singleRates),
                        Stats.pct(singleMs, 50),
                        Stats.pct(singleMs, 99))
                .blank();
        report.flush();
    }
}
