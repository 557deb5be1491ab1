package dev.nepenthe.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.Suspect;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Text in, text out with the real model (all-MiniLM-L6-v2): records stored as text only are found
 * by a paraphrased question (semantic), by a rare keyword (BM25), and by both fused (hybrid), which
 * ranks a record matching both above records matching either; after a forget no mode finds the
 * subject's text; and the verification probes catch a paraphrasing summary and a lexical near copy
 * that carry no {@code derivedFrom}.
 */
class TextRetrievalTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static MiniLmEmbedder model;

    @TempDir Path tmp;

    @BeforeAll
    static void loadModel() {
        model = new MiniLmEmbedder(); // about two seconds: loaded once for the class
    }

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"),
                StoreOptions.defaults().withKeystore(tmp.resolve("keys")).withEmbedder(model));
    }

    private static CollectionSpec spec() {
        return CollectionSpec.of("docs", MiniLmEmbedder.DIMENSION, Metric.COSINE)
                .withTextIndex("english")
                .withEmbedder(MiniLmEmbedder.NAME);
    }

    private static final Map<String, String> DOCS =
            Map.of(
                    "both",
                            "Refunds for the XR-7700 router are issued within 30 days when a"
                                    + " defective unit is returned.",
                    "keyword-only",
                            "XR-7700 firmware release notes: version 2.1 adds IPv6 and a new web"
                                    + " console.",
                    "meaning-only",
                            "Customers may send back faulty goods within a month and get their"
                                    + " money reimbursed in full.",
                    "garden",
                            "Tomatoes need six hours of sun a day and deep watering twice a week.",
                    "train",
                            "The night train to Vienna leaves platform 4 at 22:10 and has sleeping"
                                    + " cars.",
                    "recipe",
                            "Whisk the eggs with sugar until pale, then fold in the flour gently.",
                    "astronomy",
                            "Jupiter's Great Red Spot is a storm larger than the Earth that has"
                                    + " lasted centuries.",
                    "hr", "Employees accrue two days of paid leave for every month worked.");

    private static List<String> ids(List<SearchHit> hits) {
        return hits.stream().map(SearchHit::id).toList();
    }

    @Test
    void aParaphraseFindsByMeaningARareKeywordByBm25AndHybridRanksTheRecordMatchingBothFirst()
            throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(spec());
            c.upsertAll(
                    DOCS.entrySet().stream()
                            .map(e -> VectorRecord.builder(e.getKey()).text(e.getValue()).build())
                            .toList());

            // A question sharing almost no words with the answer.
            List<SearchHit> semantic =
                    c.search(
                            SearchRequest.semantic(
                                    "How can I get my cash back for a broken purchase?", 3));
            assertTrue(
                    List.of("meaning-only", "both").contains(semantic.get(0).id()),
                    "semantic: " + ids(semantic));
            assertFalse(
                    ids(semantic).contains("keyword-only")
                            && ids(semantic).indexOf("keyword-only") == 0);

            // A product code means nothing to the model; BM25 finds exactly the two records that
            // hold it.
            List<SearchHit> keyword = c.search(SearchRequest.keyword("XR-7700", 5));
            assertEquals(
                    List.of("both", "keyword-only"),
                    ids(keyword).stream().sorted().toList(),
                    "keyword: " + ids(keyword));

            // "both" holds the query's words and its meaning; "keyword-only" its product code;
            // "meaning-only" none of its words, only what it asks about.
            String query = "refund XR-7700";
            List<SearchHit> byVector = c.search(SearchRequest.semantic(query, 8));
            List<SearchHit> byKeyword = c.search(SearchRequest.keyword(query, 8));
            List<SearchHit> hybrid = c.search(SearchRequest.hybrid(query, 3));
            assertEquals(
                    "both",
                    hybrid.get(0).id(),
                    "hybrid: "
                            + ids(hybrid)
                            + ", vector: "
                            + ids(byVector)
                            + ", keyword: "
                            + ids(byKeyword));
            assertFalse(
                    ids(byKeyword).contains("meaning-only"),
                    "precondition: keyword: " + ids(byKeyword));
            List<String> all = ids(c.search(SearchRequest.hybrid(query, 8)));
            assertTrue(
                    all.indexOf("both") < all.indexOf("keyword-only")
                            && all.indexOf("both") < all.indexOf("meaning-only"),
                    "hybrid ranks the record matching both above those matching either: " + all);
        }
    }

    @Test
    void afterAForgetNoSearchModeFindsTheSubjectsText() throws IOException, InterruptedException {
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(spec());
            c.upsertAll(
                    DOCS.entrySet().stream()
                            .map(
                                    e ->
                                            VectorRecord.builder(e.getKey())
                                                    .subject("staff")
                                                    .text(e.getValue())
                                                    .build())
                            .toList());
            String secret =
                    "Ingrid Vasquez-Thornbury asked to move her pension from Zephyr Mutual to the"
                            + " XR-7700 plan.";
            c.upsert(VectorRecord.builder("ingrid-1").subject("ingrid").text(secret).build());
            assertEquals(
                    "ingrid-1", c.search(SearchRequest.keyword("Thornbury Zephyr", 1)).get(0).id());
            assertEquals(
                    "ingrid-1",
                    c.search(
                                    SearchRequest.semantic(
                                            "moving a retirement fund to another provider", 1))
                            .get(0)
                            .id());

            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("ingrid"),
                                                    "forget-ingrid",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, op.state(), op.note() + " " + op.suspects());
            for (SearchRequest r :
                    List.of(
                            SearchRequest.keyword("Thornbury Zephyr pension", 20),
                            SearchRequest.semantic(
                                    "moving a retirement fund to another provider", 20),
                            SearchRequest.hybrid("Ingrid pension Zephyr Mutual", 20),
                            SearchRequest.of(model.embed(secret), 20))) {
                assertFalse(ids(c.search(r)).contains("ingrid-1"), r + ": " + ids(c.search(r)));
            }
            assertEquals(DOCS.size(), c.size());
        }
    }

    @Test
    void aParaphrasingSummaryAndALexicalNearCopyWithoutProvenanceAreCaughtByTheProbes()
            throws IOException, InterruptedException {
        String original =
                "Maria Gonzalez was diagnosed with type 2 diabetes in March and started taking"
                        + " metformin.";
        String summary =
                "In March, Maria Gonzalez learned she has type 2 diabetes; she now takes"
                        + " metformin.";
        // The same rare words, buried in a long note about something else: its vector sits far
        // from the original's, so only the lexical probe can see it.
        String buried =
                "Quarterly facilities report. The east wing elevator was serviced, the parking"
                    + " garage lighting was replaced with LEDs, and the cafeteria menu now rotates"
                    + " weekly. Visitor badges must be returned at reception. Gonzalez Maria"
                    + " metformin diabetes type 2 March. The fire drill is scheduled for the second"
                    + " Tuesday, and bicycle racks were added near the north entrance.";
        float[] o = model.embed(original);
        double buriedCosine = cosine(o, model.embed(buried));
        assertTrue(
                buriedCosine < ProbePolicy.DEFAULT.threshold(),
                "precondition: the buried copy is far from the original by vector (cosine "
                        + buriedCosine
                        + ")");
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(spec());
            c.upsertAll(
                    DOCS.entrySet().stream()
                            .map(
                                    e ->
                                            VectorRecord.builder(e.getKey())
                                                    .subject("staff")
                                                    .text(e.getValue())
                                                    .build())
                            .toList());
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("maria-visit")
                                    .subject("maria")
                                    .text(original)
                                    .build(),
                            VectorRecord.builder("weekly-summary")
                                    .subject("clinic")
                                    .text(summary)
                                    .build(),
                            VectorRecord.builder("facilities")
                                    .subject("ops")
                                    .text(buried)
                                    .build()));
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("maria"),
                                                    "forget-maria",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, op.state(), op.toString());
            Map<String, List<String>> reasons =
                    op.suspects().stream()
                            .collect(
                                    Collectors.groupingBy(
                                            Suspect::recordId,
                                            Collectors.mapping(
                                                    Suspect::reason, Collectors.toList())));
            assertEquals(
                    java.util.Set.of("weekly-summary", "facilities"),
                    reasons.keySet(),
                    "suspects: " + op.suspects());
            assertEquals(
                    List.of("text-residue"),
                    reasons.get("facilities"),
                    "only the lexical probe sees the buried copy");
            System.out.println(
                    "[probes] summary flagged by "
                            + reasons.get("weekly-summary")
                            + "; buried copy at cosine "
                            + buriedCosine
                            + " flagged by "
                            + reasons.get("facilities"));
        }
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }
}
