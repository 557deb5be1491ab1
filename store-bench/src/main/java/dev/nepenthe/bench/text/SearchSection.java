package dev.nepenthe.bench.text;

import static dev.nepenthe.bench.text.TextBenchHelpers.countSegments;
import static dev.nepenthe.bench.text.TextBenchHelpers.folderBytes;
import static dev.nepenthe.bench.text.TextBenchHelpers.log;
import static dev.nepenthe.bench.text.TextBenchHelpers.rotate;
import static dev.nepenthe.bench.text.TextBenchHelpers.secondsSince;
import static dev.nepenthe.bench.text.TextBenchHelpers.threeWords;
import static dev.nepenthe.bench.text.TextBenchHelpers.unitVectors;
import static dev.nepenthe.bench.text.TextSettings.K;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.Stats;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The text benchmark's third part: BM25 beside Lucene used directly over the same texts, then
 * hybrid search against keyword and vector search alone, all timed over the same held-out queries.
 */
final class SearchSection {

    private final String command;
    private final int n;
    private final int queries;
    private final int passes;
    private final int window;
    private final long seed;
    private final Report report;
    private final List<String> corpus;
    private final LazyEmbedder model;
    private final boolean realVectors;
    private final String vectorLabel;

    SearchSection(
            TextSettings s,
            List<String> corpus,
            LazyEmbedder model,
            boolean realVectors,
            String vectorLabel) {
        command = s.command;
        n = s.n;
        queries = s.queries;
        passes = s.passes;
        window = s.window;
        seed = s.seed;
        report = s.report;
        this.corpus = corpus;
        this.model = model;
        this.realVectors = realVectors;
        this.vectorLabel = vectorLabel;
    }

    /** One query engine: runs query q, returns how many hits (so the work cannot be dropped). */
    @FunctionalInterface
    private interface Query {
        int run(int q) throws IOException;
    }

    private record Engine(String name, Query query) {}

    /** Per pass: p50, p99 (ms) and QPS of one engine. */
    private record Pass(double p50, double p99, double qps) {}

