package dev.nepenthe.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.SimpleVectorStore;
import org.springframework.ai.vectorstore.filter.Filter;
import org.springframework.ai.vectorstore.filter.FilterExpressionBuilder;
import org.springframework.ai.vectorstore.filter.FilterExpressionBuilder.Op;

/**
 * The Spring AI adapter against Spring AI's own in-memory store (SimpleVectorStore, fed the same
 * documents through the same model) as the oracle for filters, and a forget through the adapter
 * that must seal with a receipt and leave nothing of the subject.
 */
class NepentheVectorStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static MiniLmEmbedder embedder;

    @TempDir Path tmp;

    @BeforeAll
    static void loadModel() {
        embedder = new MiniLmEmbedder();
    }

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"),
                StoreOptions.defaults().withKeystore(tmp.resolve("keys")).withEmbedder(embedder));
    }

    private static final String[] COUNTRIES = {"BG", "NL", "PT", "bg"};
    private static final int[] YEARS = {2019, 2020, 2021, 2023};
    private static final double[] RATINGS = {-1.5, 0.0, 2.5, 4.75};

    /** Every key present in every document: missing keys are where stores legitimately differ. */
    private static Map<String, Object> randomMetadata(Random rnd) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("country", COUNTRIES[rnd.nextInt(COUNTRIES.length)]);
        m.put("year", YEARS[rnd.nextInt(YEARS.length)]);
        m.put("rating", RATINGS[rnd.nextInt(RATINGS.length)]);
        m.put("open", rnd.nextBoolean());
        return m;
    }

    private static Op randomOp(FilterExpressionBuilder b, Random rnd, int depth) {
        if (depth > 0 && rnd.nextInt(3) == 0) {
            return switch (rnd.nextInt(3)) {
                case 0 -> b.and(randomOp(b, rnd, depth - 1), randomOp(b, rnd, depth - 1));
                case 1 -> b.or(randomOp(b, rnd, depth - 1), randomOp(b, rnd, depth - 1));
                default -> b.not(b.group(randomOp(b, rnd, depth - 1)));
            };
        }
        String key;
        Object v;
        Object w;
        switch (rnd.nextInt(4)) {
            case 0 -> {
                key = "country";
                v = COUNTRIES[rnd.nextInt(COUNTRIES.length)];
                w = COUNTRIES[rnd.nextInt(COUNTRIES.length)];
            }
            case 1 -> {
                key = "year";
                v = YEARS[rnd.nextInt(YEARS.length)];
                w = YEARS[rnd.nextInt(YEARS.length)];
            }
            case 2 -> {
                key = "rating";
                v = RATINGS[rnd.nextInt(RATINGS.length)];
                w = RATINGS[rnd.nextInt(RATINGS.length)];
            }
            default -> {
                return rnd.nextBoolean()
                        ? b.eq("open", rnd.nextBoolean())
                        : b.ne("open", rnd.nextBoolean());
            }
        }
        return switch (rnd.nextInt(8)) {
            case 0 -> b.eq(key, v);
            case 1 -> b.ne(key, v);
            case 2 -> b.gt(key, v);
            case 3 -> b.gte(key, v);
            case 4 -> b.lt(key, v);
            case 5 -> b.lte(key, v);
            case 6 -> b.in(key, v, w);
            default -> b.nin(key, v, w);
        };
    }

    @Test
    void filtersSelectWhatSpringAisOwnInMemoryStoreSelects() throws IOException {
        long seed =
                Seeds.draw(
                        "NepentheVectorStoreTest.filtersSelectWhatSpringAisOwnInMemoryStoreSelects");
        Random rnd = new Random(seed);
        EmbedderEmbeddingModel model = new EmbedderEmbeddingModel(embedder);
        try (Nepenthe nepenthe = open()) {
            // The Spring AI embedding model path (the IT covers the collection's own embedder).
            NepentheVectorStore store =
                    NepentheVectorStore.builder(
                                    nepenthe,
                                    nepenthe.createCollection(
                                            CollectionSpec.of(
                                                    "f", MiniLmEmbedder.DIMENSION, Metric.COSINE)))
                            .embeddingModel(model)
                            .build();
            SimpleVectorStore oracle = SimpleVectorStore.builder(model).build();
            int n = 60;
            List<Document> docs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                // One template: every cosine to the query is well above 0, so the oracle's
                // threshold drops none.
                docs.add(
                        new Document(
                                "doc-" + i,
                                "A short note about coffee number " + i,
                                randomMetadata(rnd)));
            }
            store.add(docs);
            oracle.add(docs);
            FilterExpressionBuilder b = new FilterExpressionBuilder();
            int split = 0;
            for (int trial = 0; trial < 60; trial++) {
                Filter.Expression e = randomOp(b, rnd, 3).build();
                SearchRequest req =
                        SearchRequest.builder()
                                .query("a note about coffee")
                                .topK(n)
                                .similarityThresholdAll()
                                .filterExpression(e)
                                .build();
                Set<String> expected =
                        oracle.similaritySearch(req).stream()
                                .map(Document::getId)
                                .collect(Collectors.toCollection(TreeSet::new));
                Set<String> got =
                        store.similaritySearch(req).stream()
                                .map(Document::getId)
                                .collect(Collectors.toCollection(TreeSet::new));
                assertEquals(expected, got, "trial " + trial + " " + e + Seeds.replay(seed));
                split += !expected.isEmpty() && expected.size() < n ? 1 : 0;
            }
            assertTrue(
                    split >= 20,
                    "only " + split + " of 60 filters split the documents" + Seeds.replay(seed));

            // The text form Spring AI parses, through delete: exactly the oracle's selection goes.
            String text = "country == 'BG' && year >= 2020 || rating < 0";
            Set<String> selected =
                    oracle
                            .similaritySearch(
                                    SearchRequest.builder()
                                            .query("coffee")
                                            .topK(n)
                                            .similarityThresholdAll()
                                            .filterExpression(text)
                                            .build())
                            .stream()
                            .map(Document::getId)
                            .collect(Collectors.toSet());
            store.delete(text);
            Set<String> left = new HashSet<>(store.collection().ids(store.tenant()));
            Set<String> expectedLeft =
                    docs.stream()
                            .map(Document::getId)
                            .filter(id -> !selected.contains(id))
                            .collect(Collectors.toSet());
            assertEquals(expectedLeft, left, Seeds.replay(seed));
        }
    }

    @Test
    void forgetSubjectSealsWithAReceiptAndLeavesNothingOfTheSubject() throws Exception {
        try (Nepenthe nepenthe = open()) {
            VectorCollection c =
                    nepenthe.createCollection(
                            CollectionSpec.of("notes", MiniLmEmbedder.DIMENSION, Metric.COSINE)
                                    .withEmbedder(MiniLmEmbedder.NAME));
            NepentheVectorStore store =
                    NepentheVectorStore.builder(nepenthe, c).subjectKey("user").build();
            store.add(
                    List.of(
                            new Document(
                                    "a1",
                                    "Alice booked a table for two on Friday.",
                                    Map.of("user", "alice")),
                            new Document(
                                    "a2", "Alice is allergic to peanuts.", Map.of("user", "alice")),
                            new Document(
                                    "b1",
                                    "Bob asked for the vegetarian menu.",
                                    Map.of("user", "bob")),
                            new Document("x1", "The kitchen closes at ten.", Map.of())));
            assertEquals(
                    "alice",
                    c.get("a1").orElseThrow().subject(),
                    "the subject key names the record's subject");
            ForgetOperation op = store.forgetSubject("alice", "ticket-9", "gdpr-art17", WAIT);
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertNotNull(op.receipt());
            assertTrue(nepenthe.evidence().checkReceipt(op.receipt()).ok());
            assertEquals(2, op.totalForgotten());
            List<Document> hits =
                    store.similaritySearch(
                            SearchRequest.builder()
                                    .query("What is Alice allergic to?")
                                    .topK(10)
                                    .similarityThresholdAll()
                                    .build());
            assertEquals(
                    Set.of("b1", "x1"),
                    hits.stream().map(Document::getId).collect(Collectors.toSet()));
            for (Document d : hits) {
                assertTrue(d.getScore() >= 0 && d.getScore() <= 1, "score " + d.getScore());
            }
        }
    }

    @Test
    void refusesACollectionThatCannotEmbedAndMetadataItCannotKeep() throws IOException {
        try (Nepenthe nepenthe = open()) {
            VectorCollection bare =
                    nepenthe.createCollection(
                            CollectionSpec.of("bare", MiniLmEmbedder.DIMENSION, Metric.COSINE));
            IllegalArgumentException noModel =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> NepentheVectorStore.builder(nepenthe, bare).build());
            assertTrue(
                    noModel.getMessage().contains("expected an embedding model"),
                    noModel.getMessage());
            NepentheVectorStore store =
                    NepentheVectorStore.builder(nepenthe, bare)
                            .embeddingModel(new EmbedderEmbeddingModel(embedder))
                            .build();
            IllegalArgumentException list =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.add(
                                            List.of(
                                                    new Document(
                                                            "d",
                                                            "text",
                                                            Map.of("tags", List.of("a", "b"))))));
            assertTrue(
                    list.getMessage()
                            .contains("metadata 'tags' expected a String, Boolean, UUID or number"),
                    list.getMessage());
            assertEquals(0, bare.size(), "nothing of a refused batch is stored");
        }
    }
}
