package dev.nepenthe.core.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Filter;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keyword and hybrid search through the store, against oracles: Lucene used directly (an in-memory
 * index of the same texts, the same analyzer, BM25, the same filter as a Lucene filter) for keyword
 * search, and a fusion recomputed from the store's own vector and keyword lists for hybrid search.
 */
class TextSearchTest {

    @TempDir Path tmp;

    private static final String[] WORDS =
            ("river mountain ledger invoice harbor lantern orchard violin glacier copper meadow"
                 + " falcon pepper saddle thunder quartz walnut ember tundra canyon beacon cobalt"
                 + " willow marble cedar prairie comet anchor basil raven")
                    .split(" ");

    private record Doc(String id, String tenant, String subject, String text, long year) {}

    private static List<Doc> corpus(Random rnd, int n) {
        List<Doc> docs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int len = 3 + rnd.nextInt(12);
            StringBuilder sb = new StringBuilder();
            for (int w = 0; w < len; w++) {
                // Skewed: low indexes are common words, high ones rare.
                int idx =
                        (int)
                                Math.min(
                                        WORDS.length - 1,
                                        Math.floor(-Math.log(1 - rnd.nextDouble()) * 6));
                sb.append(w == 0 ? "" : " ").append(WORDS[idx]);
            }
            docs.add(
                    new Doc(
                            "d" + i,
                            "t" + rnd.nextInt(3),
                            rnd.nextInt(4) == 0 ? null : "s" + rnd.nextInt(20),
                            sb.toString(),
                            2000 + rnd.nextInt(25)));
        }
        return docs;
    }

    private Nepenthe open(WordHashEmbedder e) throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"),
                StoreOptions.defaults().withKeystore(tmp.resolve("keys")).withEmbedder(e));
    }

    private static CollectionSpec spec(String index) {
        return CollectionSpec.of("notes", WordHashEmbedder.DIM, Metric.COSINE)
                .withIndex(IndexSpec.of(index))
                .withTextIndex("english")
                .withEmbedder("word-hash-64");
    }

    private static VectorRecord record(Doc d) {
        VectorRecord.Builder b =
                VectorRecord.builder(d.id)
                        .tenant(d.tenant)
                        .subject(d.subject)
                        .text(d.text)
                        .metadata("year", d.year);
        return b.build();
    }

    /**
     * Lucene used directly: every document indexed, the query's terms as SHOULD clauses, the filter
     * as a FILTER clause.
     */
    private static List<float[]> oracle(
            List<Doc> docs, String query, Predicate<Doc> filter, int k, List<String> idsOut)
            throws IOException {
        try (Analyzer a = new EnglishAnalyzer();
                ByteBuffersDirectory dir = new ByteBuffersDirectory()) {
            try (IndexWriter w = new IndexWriter(dir, new IndexWriterConfig(a))) {
                for (Doc d : docs) {
                    Document doc = new Document();
                    doc.add(new StringField("id", d.id, Field.Store.YES));
                    doc.add(new TextField("text", d.text, Field.Store.NO));
                    w.addDocument(doc);
                }
            }
            BooleanQuery.Builder q = new BooleanQuery.Builder();
            BooleanQuery.Builder terms = new BooleanQuery.Builder();
            var ts = a.tokenStream("text", query);
            var term =
                    ts.addAttribute(
                            org.apache.lucene.analysis.tokenattributes.CharTermAttribute.class);
            ts.reset();
            Set<String> seen = new HashSet<>();
            while (ts.incrementToken()) {
                if (seen.add(term.toString())) {
                    terms.add(
                            new TermQuery(new Term("text", term.toString())),
                            BooleanClause.Occur.SHOULD);
                }
            }
            ts.end();
            ts.close();
            q.add(terms.build(), BooleanClause.Occur.MUST);
            List<BytesRef> allowed =
                    docs.stream().filter(filter).map(d -> new BytesRef(d.id)).toList();
            q.add(new TermInSetQuery("id", allowed), BooleanClause.Occur.FILTER);
            try (DirectoryReader r = DirectoryReader.open(dir)) {
                IndexSearcher s = new IndexSearcher(r);
                TopDocs top = s.search(q.build(), k);
                List<float[]> scores = new ArrayList<>();
                for (ScoreDoc sd : top.scoreDocs) {
                    idsOut.add(s.storedFields().document(sd.doc).get("id"));
                    scores.add(new float[] {sd.score});
                }
                return scores;
            }
        }
    }

    /** Same scores in the same order, and the same ids wherever the score does not tie. */
    private static void assertSameRanking(
            List<String> oracleIds, List<float[]> oracleScores, List<SearchHit> hits, String what) {
        assertEquals(oracleIds.size(), hits.size(), what + ": number of hits");
        Map<Float, Set<String>> oracleByScore = new HashMap<>();
        Map<Float, Set<String>> oursByScore = new HashMap<>();
        for (int i = 0; i < hits.size(); i++) {
            float expected = oracleScores.get(i)[0];
            assertEquals(
                    expected,
                    hits.get(i).score(),
                    1e-5f * Math.max(1, expected),
                    what + ": score at rank " + (i + 1));
            oracleByScore.computeIfAbsent(expected, x -> new HashSet<>()).add(oracleIds.get(i));
            oursByScore.computeIfAbsent(expected, x -> new HashSet<>()).add(hits.get(i).id());
        }
        // Ties at the cut may be broken differently; every score above the last must hold the same
        // ids.
        float last = hits.isEmpty() ? 0 : oracleScores.get(hits.size() - 1)[0];
        oracleByScore.forEach(
                (score, ids) -> {
                    if (score > last) {
                        assertEquals(ids, oursByScore.get(score), what + ": ids scoring " + score);
                    }
                });
    }

    @Test
    void keywordSearchRanksAsLuceneDoesWithTenantSubjectAndMetadataFilters() throws IOException {
        long seed = Seeds.draw("keywordSearchRanksAsLuceneDoesWithTenantSubjectAndMetadataFilters");
        Random rnd = new Random(seed);
        List<Doc> docs = corpus(rnd, 400);
        WordHashEmbedder e = new WordHashEmbedder();
        try (Nepenthe store = open(e)) {
            VectorCollection c = store.createCollection(spec("exact"));
            c.upsertAll(docs.stream().map(TextSearchTest::record).toList());
            for (int q = 0; q < 40; q++) {
                String query =
                        WORDS[rnd.nextInt(WORDS.length)] + " " + WORDS[rnd.nextInt(WORDS.length)];
                String tenant = "t" + rnd.nextInt(3);
                int k = 1 + rnd.nextInt(15);
                SearchRequest base = SearchRequest.keyword(query, k).tenant(tenant);
                List<String> ids = new ArrayList<>();
                List<float[]> scores = oracle(docs, query, d -> d.tenant.equals(tenant), k, ids);
                assertSameRanking(
                        ids, scores, c.search(base), "tenant query " + q + Seeds.replay(seed));

                String subject = "s" + rnd.nextInt(20);
                ids.clear();
                scores =
                        oracle(
                                docs,
                                query,
                                d -> d.tenant.equals(tenant) && subject.equals(d.subject),
                                k,
                                ids);
                assertSameRanking(
                        ids,
                        scores,
                        c.search(base.subject(subject)),
                        "subject query " + q + Seeds.replay(seed));

                long from = 2000 + rnd.nextInt(25);
                ids.clear();
                scores =
                        oracle(docs, query, d -> d.tenant.equals(tenant) && d.year >= from, k, ids);
                assertSameRanking(
                        ids,
                        scores,
                        c.search(base.filter(Filter.range("year", from, 1e9))),
                        "filtered query " + q + Seeds.replay(seed));
            }
        }
    }

    @Test
    void afterDeletesAndReplacementsKeywordSearchMatchesLuceneOverTheSurvivors()
            throws IOException {
        long seed =
                Seeds.draw("afterDeletesAndReplacementsKeywordSearchMatchesLuceneOverTheSurvivors");
        Random rnd = new Random(seed);
        List<Doc> docs =
                new ArrayList<>(
                        corpus(rnd, 200).stream()
                                .map(d -> new Doc(d.id, "t0", d.subject, d.text, d.year))
                                .toList());
        try (Nepenthe store = open(new WordHashEmbedder())) {
            VectorCollection c = store.createCollection(spec("exact"));
            c.upsertAll(docs.stream().map(TextSearchTest::record).toList());
            // Replace some texts (one at a time, as an application would) and delete others.
            for (int i = 0; i < 30; i++) {
                int at = rnd.nextInt(docs.size());
                Doc old = docs.get(at);
                Doc now =
                        new Doc(
                                old.id,
                                old.tenant,
                                old.subject,
                                WORDS[rnd.nextInt(WORDS.length)] + " " + old.text,
                                old.year);
                docs.set(at, now);
                c.upsert(record(now));
            }
            List<String> gone = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                gone.add(docs.remove(rnd.nextInt(docs.size())).id);
            }
            assertEquals(40, c.deleteAll("t0", gone));
            // A delete merges deleted documents away, so the statistics are the survivors' alone.
            for (int q = 0; q < 20; q++) {
                String query =
                        WORDS[rnd.nextInt(WORDS.length)] + " " + WORDS[rnd.nextInt(WORDS.length)];
                List<String> ids = new ArrayList<>();
                List<float[]> scores = oracle(docs, query, d -> true, 10, ids);
                assertSameRanking(
                        ids,
                        scores,
                        c.search(SearchRequest.keyword(query, 10).tenant("t0")),
                        "query " + q + Seeds.replay(seed));
            }
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r.toString());
            }
        }
    }

    @Test
    void hybridSearchIsTheReciprocalRankFusionOfTheVectorAndKeywordLists() throws IOException {
        long seed = Seeds.draw("hybridSearchIsTheReciprocalRankFusionOfTheVectorAndKeywordLists");
        Random rnd = new Random(seed);
        List<Doc> docs =
                corpus(rnd, 300).stream()
                        .map(d -> new Doc(d.id, "t0", d.subject, d.text, d.year))
                        .toList();
        WordHashEmbedder e = new WordHashEmbedder();
        try (Nepenthe store = open(e)) {
            VectorCollection c = store.createCollection(spec("exact"));
            c.upsertAll(docs.stream().map(TextSearchTest::record).toList());
            for (int q = 0; q < 20; q++) {
                String query =
                        WORDS[rnd.nextInt(WORDS.length)] + " " + WORDS[rnd.nextInt(WORDS.length)];
                int k = 1 + rnd.nextInt(10);
                int window = k + rnd.nextInt(30);
                List<SearchHit> byVector =
                        c.search(
                                new SearchRequest(
                                        e.embed(query),
                                        window,
                                        "t0",
                                        null,
                                        null,
                                        dev.nepenthe.core.index.SearchParams.DEFAULTS));
                List<SearchHit> byKeyword =
                        c.search(SearchRequest.keyword(query, window).tenant("t0"));
                Map<String, Double> fused = new HashMap<>();
                for (List<SearchHit> list : List.of(byVector, byKeyword)) {
                    for (int i = 0; i < list.size(); i++) {
                        fused.merge(list.get(i).id(), 1.0 / (60 + i + 1), Double::sum);
                    }
                }
                List<SearchHit> hybrid =
                        c.search(
                                SearchRequest.hybrid(query, k)
                                        .tenant("t0")
                                        .param("window", window));
                assertEquals(
                        Math.min(k, fused.size()),
                        hybrid.size(),
                        "query " + q + Seeds.replay(seed));
                double prev = Double.MAX_VALUE;
                for (SearchHit h : hybrid) {
                    double expected = fused.get(h.id());
                    assertEquals(
                            expected,
                            h.score(),
                            1e-6,
                            "fused score of " + h.id() + Seeds.replay(seed));
                    assertTrue(h.score() <= prev + 1e-9, "descending" + Seeds.replay(seed));
                    prev = h.score();
                }
                // Nothing left out scores above the last hit returned.
                double last = hybrid.get(hybrid.size() - 1).score();
                Set<String> returned = new HashSet<>(hybrid.stream().map(SearchHit::id).toList());
                fused.forEach(
                        (id, s) ->
                                assertTrue(
                                        returned.contains(id) || s <= last + 1e-6,
                                        id
                                                + " scores "
                                                + s
                                                + " above the last hit "
                                                + last
                                                + Seeds.replay(seed)));
            }
        }
    }

    @Test
    void textOnlyRecordsAreEmbeddedByTheCollectionsEmbedderAndTextQueriesToo() throws IOException {
        WordHashEmbedder e = new WordHashEmbedder();
        try (Nepenthe store = open(e)) {
            VectorCollection c = store.createCollection(spec("exact"));
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("a").text("copper lantern by the harbor").build(),
                            VectorRecord.builder("b")
                                    .text("glacier and tundra")
                                    .vector(e.embed("river"))
                                    .build()));
            assertTrue(
                    Arrays.equals(
                            e.embed("copper lantern by the harbor"),
                            c.get("a").orElseThrow().vector()));
            // A vector given with the text is kept, not replaced by the text's embedding.
            assertTrue(Arrays.equals(e.embed("river"), c.get("b").orElseThrow().vector()));
            List<SearchHit> hits = c.search(SearchRequest.semantic("harbor lantern copper", 1));
            assertEquals("a", hits.get(0).id());
            assertEquals(
                    hits.get(0).score(),
                    c.search(SearchRequest.of(e.embed("harbor lantern copper"), 1)).get(0).score(),
                    0f);
        }
    }

    @Test
    void whatTheCollectionCannotDoIsRefusedWithAClearErrorAndNothingIsStored() throws IOException {
        WordHashEmbedder e = new WordHashEmbedder();
        try (Nepenthe store = open(e)) {
            VectorCollection plain =
                    store.createCollection(
                            CollectionSpec.of("plain", WordHashEmbedder.DIM, Metric.COSINE));
            IllegalStateException noText =
                    assertThrows(
                            IllegalStateException.class,
                            () -> plain.search(SearchRequest.keyword("river", 3)));
            assertTrue(noText.getMessage().contains("has no text index"), noText.getMessage());
            IllegalArgumentException noEmbedder =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    plain.upsertAll(
                                            List.of(
                                                    VectorRecord.builder("x")
                                                            .vector(e.embed("a"))
                                                            .build(),
                                                    VectorRecord.builder("y")
                                                            .text("only text")
                                                            .build())));
            assertTrue(
                    noEmbedder.getMessage().contains("batch position 1")
                            && noEmbedder.getMessage().contains("without an embedder"),
                    noEmbedder.getMessage());
            assertEquals(0, plain.size(), "a refused batch stores nothing");
            IllegalArgumentException unknown =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.createCollection(
                                            spec("exact").withEmbedder("no-such-model")));
            assertTrue(unknown.getMessage().contains("no-such-model"), unknown.getMessage());
            IllegalArgumentException dims =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.createCollection(
                                            CollectionSpec.of("d", 8, Metric.COSINE)
                                                    .withEmbedder("word-hash-64")));
            assertTrue(dims.getMessage().contains("gives 64"), dims.getMessage());
            assertThrows(
                    IllegalArgumentException.class,
                    () -> CollectionSpec.of("x", 4, Metric.COSINE).withTextIndex("klingon"));
            store.createCollection(spec("exact"))
                    .upsert(VectorRecord.builder("a").text("river").build());
        }
        // Reopened without the embedder: vectors and keyword search work, text-only writes say why
        // not.
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.collection("notes");
            assertEquals("a", c.search(SearchRequest.keyword("river", 1)).get(0).id());
            IllegalArgumentException missing =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> c.upsert(VectorRecord.builder("b").text("meadow").build()));
            assertTrue(missing.getMessage().contains("'word-hash-64'"), missing.getMessage());
            IllegalStateException query =
                    assertThrows(
                            IllegalStateException.class,
                            () -> c.search(SearchRequest.semantic("meadow", 1)));
            assertTrue(query.getMessage().contains("'word-hash-64'"), query.getMessage());
            assertEquals(1, c.size());
        }
    }

    @Test
    void theTextIndexSurvivesARestartAndIsRebuiltWhenItFallsBehindTheRecords() throws IOException {
        long seed =
                Seeds.draw("theTextIndexSurvivesARestartAndIsRebuiltWhenItFallsBehindTheRecords");
        Random rnd = new Random(seed);
        List<Doc> docs =
                corpus(rnd, 120).stream()
                        .map(d -> new Doc(d.id, "t0", d.subject, d.text, d.year))
                        .toList();
        Path data = tmp.resolve("data");
        Path copy = tmp.resolve("copy");
        Path copyKeys = tmp.resolve("copy-keys");
        try (Nepenthe store = open(new WordHashEmbedder())) {
            VectorCollection c = store.createCollection(spec("exact"));
            c.upsertAll(docs.subList(0, 60).stream().map(TextSearchTest::record).toList());
            c.checkpoint(); // Lucene commits with the checkpoint
            c.upsertAll(docs.subList(60, 120).stream().map(TextSearchTest::record).toList());
            c.delete("t0", docs.get(0).id);
            c.upsert(record(docs.get(1)).toBuilder().text("comet comet comet").build());
            // An image of the folders now, as a crash would leave them: the log holds writes the
            // text index never committed.
            dev.nepenthe.testing.TestFiles.copyTree(data, copy);
            dev.nepenthe.testing.TestFiles.copyTree(tmp.resolve("keys"), copyKeys);
            Files.deleteIfExists(copy.resolve("store.lock"));
        }
        try (Nepenthe store =
                Nepenthe.open(
                        copy,
                        StoreOptions.defaults()
                                .withKeystore(copyKeys)
                                .withEmbedder(new WordHashEmbedder()))) {
            VectorCollection c = store.collection("notes");
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r + Seeds.replay(seed));
            }
            assertEquals(119, c.size());
            assertEquals(
                    docs.get(1).id,
                    c.search(SearchRequest.keyword("comet", 1).tenant("t0")).get(0).id());
            assertFalse(
                    c.search(SearchRequest.keyword(docs.get(0).text, 200).tenant("t0")).stream()
                            .anyMatch(h -> h.id().equals(docs.get(0).id)),
                    "a deleted record is not found" + Seeds.replay(seed));
        }
        // The text folder lost altogether: rebuilt from the records at open.
        try (Stream<Path> files = Files.list(copy.resolve("collections/notes/text"))) {
            for (Path f : files.toList()) {
                Files.delete(f);
            }
        }
        try (Nepenthe store = Nepenthe.open(copy, StoreOptions.defaults().withKeystore(copyKeys))) {
            VectorCollection c = store.collection("notes");
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r + Seeds.replay(seed));
            }
            Doc probe = docs.get(77);
            List<String> ids = new ArrayList<>();
            List<Doc> live = new ArrayList<>(docs.subList(2, 120));
            live.add(
                    new Doc(
                            docs.get(1).id,
                            "t0",
                            docs.get(1).subject,
                            "comet comet comet",
                            docs.get(1).year));
            List<float[]> scores = oracle(live, probe.text, d -> true, 10, ids);
            assertSameRanking(
                    ids,
                    scores,
                    c.search(SearchRequest.keyword(probe.text, 10).tenant("t0")),
                    "after the rebuild" + Seeds.replay(seed));
        }
    }

    @Test
    void aRestoredSnapshotGetsItsTextIndexRebuiltWithoutWhatWasForgottenSince() throws Exception {
        Path snap = tmp.resolve("snap");
        try (Nepenthe store = open(new WordHashEmbedder())) {
            VectorCollection c = store.createCollection(spec("exact"));
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("a")
                                    .subject("ann")
                                    .text("walnut orchard ledger")
                                    .build(),
                            VectorRecord.builder("b")
                                    .subject("bob")
                                    .text("walnut harbor")
                                    .build()));
            store.snapshot(snap);
            var op =
                    store.awaitOperation(
                            store.forget(
                                            dev.nepenthe.core.forget.ForgetRequest.of(
                                                    dev.nepenthe.core.forget.ForgetScope.subject(
                                                            "ann"),
                                                    "forget-ann",
                                                    "gdpr-art17"))
                                    .id(),
                            java.time.Duration.ofSeconds(60));
            assertEquals(dev.nepenthe.core.forget.OperationState.SEALED, op.state(), op.toString());
        }
        assertFalse(
                Files.exists(snap.resolve("collections/notes/text")),
                "snapshots carry no text index: it is derived");
        Path restored = tmp.resolve("restored");
        Nepenthe.restore(snap, restored);
        try (Nepenthe store =
                Nepenthe.open(
                        restored, StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.collection("notes");
            assertEquals(
                    List.of("b"),
                    c.search(SearchRequest.keyword("walnut", 5)).stream()
                            .map(SearchHit::id)
                            .toList(),
                    "rebuilt from the restored records, less the forgotten one");
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r.toString());
            }
        }
    }

    @Test
    void droppingACollectionDestroysTheKeysOfItsTextFiles() throws IOException {
        try (Nepenthe store = open(new WordHashEmbedder())) {
            store.createCollection(spec("exact"))
                    .upsertAll(
                            List.of(
                                    VectorRecord.builder("a").text("walnut orchard").build(),
                                    VectorRecord.builder("b")
                                            .subject("bob")
                                            .text("walnut harbor")
                                            .build()));
        }
        dev.nepenthe.core.internal.crypto.MasterKey mk =
                dev.nepenthe.core.internal.crypto.MasterKey.resolve(
                        tmp.resolve("keys/master.key"), false);
        int withText;
        try (var ks = dev.nepenthe.core.internal.crypto.Keystore.open(tmp.resolve("keys"), mk)) {
            withText = ks.size();
        }
        assertTrue(
                withText > 2,
                "the text index's files have keys of their own: " + withText + " keys");
        try (Nepenthe store = open(new WordHashEmbedder())) {
            assertTrue(store.dropCollection("notes"));
        }
        try (var ks = dev.nepenthe.core.internal.crypto.Keystore.open(tmp.resolve("keys"), mk)) {
            assertEquals(0, ks.size(), "no key of the dropped collection is left");
        }
    }
}