    void run(
            Path dir,
            TextBench.Stores stores,
            List<String> ids,
            List<String> texts,
            double textLoad,
            double plainLoad)
            throws Exception {
        VectorCollection c = stores.textChunks();
        // Queries: held-out definitions (the corpus's last ones, never indexed), three words each.
        Random rnd = new Random(seed);
        List<String> qs = new ArrayList<>(queries);
        for (String def : corpus.subList(corpus.size() - queries, corpus.size())) {
            qs.add(threeWords(def, rnd));
        }
        float[][] qv;
        if (realVectors) {
            long t0 = System.nanoTime();
            qv = model.get().embedAll(qs).toArray(new float[0][]);
            log("embedded %d queries in %.1f s (not timed below)", queries, secondsSince(t0));
        } else {
            qv = unitVectors(seed + 1, queries);
        }

        long t0 = System.nanoTime();
        Path luceneDir = dir.resolve("lucene");
        try (LuceneBm25 lucene = LuceneBm25.build(luceneDir, ids, texts)) {
            double luceneBuild = secondsSince(t0);
            log("Lucene: %d documents indexed and committed in %.1f s", n, luceneBuild);
            List<Engine> engines =
                    List.of(
                            new Engine("lucene", q -> lucene.search(qs.get(q), K).size()),
                            new Engine(
                                    "keyword",
                                    q -> c.search(SearchRequest.keyword(qs.get(q), K)).size()),
                            new Engine("vector", q -> c.search(SearchRequest.of(qv[q], K)).size()),
                            new Engine(
                                    "hybrid",
                                    q ->
                                            c.search(
                                                            SearchRequest.hybrid(qs.get(q), K)
                                                                    .vector(qv[q])
                                                                    .param("window", window))
                                                    .size()),
                            new Engine(
                                    "keyword@window",
                                    q -> c.search(SearchRequest.keyword(qs.get(q), window)).size()),
                            new Engine(
                                    "vector@window",
                                    q -> c.search(SearchRequest.of(qv[q], window)).size()));

            // Same query form, same answers? The id sets of the two top 10s overlap, and the scores
            // agree rank by rank when the rankings differ only in how ties at the cut are broken
            // (each engine breaks them by its own document order).
            double overlap = 0;
            int sameScores = 0;
            int emptyQueries = 0;
            for (int q = 0; q < queries; q++) {
                LuceneBm25.Hits theirs = lucene.search(qs.get(q), K);
                List<SearchHit> ourHits = c.search(SearchRequest.keyword(qs.get(q), K));
                Set<String> ours = new HashSet<>();
                boolean scoresAgree = ourHits.size() == theirs.size();
                for (int i = 0; i < ourHits.size(); i++) {
                    ours.add(ourHits.get(i).record().id());
                    if (scoresAgree) {
                        float a = ourHits.get(i).score();
                        float b = theirs.scores()[i];
                        scoresAgree = Math.abs(a - b) <= 1e-5f * Math.max(1f, Math.abs(b));
                    }
                }
                sameScores += scoresAgree ? 1 : 0;
                if (theirs.size() == 0 && ours.isEmpty()) {
                    emptyQueries++;
                    overlap += 1;
                    continue;
                }
                int same = 0;
                for (String id : theirs.ids()) {
                    same += ours.contains(id) ? 1 : 0;
                }
                overlap += same / (double) Math.max(theirs.size(), ours.size());
            }
            overlap /= queries;

            Map<String, List<Pass>> results = new LinkedHashMap<>();
            for (Engine e : engines) {
                results.put(e.name(), new ArrayList<>());
            }
            for (int p = -1; p < passes; p++) { // pass -1 warms up, untimed
                for (Engine e : rotate(engines, Math.max(0, p))) {
                    Pass r = timePass(e.query());
                    if (p >= 0) {
                        results.get(e.name()).add(r);
                    }
                }
                log(
                        "search: %s done",
                        p < 0 ? "warm-up pass" : "pass " + (p + 1) + " of " + passes);
            }

            long oursBytes = folderBytes(stores.textFolder());
            long luceneBytes = folderBytes(luceneDir);
            int oursSegments = countSegments(stores.textFolder());
            Pass lu = medians(results.get("lucene"));
            Pass kw = medians(results.get("keyword"));
            report.line(
                            "### BM25 at n = %,d chunks: Nepenthe's text index beside Lucene used"
                                    + " directly",
                            n)
                    .blank()
                    .command(command)
                    .line("Machine: %s.", Machine.describe())
                    .line(
                            "Same %,d dict-gcide definitions in both, English analyzer. Lucene:"
                                + " IndexWriter (defaults) on FSDirectory.open, committed,"
                                + " IndexSearcher over a DirectoryReader, ids from stored fields."
                                + " Ours: `VectorCollection.search(SearchRequest.keyword(q, %d))`"
                                + " in a real store (AES-GCM records, an AES-CTR encrypted Lucene"
                                + " index, records materialised). %,d queries: three words drawn"
                                + " from each of %,d held-out definitions (seed %d), as SHOULD term"
                                + " clauses, top %d, one thread. %d passes, engines interleaved,"
                                + " one untimed warm-up pass first; medians of the passes' p50, p99"
                                + " and QPS.",
                            n, K, queries, queries, seed, K, passes)
                    .line(
                            "Loading: ours %,.0f chunks/s (vectors given; text index, HNSW,"
                                + " storage; checkpointed), Lucene %,.0f documents/s (indexed and"
                                + " committed). Agreement with Lucene's top %d: the id sets overlap"
                                + " %.1f%% on average; %.1f%% of queries get the same BM25 scores"
                                + " rank by rank (where ids differ there, it is ties at the cut,"
                                + " broken by each index's document order); %d queries match"
                                + " nothing in either.",
                            textLoad,
                            n / luceneBuild,
                            K,
                            100 * overlap,
                            100.0 * sameScores / queries,
                            emptyQueries)
                    .blank()
                    .line("| engine | segments | index on disk (MB) | p50 (ms) | p99 (ms) | QPS |")
                    .line("|---|---:|---:|---:|---:|---:|")
                    .line(
                            "| Lucene 10.3.2, FSDirectory.open (mmap) | %d | %.1f | %.3f | %.3f |"
                                    + " %.0f |",
                            lucene.segments(), luceneBytes / 1e6, lu.p50(), lu.p99(), lu.qps())
                    .line(
                            "| Nepenthe keyword | %d | %.1f | %.3f | %.3f | %.0f |",
                            oursSegments, oursBytes / 1e6, kw.p50(), kw.p99(), kw.qps())
                    .line(
                            "| ours / Lucene | | %.2f | %.2f | %.2f | %.2f |",
                            (double) oursBytes / luceneBytes,
                            kw.p50() / lu.p50(),
                            kw.p99() / lu.p99(),
                            kw.qps() / lu.qps())
                    .blank();
            Pass vec = medians(results.get("vector"));
            Pass hy = medians(results.get("hybrid"));
            Pass kwW = medians(results.get("keyword@window"));
            Pass vecW = medians(results.get("vector@window"));
            report.line("### Hybrid at n = %,d chunks: fusion against keyword and vector alone", n)
                    .blank()
                    .command(command)
                    .line("Machine: %s.", Machine.describe())
                    .line("%s.", vectorLabel)
                    .line(
                            "Hybrid runs a vector search and a keyword search of `window` = %d"
                                + " candidates each and fuses them (RRF, k = %d); the query vector"
                                + " is given (`.vector(v)`), so no query is embedded in the timed"
                                + " loop: add the single `embed` latency above for a store that"
                                + " embeds the query. HNSW efSearch 64. Same queries, passes and"
                                + " medians as the table above.",
                            window, SearchRequest.DEFAULT_RRF_K)
                    .blank()
                    .line("| query | k | p50 (ms) | p99 (ms) | QPS | p50 / keyword k=%d p50 |", K)
                    .line("|---|---:|---:|---:|---:|---:|");
            row("keyword (BM25)", K, kw, kw);
            row("vector (HNSW)", K, vec, kw);
            row("hybrid (window " + window + ")", K, hy, kw);
            row("keyword (hybrid's keyword half)", window, kwW, kw);
            row("vector (hybrid's vector half)", window, vecW, kw);
            report.blank();
            report.flush();
        }
    }

    private void row(String what, int k, Pass p, Pass keyword) {
        report.line(
                "| %s | %d | %.3f | %.3f | %.0f | %.2f |",
                what, k, p.p50(), p.p99(), p.qps(), p.p50() / keyword.p50());
    }

    private Pass timePass(Query query) throws IOException {
        double[] ms = new double[queries];
        long sink = 0;
        long start = System.nanoTime();
        for (int q = 0; q < queries; q++) {
            long s = System.nanoTime();
            sink += query.run(q);
            ms[q] = (System.nanoTime() - s) / 1e6;
        }
        double secs = secondsSince(start);
        if (sink < 0) {
            throw new AssertionError();
        }
        return new Pass(Stats.pct(ms, 50), Stats.pct(ms, 99), queries / secs);
    }

    private static Pass medians(List<Pass> passes) {
        return new Pass(
                Stats.median(passes.stream().map(Pass::p50).toList()),
                Stats.median(passes.stream().map(Pass::p99).toList()),
                Stats.median(passes.stream().map(Pass::qps).toList()));
    }
}
