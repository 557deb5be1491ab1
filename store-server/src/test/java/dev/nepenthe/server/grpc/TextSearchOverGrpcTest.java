package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchMode;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.ServerStats;
import dev.nepenthe.grpc.v1.ServerStatsRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.Value;
import dev.nepenthe.testing.Seeds;
import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Text over gRPC against the embedded store as the oracle: a collection with a text index and the
 * bundled embedder, text-only records embedded by the server, and keyword, semantic and hybrid
 * searches that return exactly the ids and scores the store's own search returns for the same
 * request; the statuses of what a collection lacks and of ambiguous requests. One server and one
 * model load for the class.
 */
class TextSearchOverGrpcTest {

    @TempDir static Path tmp;

    private static Nepenthe store;
    private static NepentheServer server;
    private static ManagedChannel channel;
    private static String operator;
    private static String acme;

    private static final String[] WORDS =
            ("river mountain ledger invoice harbor lantern orchard violin glacier copper meadow"
                 + " falcon pepper saddle thunder quartz walnut ember tundra canyon beacon cobalt"
                 + " willow marble cedar prairie comet anchor basil raven")
                    .split(" ");

    @BeforeAll
    static void start() throws Exception {
        // What 'serve' does: the bundled embedder registered, loaded on the first embedding.
        store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        NepentheServer.withBundledEmbedders(
                                StoreOptions.defaults().withKeystore(tmp.resolve("keys"))));
        operator = Tokens.newToken();
        acme = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(
                tokens,
                Tokens.line(operator, "ops", true)
                        + "\n"
                        + Tokens.line(acme, "acme", false)
                        + "\n");
        String name = "nepenthe-text-test-" + System.nanoTime();
        Limits limits =
                new Limits(
                        1 << 20,
                        200,
                        100,
                        5000,
                        1024,
                        2,
                        5,
                        1000,
                        1L << 20,
                        Limits.Calls.DEFAULTS,
                        Limits.Queries.DEFAULTS);
        server =
                NepentheServer.start(
                        InProcessServerBuilder.forName(name),
                        store,
                        Tokens.read(tokens),
                        limits,
                        true);
        channel = InProcessChannelBuilder.forName(name).build();
        create("docs", "english", MiniLmEmbedder.NAME);
        create("vectors-only", "", MiniLmEmbedder.NAME);
        create("keywords-only", "english", "");
        upsertCorpus();
    }

    @AfterAll
    static void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    private static CallCredentials bearer(String token) {
        return new CallCredentials() {
            @Override
            public void applyRequestMetadata(
                    RequestInfo info, Executor executor, MetadataApplier applier) {
                Metadata m = new Metadata();
                m.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
                applier.apply(m);
            }
        };
    }

    private static CollectionsGrpc.CollectionsBlockingStub collections(String token) {
        return CollectionsGrpc.newBlockingStub(channel).withCallCredentials(bearer(token));
    }

    private static RecordsGrpc.RecordsBlockingStub records() {
        return RecordsGrpc.newBlockingStub(channel).withCallCredentials(bearer(acme));
    }

    private static CollectionInfo create(String name, String analyzer, String embedder) {
        return collections(operator)
                .create(
                        CreateCollectionRequest.newBuilder()
                                .setSpec(
                                        CollectionSpec.newBuilder()
                                                .setName(name)
                                                .setDimension(MiniLmEmbedder.DIMENSION)
                                                .setMetric(Metric.COSINE)
                                                .setTextAnalyzer(analyzer)
                                                .setEmbedder(embedder))
                                .build());
    }

    /** 60 short texts of a skewed vocabulary, half of them about alice, with a year. */
    private static List<Record> corpus() {
        Random rnd = new Random(11);
        List<Record> out = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            StringBuilder sb = new StringBuilder();
            for (int w = 0, n = 3 + rnd.nextInt(10); w < n; w++) {
                int idx =
                        (int)
                                Math.min(
                                        WORDS.length - 1,
                                        Math.floor(-Math.log(1 - rnd.nextDouble()) * 6));
                sb.append(w == 0 ? "" : " ").append(WORDS[idx]);
            }
            Record.Builder r =
                    Record.newBuilder()
                            .setId("t" + i)
                            .setText(sb.toString())
                            .putMetadata(
                                    "year", Value.newBuilder().setIntValue(2020 + i % 5).build());
            if (i % 2 == 0) {
                r.setSubject("alice");
            }
            out.add(r.build());
        }
        return out;
    }

    private static void upsertCorpus() {
        List<Record> corpus = corpus();
        records()
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("docs")
                                .addAllRecords(corpus)
                                .build());
    }

    private static StatusRuntimeException failure(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run);
    }

    /** The store's hits as "id score" lines, to compare with the server's. */
    private static List<String> expected(dev.nepenthe.core.SearchRequest q, String collection) {
        List<String> out = new ArrayList<>();
        for (SearchHit h : store.collection(collection).search(q)) {
            out.add(h.id() + " " + h.score());
        }
        return out;
    }

    private static List<String> served(SearchRequest q) {
        List<String> out = new ArrayList<>();
        for (dev.nepenthe.grpc.v1.SearchHit h : records().search(q).getHitsList()) {
            out.add(h.getRecord().getId() + " " + h.getScore());
        }
        return out;
    }

    @Test
    void describeAndListReportTheAnalyzerAndTheEmbedder() {
        CollectionSpec docs =
                collections(acme)
                        .describe(DescribeCollectionRequest.newBuilder().setName("docs").build())
                        .getSpec();
        assertEquals("english", docs.getTextAnalyzer());
        assertEquals(MiniLmEmbedder.NAME, docs.getEmbedder());
        assertEquals("english", store.collection("docs").spec().textAnalyzer());
        CollectionSpec plain =
                collections(acme)
                        .list(ListCollectionsRequest.getDefaultInstance())
                        .getCollectionsList()
                        .stream()
                        .filter(s -> s.getName().equals("vectors-only"))
                        .findFirst()
                        .orElseThrow();
        assertEquals("", plain.getTextAnalyzer());
        assertEquals(MiniLmEmbedder.NAME, plain.getEmbedder());
        // A name the server has no embedder for, or an analyzer Lucene does not have: the caller's
        // mistake.
        StatusRuntimeException unknown = failure(() -> create("other", "english", "word2vec"));
        assertEquals(Status.Code.INVALID_ARGUMENT, unknown.getStatus().getCode());
        assertTrue(
                unknown.getStatus()
                        .getDescription()
                        .contains("embedder 'word2vec' is not one this store was opened" + " with"),
                unknown.getStatus().getDescription());
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                failure(() -> create("other", "klingon", "")).getStatus().getCode());
    }

    @Test
    void textOnlyRecordsAreEmbeddedByTheServer() {
        for (Record r : corpus()) {
            VectorRecord stored = store.collection("docs").get("acme", r.getId()).orElseThrow();
            assertEquals(MiniLmEmbedder.DIMENSION, stored.vector().length, r.getId());
            assertEquals(r.getText(), stored.text());
        }
        // The vector the store computed is the one the model gives for the text (the oracle: the
        // model itself, loaded apart from the server's).
        float[] model = new MiniLmEmbedder().embed(corpus().get(0).getText());
        float[] stored = store.collection("docs").get("acme", "t0").orElseThrow().vector();
        assertEquals(model.length, stored.length);
        for (int i = 0; i < model.length; i++) {
            assertEquals(model[i], stored[i], 1e-5, "dimension " + i);
        }
    }

    @Test
    void keywordSemanticAndHybridSearchesReturnWhatTheStoreReturns() {
        long seed = Seeds.draw("TextSearchOverGrpcTest.searches");
        Random rnd = new Random(seed);
        for (int round = 0; round < 30; round++) {
            String text = WORDS[rnd.nextInt(WORDS.length)] + " " + WORDS[rnd.nextInt(12)];
            int k = 1 + rnd.nextInt(20);
            SearchMode mode =
                    List.of(SearchMode.KEYWORD, SearchMode.HYBRID, SearchMode.VECTOR)
                            .get(rnd.nextInt(3));
            SearchRequest.Builder wire =
                    SearchRequest.newBuilder()
                            .setCollection("docs")
                            .setK(k)
                            .setText(text)
                            .setMode(mode);
            dev.nepenthe.core.SearchRequest.Mode coreMode =
                    dev.nepenthe.core.SearchRequest.Mode.valueOf(mode.name());
            dev.nepenthe.core.SearchRequest q =
                    new dev.nepenthe.core.SearchRequest(
                            null,
                            text,
                            coreMode,
                            k,
                            "acme",
                            null,
                            null,
                            dev.nepenthe.core.index.SearchParams.DEFAULTS);
            if (rnd.nextBoolean()) {
                wire.setSubject("alice");
                q = q.subject("alice");
            }
            if (rnd.nextInt(3) == 0) {
                wire.setFilter(
                        dev.nepenthe.grpc.v1.Filter.newBuilder()
                                .setRange(
                                        dev.nepenthe.grpc.v1.Filter.Range.newBuilder()
                                                .setKey("year")
                                                .setMin(2021)
                                                .setMax(2023)));
                q = q.filter(Filter.range("year", 2021, 2023));
            }
            if (mode == SearchMode.HYBRID && rnd.nextBoolean()) {
                wire.putParams("window", "20").putParams("rrfK", "10");
                q = q.param("window", 20).param("rrfK", 10);
            }
            if (mode == SearchMode.HYBRID && rnd.nextBoolean()) {
                // A vector given with hybrid is used instead of the text's embedding.
                float[] v =
                        store.collection("docs")
                                .get("acme", "t" + rnd.nextInt(60))
                                .orElseThrow()
                                .vector();
                for (float x : v) {
                    wire.addVector(x);
                }
                q = q.vector(v);
            }
            String why = mode + " '" + text + "' k=" + k + " round " + round + Seeds.replay(seed);
            List<String> expected = expected(q, "docs");
            assertFalse(
                    expected.isEmpty() && mode != SearchMode.KEYWORD,
                    why + ": the oracle found nothing");
            assertEquals(expected, served(wire.build()), why);
        }
        // Text alone with no mode is a semantic search; the deprecated hybrid flag is HYBRID.
        assertEquals(
                expected(
                        dev.nepenthe.core.SearchRequest.semantic("copper lantern", 5)
                                .tenant("acme"),
                        "docs"),
                served(
                        SearchRequest.newBuilder()
                                .setCollection("docs")
                                .setK(5)
                                .setText("copper lantern")
                                .build()));
        @SuppressWarnings("deprecation")
        SearchRequest legacy =
                SearchRequest.newBuilder()
                        .setCollection("docs")
                        .setK(5)
                        .setText("copper lantern")
                        .setHybrid(true)
                        .build();
        assertEquals(
                expected(
                        dev.nepenthe.core.SearchRequest.hybrid("copper lantern", 5).tenant("acme"),
                        "docs"),
                served(legacy));
    }

    @Test
    void textQueriesBypassTheQueryCache() {
        ServerStats before =
                AdminGrpc.newBlockingStub(channel)
                        .withCallCredentials(bearer(operator))
                        .stats(ServerStatsRequest.getDefaultInstance());
        for (int i = 0; i < 3; i++) {
            for (SearchMode mode :
                    List.of(SearchMode.KEYWORD, SearchMode.HYBRID, SearchMode.VECTOR)) {
                records()
                        .search(
                                SearchRequest.newBuilder()
                                        .setCollection("docs")
                                        .setK(3)
                                        .setText("harbor lantern")
                                        .setMode(mode)
                                        .build());
            }
        }
        ServerStats after =
                AdminGrpc.newBlockingStub(channel)
                        .withCallCredentials(bearer(operator))
                        .stats(ServerStatsRequest.getDefaultInstance());
        assertTrue(after.getCacheEnabled());
        assertEquals(
                before.getCacheHits(),
                after.getCacheHits(),
                "a text query was served from the cache");
        assertEquals(
                before.getCacheMisses(),
                after.getCacheMisses(),
                "a text query was looked up in the cache");
        // Control: a vector query is looked up.
        SearchRequest.Builder byVector = SearchRequest.newBuilder().setCollection("docs").setK(3);
        for (float x : store.collection("docs").get("acme", "t1").orElseThrow().vector()) {
            byVector.addVector(x);
        }
        records().search(byVector.build());
        ServerStats control =
                AdminGrpc.newBlockingStub(channel)
                        .withCallCredentials(bearer(operator))
                        .stats(ServerStatsRequest.getDefaultInstance());
        assertEquals(
                after.getCacheHits() + after.getCacheMisses() + 1,
                control.getCacheHits() + control.getCacheMisses());
    }

    @Test
    void whatACollectionLacksIsAPreconditionAndAnAmbiguousRequestIsInvalid() {
        // Keyword and hybrid need a text index.
        for (SearchMode mode : List.of(SearchMode.KEYWORD, SearchMode.HYBRID)) {
            StatusRuntimeException e =
                    failure(
                            () ->
                                    records()
                                            .search(
                                                    SearchRequest.newBuilder()
                                                            .setCollection("vectors-only")
                                                            .setK(3)
                                                            .setText("river")
                                                            .setMode(mode)
                                                            .build()));
            assertEquals(Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), mode.name());
            assertEquals(
                    "collection 'vectors-only' has no text index: keyword and hybrid search need"
                        + " one (CollectionSpec.withTextIndex, set when the collection is created)",
                    e.getStatus().getDescription());
        }
        // A text query, or a text-only record, needs an embedder.
        records()
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("keywords-only")
                                .addRecords(
                                        Record.newBuilder()
                                                .setId("v")
                                                .setText("river harbor")
                                                .addAllVector(unitVector()))
                                .build());
        StatusRuntimeException semantic =
                failure(
                        () ->
                                records()
                                        .search(
                                                SearchRequest.newBuilder()
                                                        .setCollection("keywords-only")
                                                        .setK(3)
                                                        .setText("river")
                                                        .build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, semantic.getStatus().getCode());
        assertTrue(
                semantic.getStatus()
                        .getDescription()
                        .startsWith("collection 'keywords-only' cannot embed text"),
                semantic.getStatus().getDescription());
        assertEquals(
                Status.Code.FAILED_PRECONDITION,
                failure(
                                () ->
                                        records()
                                                .search(
                                                        SearchRequest.newBuilder()
                                                                .setCollection("keywords-only")
                                                                .setK(3)
                                                                .setText("river")
                                                                .setMode(SearchMode.HYBRID)
                                                                .build()))
                        .getStatus()
                        .getCode(),
                "hybrid without a vector embeds the text");
        // ...but keyword search, and hybrid with the caller's vector, work there.
        assertEquals(
                List.of("v"),
                records()
                        .search(
                                SearchRequest.newBuilder()
                                        .setCollection("keywords-only")
                                        .setK(3)
                                        .setText("river")
                                        .setMode(SearchMode.KEYWORD)
                                        .build())
                        .getHitsList()
                        .stream()
                        .map(h -> h.getRecord().getId())
                        .toList());
        assertEquals(
                1,
                records()
                        .search(
                                SearchRequest.newBuilder()
                                        .setCollection("keywords-only")
                                        .setK(3)
                                        .setText("river")
                                        .setMode(SearchMode.HYBRID)
                                        .addAllVector(unitVector())
                                        .build())
                        .getHitsCount());
        StatusRuntimeException textOnly =
                failure(
                        () ->
                                records()
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("keywords-only")
                                                        .addRecords(
                                                                Record.newBuilder()
                                                                        .setId("w")
                                                                        .setText("no vector"))
                                                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, textOnly.getStatus().getCode());
        assertTrue(store.collection("keywords-only").get("acme", "w").isEmpty());

        // Contradictions and missing parts: INVALID_ARGUMENT, saying what was expected.
        SearchRequest.Builder base = SearchRequest.newBuilder().setCollection("docs").setK(3);
        assertInvalid(
                base.clone().setText("river").addAllVector(unitVector()).build(),
                "mode: expected VECTOR, KEYWORD"
                        + " or HYBRID when both a vector and text are given");
        assertInvalid(
                base.clone()
                        .setText("river")
                        .addAllVector(unitVector())
                        .setMode(SearchMode.VECTOR)
                        .build(),
                "mode VECTOR: expected a vector or text, got both");
        assertInvalid(
                base.clone()
                        .setText("river")
                        .addAllVector(unitVector())
                        .setMode(SearchMode.KEYWORD)
                        .build(),
                "mode KEYWORD: expected text and no vector");
        assertInvalid(
                base.clone().setMode(SearchMode.KEYWORD).build(),
                "mode KEYWORD: expected query text, got none");
        assertInvalid(
                base.clone().addAllVector(unitVector()).setMode(SearchMode.HYBRID).build(),
                "mode HYBRID: expected query text, got none");
        assertInvalid(
                base.clone().setMode(SearchMode.VECTOR).build(), "vector: expected a query vector");
        @SuppressWarnings("deprecation")
        SearchRequest contradiction =
                base.clone().setText("river").setHybrid(true).setMode(SearchMode.KEYWORD).build();
        assertInvalid(
                contradiction,
                "hybrid: the deprecated flag asks for mode HYBRID, got it with mode KEYWORD");
        assertInvalid(
                base.clone().setText("   ").setMode(SearchMode.KEYWORD).build(),
                "query text: expected 1 to");
        assertInvalid(
                base.clone().setModeValue(7).setText("river").build(),
                "mode: expected VECTOR, KEYWORD or HYBRID," + " got an unknown value 7");
        StatusRuntimeException tooLong =
                failure(
                        () ->
                                records()
                                        .search(
                                                base.clone()
                                                        .setText("x".repeat(5001))
                                                        .setMode(SearchMode.KEYWORD)
                                                        .build()));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, tooLong.getStatus().getCode());
        assertEquals(
                "query text characters: expected at most 5000, got 5001",
                tooLong.getStatus().getDescription());
    }

    private static void assertInvalid(SearchRequest q, String start) {
        StatusRuntimeException e = failure(() -> records().search(q));
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                e.getStatus().getCode(),
                e.getStatus().getDescription());
        assertTrue(
                e.getStatus().getDescription().startsWith(start), e.getStatus().getDescription());
    }

    private static List<Float> unitVector() {
        List<Float> v = new ArrayList<>();
        for (int i = 0; i < MiniLmEmbedder.DIMENSION; i++) {
            v.add(i == 0 ? 1f : 0f);
        }
        return v;
    }
}
