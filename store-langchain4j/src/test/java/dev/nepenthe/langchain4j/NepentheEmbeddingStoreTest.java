package dev.nepenthe.langchain4j;

import static dev.langchain4j.store.embedding.filter.MetadataFilterBuilder.metadataKey;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.filter.Filter;
import dev.langchain4j.store.embedding.filter.comparison.ContainsString;
import dev.langchain4j.store.embedding.filter.comparison.IsEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsGreaterThan;
import dev.langchain4j.store.embedding.filter.comparison.IsGreaterThanOrEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsIn;
import dev.langchain4j.store.embedding.filter.comparison.IsLessThan;
import dev.langchain4j.store.embedding.filter.comparison.IsLessThanOrEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsNotEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsNotIn;
import dev.langchain4j.store.embedding.filter.logical.And;
import dev.langchain4j.store.embedding.filter.logical.Not;
import dev.langchain4j.store.embedding.filter.logical.Or;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The adapter against oracles of its own, beyond LangChain4j's contract suites: LangChain4j's own
 * filters ({@link Filter#test}, its in-memory semantics) decide which records a translated filter
 * must select; cosines recomputed here decide the scores; the metadata that went in is what must
 * come out; and a forget through the adapter must leave nothing of the subject in any collection of
 * the tenant while issuing a receipt the store's evidence accepts.
 */
class NepentheEmbeddingStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    // High enough that random vectors are never near neighbours: the forget probe (cosine 0.85)
    // flags none.
    private static final int DIM = 64;

    @TempDir Path tmp;

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    private static NepentheEmbeddingStore adapter(Nepenthe store, String collection) {
        return NepentheEmbeddingStore.builder(
                        store,
                        store.createCollection(CollectionSpec.of(collection, DIM, Metric.COSINE)))
                .build();
    }

    private static Embedding randomEmbedding(Random rnd) {
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return Embedding.from(v);
    }

    private static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    // ---- random metadata and filters, one value kind per key so LangChain4j's filters never meet
    // a type mismatch

    private static final String[] STRINGS = {"", "a", "b", "ab", "B", "a b", "ba"};
    private static final UUID[] UUIDS = {UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()};
    private static final float[] FLOATS = {-1.5f, 0f, 1.1f, 1.2f, Float.MIN_VALUE};
    private static final double[] DOUBLES = {-1.5, 0.0, 1.1, 1.2, Double.MIN_VALUE};

    private static Object randomValue(Random rnd, String key) {
        return switch (key) {
            case "s" -> STRINGS[rnd.nextInt(STRINGS.length)];
            case "n" ->
                    switch (rnd.nextInt(4)) {
                        case 0 -> rnd.nextInt(5) - 2;
                        case 1 -> (long) rnd.nextInt(5) - 2;
                        case 2 -> rnd.nextBoolean() ? Integer.MIN_VALUE : Integer.MAX_VALUE;
                        default -> rnd.nextBoolean() ? Long.MAX_VALUE : Long.MAX_VALUE - 1;
                    };
            case "f" -> FLOATS[rnd.nextInt(FLOATS.length)];
            case "d" -> DOUBLES[rnd.nextInt(DOUBLES.length)];
            default -> UUIDS[rnd.nextInt(UUIDS.length)];
        };
    }

    private static final String[] KEYS = {"s", "n", "f", "d", "u"};

    private static Metadata randomMetadata(Random rnd) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String k : KEYS) {
            if (rnd.nextInt(10) < 7) {
                m.put(k, randomValue(rnd, k));
            }
        }
        return new Metadata(m);
    }

    private static Filter randomFilter(Random rnd, int depth) {
        if (depth > 0 && rnd.nextInt(3) == 0) {
            return switch (rnd.nextInt(3)) {
                case 0 -> new And(randomFilter(rnd, depth - 1), randomFilter(rnd, depth - 1));
                case 1 -> new Or(randomFilter(rnd, depth - 1), randomFilter(rnd, depth - 1));
                default -> new Not(randomFilter(rnd, depth - 1));
            };
        }
        String key = KEYS[rnd.nextInt(KEYS.length)];
        Object v = randomValue(rnd, key);
        List<Object> vs = List.of(v, randomValue(rnd, key));
        int ops = key.equals("u") ? 4 : key.equals("s") ? 9 : 8;
        return switch (rnd.nextInt(ops)) {
            case 0 -> new IsEqualTo(key, v);
            case 1 -> new IsNotEqualTo(key, v);
            case 2 -> new IsIn(key, vs);
            case 3 -> new IsNotIn(key, vs);
            case 4 -> new IsGreaterThan(key, (Comparable<?>) v);
            case 5 -> new IsGreaterThanOrEqualTo(key, (Comparable<?>) v);
            case 6 -> new IsLessThan(key, (Comparable<?>) v);
            case 7 -> new IsLessThanOrEqualTo(key, (Comparable<?>) v);
            default -> new ContainsString(key, (String) v);
        };
    }

    @Test
    void translatedFiltersSelectExactlyWhatLangChain4jsOwnFiltersSelect() throws IOException {
        long seed =
                Seeds.draw(
                        "NepentheEmbeddingStoreTest.translatedFiltersSelectExactlyWhatLangChain4jsOwnFiltersSelect");
        Random rnd = new Random(seed);
        try (Nepenthe nepenthe = open()) {
            NepentheEmbeddingStore store = adapter(nepenthe, "f");
            int n = 200;
            List<String> ids = new ArrayList<>();
            List<Embedding> embeddings = new ArrayList<>();
            List<TextSegment> segments = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ids.add("r" + i);
                embeddings.add(randomEmbedding(rnd));
                segments.add(TextSegment.from("text " + i, randomMetadata(rnd)));
            }
            store.addAll(ids, embeddings, segments);
            Embedding query = randomEmbedding(rnd);

            int nonTrivial = 0;
            for (int trial = 0; trial < 150; trial++) {
                Filter filter = randomFilter(rnd, 3);
                String where = "trial " + trial + " " + filter + Seeds.replay(seed);
                Set<String> expected = new TreeSet<>();
                for (int i = 0; i < n; i++) {
                    if (filter.test(segments.get(i).metadata())) {
                        expected.add(ids.get(i));
                    }
                }
                List<EmbeddingMatch<TextSegment>> all =
                        store.search(
                                        EmbeddingSearchRequest.builder()
                                                .queryEmbedding(query)
                                                .maxResults(n)
                                                .filter(filter)
                                                .build())
                                .matches();
                assertEquals(
                        expected,
                        all.stream()
                                .map(EmbeddingMatch::embeddingId)
                                .collect(Collectors.toCollection(TreeSet::new)),
                        where);

                // With a small maxResults, the best of the matching records: the filter narrows the
                // candidates, it does not cut a larger result.
                List<Double> best =
                        expected.stream()
                                .map(
                                        id ->
                                                (cosine(
                                                                        embeddings
                                                                                .get(
                                                                                        Integer
                                                                                                .parseInt(
                                                                                                        id
                                                                                                                .substring(
                                                                                                                        1)))
                                                                                .vector(),
                                                                        query.vector())
                                                                + 1)
                                                        / 2)
                                .sorted(Comparator.reverseOrder())
                                .limit(3)
                                .toList();
                List<EmbeddingMatch<TextSegment>> top =
                        store.search(
                                        EmbeddingSearchRequest.builder()
                                                .queryEmbedding(query)
                                                .maxResults(3)
                                                .filter(filter)
                                                .build())
                                .matches();
                assertEquals(best.size(), top.size(), where);
                for (int i = 0; i < top.size(); i++) {
                    assertTrue(expected.contains(top.get(i).embeddingId()), where);
                    assertEquals(best.get(i), top.get(i).score(), 1e-5, where);
                }
                nonTrivial += !expected.isEmpty() && expected.size() < n ? 1 : 0;
            }
            assertTrue(
                    nonTrivial >= 50,
                    "only "
                            + nonTrivial
                            + " of 150 filters split the records"
                            + Seeds.replay(seed));

            // removeAll(filter) deletes exactly what the filter selects, and nothing else.
            Filter filter;
            Set<String> selected = new HashSet<>();
            do {
                filter = randomFilter(rnd, 2);
                selected.clear();
                for (int i = 0; i < n; i++) {
                    if (filter.test(segments.get(i).metadata())) {
                        selected.add(ids.get(i));
                    }
                }
            } while (selected.isEmpty() || selected.size() == n);
            store.removeAll(filter);
            Set<String> left = new TreeSet<>(store.collection().ids(store.tenant()));
            Set<String> expectedLeft = new TreeSet<>(ids);
            expectedLeft.removeAll(selected);
            assertEquals(expectedLeft, left, "removeAll " + filter + Seeds.replay(seed));
        }
    }

    @Test
    void metadataComesBackWithTheTypesItWentInWith() throws IOException {
        long seed =
                Seeds.draw("NepentheEmbeddingStoreTest.metadataComesBackWithTheTypesItWentInWith");
        Random rnd = new Random(seed);
        try (Nepenthe nepenthe = open()) {
            NepentheEmbeddingStore store = adapter(nepenthe, "m");
            Map<String, TextSegment> written = new HashMap<>();
            Map<String, Embedding> vectors = new HashMap<>();
            for (int i = 0; i < 50; i++) {
                Map<String, Object> m = new LinkedHashMap<>();
                for (int k = rnd.nextInt(8); k > 0; k--) {
                    // Keys with digits and colons, as the type list writes them itself.
                    String key =
                            switch (rnd.nextInt(4)) {
                                case 0 -> "k" + rnd.nextInt(5);
                                case 1 -> "3:I" + rnd.nextInt(3);
                                case 2 -> "U1:x:" + rnd.nextInt(3);
                                default -> "é" + rnd.nextInt(3);
                            };
                    m.put(
                            key,
                            switch (rnd.nextInt(6)) {
                                case 0 -> "v" + rnd.nextInt(100);
                                case 1 -> UUID.randomUUID();
                                case 2 -> rnd.nextInt();
                                case 3 -> rnd.nextLong();
                                case 4 -> Float.intBitsToFloat(rnd.nextInt(0x7f000000));
                                default -> rnd.nextDouble() * 1e10 - 5e9;
                            });
                }
                TextSegment segment = TextSegment.from("segment " + i, new Metadata(m));
                Embedding e = randomEmbedding(rnd);
                written.put(store.add(e, segment), segment);
                vectors.put(segment.text(), e);
            }
            for (Map.Entry<String, TextSegment> w : written.entrySet()) {
                Embedding e = vectors.get(w.getValue().text());
                EmbeddingMatch<TextSegment> top =
                        store.search(
                                        EmbeddingSearchRequest.builder()
                                                .queryEmbedding(e)
                                                .maxResults(1)
                                                .build())
                                .matches()
                                .get(0);
                assertEquals(w.getKey(), top.embeddingId(), Seeds.replay(seed));
                // TextSegment equality compares the metadata maps: same keys, same values, same
                // classes.
                assertEquals(w.getValue(), top.embedded(), Seeds.replay(seed));
                Map<String, Object> back = top.embedded().metadata().toMap();
                w.getValue()
                        .metadata()
                        .toMap()
                        .forEach(
                                (k, v) ->
                                        assertEquals(
                                                v.getClass(),
                                                back.get(k).getClass(),
                                                k + Seeds.replay(seed)));
                assertEquals(e, top.embedding());
            }

            // The stored form is the store's own types, so the store's own filters work on it.
            VectorRecord raw =
                    store.collection().get(written.keySet().iterator().next()).orElseThrow();
            raw.metadata()
                    .values()
                    .forEach(
                            v ->
                                    assertTrue(
                                            v instanceof String
                                                    || v instanceof Long
                                                    || v instanceof Double,
                                            "stored " + v.getClass()));

            IllegalArgumentException reserved =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.add(
                                            randomEmbedding(rnd),
                                            TextSegment.from(
                                                    "x",
                                                    new Metadata()
                                                            .put(
                                                                    MetadataCodec.TYPES_KEY,
                                                                    "I1:a"))));
            assertTrue(reserved.getMessage().contains("is reserved"), reserved.getMessage());
        }
    }

    @Test
    void anEmbeddingWithoutASegmentComesBackWithoutOneAndScoresAreCosineRelevance()
            throws IOException {
        long seed =
                Seeds.draw(
                        "NepentheEmbeddingStoreTest.anEmbeddingWithoutASegmentComesBackWithoutOneAndScoresAreCosineRelevance");
        Random rnd = new Random(seed);
        try (Nepenthe nepenthe = open()) {
            NepentheEmbeddingStore store = adapter(nepenthe, "s");
            Embedding a = randomEmbedding(rnd);
            Embedding b = randomEmbedding(rnd);
            String idA = store.add(a);
            store.add("b", b);
            List<EmbeddingMatch<TextSegment>> hits =
                    store.search(
                                    EmbeddingSearchRequest.builder()
                                            .queryEmbedding(a)
                                            .maxResults(10)
                                            .build())
                            .matches();
            assertEquals(
                    List.of(idA, "b"), hits.stream().map(EmbeddingMatch::embeddingId).toList());
            assertNull(hits.get(0).embedded());
            assertEquals(1.0, hits.get(0).score(), 1e-6);
            assertEquals(
                    (cosine(a.vector(), b.vector()) + 1) / 2,
                    hits.get(1).score(),
                    1e-6,
                    Seeds.replay(seed));
            // minScore cuts below the second hit's score.
            double cut = hits.get(1).score() + 1e-4;
            assertEquals(
                    List.of(idA),
                    store
                            .search(
                                    EmbeddingSearchRequest.builder()
                                            .queryEmbedding(a)
                                            .maxResults(10)
                                            .minScore(cut)
                                            .build())
                            .matches()
                            .stream()
                            .map(EmbeddingMatch::embeddingId)
                            .toList());
            // The opposite vector is relevance 0, not below.
            float[] opposite = a.vector().clone();
            for (int i = 0; i < opposite.length; i++) {
                opposite[i] = -opposite[i];
            }
            EmbeddingMatch<TextSegment> far =
                    store.search(
                                    EmbeddingSearchRequest.builder()
                                            .queryEmbedding(Embedding.from(opposite))
                                            .maxResults(10)
                                            .build())
                            .matches()
                            .get(1);
            assertEquals(idA, far.embeddingId());
            assertEquals(0.0, far.score(), 1e-6);
            assertTrue(far.score() >= 0.0);
        }
    }

    @Test
    void theSubjectKeyNamesTheSubjectAndForgetSubjectErasesItEverywhereWithAReceipt()
            throws Exception {
        long seed =
                Seeds.draw(
                        "NepentheEmbeddingStoreTest.theSubjectKeyNamesTheSubjectAndForgetSubjectErasesItEverywhereWithAReceipt");
        Random rnd = new Random(seed);
        try (Nepenthe nepenthe = open()) {
            NepentheEmbeddingStore notes = adapter(nepenthe, "notes");
            NepentheEmbeddingStore chats =
                    NepentheEmbeddingStore.builder(
                                    nepenthe,
                                    nepenthe.createCollection(
                                            CollectionSpec.of("chats", DIM, Metric.COSINE)))
                            .subjectKey("user")
                            .build();
            String[] people = {"alice", "bob", "carol"};
            Map<String, String> subjectOf = new HashMap<>();
            List<Embedding> alice = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                String who = people[rnd.nextInt(people.length)];
                Embedding e = randomEmbedding(rnd);
                boolean inNotes = rnd.nextBoolean();
                String id =
                        (inNotes ? notes : chats)
                                .add(
                                        e,
                                        TextSegment.from(
                                                "about " + who + " " + i,
                                                new Metadata()
                                                        .put(inNotes ? "subject" : "user", who)
                                                        .put("i", i)));
                subjectOf.put(id, who);
                if (who.equals("alice")) {
                    alice.add(e);
                }
            }
            // The subject key's value is the record's subject, and stays in the metadata.
            for (NepentheEmbeddingStore s : List.of(notes, chats)) {
                for (String id : s.collection().ids(s.tenant())) {
                    VectorRecord r = s.collection().get(id).orElseThrow();
                    assertEquals(subjectOf.get(id), r.subject());
                    assertEquals(subjectOf.get(id), r.metadata().get(s.subjectKey()));
                }
            }
            assertTrue(
                    alice.size() >= 5,
                    "alice has " + alice.size() + " records" + Seeds.replay(seed));

            ForgetOperation op = notes.forgetSubject("alice", "ticket-1", "gdpr-art17", WAIT);
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertNotNull(op.receipt());
            assertTrue(
                    nepenthe.evidence().checkReceipt(op.receipt()).ok(),
                    "the receipt verifies against the ledger");
            long aliceRecords = subjectOf.values().stream().filter("alice"::equals).count();
            assertEquals(aliceRecords, op.totalForgotten(), "both collections' records of alice");
            // The same key returns the same operation rather than forgetting twice.
            assertEquals(
                    op.id(), notes.forgetSubject("alice", "ticket-1", "gdpr-art17", WAIT).id());

            // Nothing of alice comes back, from either collection, for any of her own vectors;
            // everyone else's records are all still there.
            for (NepentheEmbeddingStore s : List.of(notes, chats)) {
                for (Embedding e : alice) {
                    List<EmbeddingMatch<TextSegment>> hits =
                            s.search(
                                            EmbeddingSearchRequest.builder()
                                                    .queryEmbedding(e)
                                                    .maxResults(100)
                                                    .build())
                                    .matches();
                    for (EmbeddingMatch<TextSegment> h : hits) {
                        assertTrue(
                                !"alice".equals(subjectOf.get(h.embeddingId())),
                                "alice's record came back");
                    }
                }
                Set<String> expected =
                        subjectOf.entrySet().stream()
                                .filter(
                                        en ->
                                                !en.getValue().equals("alice")
                                                        && s.collection()
                                                                .get(en.getKey())
                                                                .isPresent())
                                .map(Map.Entry::getKey)
                                .collect(Collectors.toSet());
                assertEquals(expected, new HashSet<>(s.collection().ids(s.tenant())));
            }
            long others = subjectOf.values().stream().filter(v -> !v.equals("alice")).count();
            assertEquals(others, notes.collection().size() + chats.collection().size());

            // A plain removal by the subject key: bob's records go, without an operation.
            int operationsBefore = nepenthe.operations(o -> true).size();
            notes.removeAll(metadataKey("subject").isEqualTo("bob"));
            assertTrue(
                    notes.collection().ids(notes.tenant()).stream()
                            .noneMatch(id -> subjectOf.get(id).equals("bob")));
            assertEquals(
                    operationsBefore,
                    nepenthe.operations(o -> true).size(),
                    "a plain delete is no forget operation");
        }
    }

    @Test
    void forgetMatchingForgetsWhatTheLangChain4jFilterSelects() throws Exception {
        long seed =
                Seeds.draw(
                        "NepentheEmbeddingStoreTest.forgetMatchingForgetsWhatTheLangChain4jFilterSelects");
        Random rnd = new Random(seed);
        try (Nepenthe nepenthe = open()) {
            NepentheEmbeddingStore store = adapter(nepenthe, "docs");
            Map<String, Metadata> meta = new HashMap<>();
            for (int i = 0; i < 40; i++) {
                Metadata m =
                        new Metadata()
                                .put("source", "doc-" + rnd.nextInt(4))
                                .put("page", rnd.nextInt(10));
                meta.put(store.add(randomEmbedding(rnd), TextSegment.from("page text " + i, m)), m);
            }
            Filter filter =
                    metadataKey("source")
                            .isEqualTo("doc-1")
                            .or(metadataKey("page").isGreaterThan(7));
            Set<String> selected =
                    meta.entrySet().stream()
                            .filter(e -> filter.test(e.getValue()))
                            .map(Map.Entry::getKey)
                            .collect(Collectors.toSet());
            ForgetOperation op = store.forgetMatching(filter, "ticket-2", "retention", WAIT);
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertNotNull(op.receipt());
            assertEquals(selected.size(), op.totalForgotten(), Seeds.replay(seed));
            Set<String> expectedLeft = new HashSet<>(meta.keySet());
            expectedLeft.removeAll(selected);
            assertEquals(
                    expectedLeft,
                    new HashSet<>(store.collection().ids(store.tenant())),
                    Seeds.replay(seed));
        }
    }

    @Test
    void refusesWhatItCannotServeWithMessagesThatSayWhatWasExpected() throws IOException {
        try (Nepenthe nepenthe = open();
                Nepenthe other =
                        Nepenthe.open(
                                tmp.resolve("other"),
                                StoreOptions.defaults().withKeystore(tmp.resolve("other-keys")))) {
            VectorCollection dot =
                    nepenthe.createCollection(CollectionSpec.of("dot", DIM, Metric.DOT));
            IllegalArgumentException metric =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> NepentheEmbeddingStore.builder(nepenthe, dot).build());
            assertTrue(
                    metric.getMessage().contains("expected the COSINE metric")
                            && metric.getMessage().contains("DOT"),
                    metric.getMessage());
            VectorCollection foreign =
                    other.createCollection(CollectionSpec.of("c", DIM, Metric.COSINE));
            IllegalArgumentException notOurs =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> NepentheEmbeddingStore.builder(nepenthe, foreign).build());
            assertTrue(
                    notOurs.getMessage().contains("expected a collection of the store given"),
                    notOurs.getMessage());

            NepentheEmbeddingStore store = adapter(nepenthe, "c");
            Random rnd = new Random(1);
            IllegalArgumentException subject =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.add(
                                            randomEmbedding(rnd),
                                            TextSegment.from(
                                                    "x", new Metadata().put("subject", 1.5))));
            assertTrue(
                    subject.getMessage()
                            .contains(
                                    "expected a String, UUID, Integer or Long, got"
                                            + " java.lang.Double"),
                    subject.getMessage());
            IllegalArgumentException sizes =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.addAll(
                                            List.of("a", "b"),
                                            List.of(randomEmbedding(rnd)),
                                            null));
            assertTrue(sizes.getMessage().contains("2 ids, 1 embeddings"), sizes.getMessage());
            UnsupportedOperationException uuidOrder =
                    assertThrows(
                            UnsupportedOperationException.class,
                            () ->
                                    store.search(
                                            EmbeddingSearchRequest.builder()
                                                    .queryEmbedding(randomEmbedding(rnd))
                                                    .filter(
                                                            new IsGreaterThan(
                                                                    "u", UUID.randomUUID()))
                                                    .build()));
            assertTrue(
                    uuidOrder.getMessage().contains("UUIDs have no order"), uuidOrder.getMessage());
            Filter own = object -> true;
            UnsupportedOperationException custom =
                    assertThrows(UnsupportedOperationException.class, () -> store.removeAll(own));
            assertTrue(
                    custom.getMessage().contains("has no Nepenthe equivalent"),
                    custom.getMessage());
            IllegalArgumentException tenant =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.forget(
                                            dev.nepenthe.core.forget.ForgetRequest.of(
                                                            dev.nepenthe.core.forget.ForgetScope
                                                                    .subject("x"),
                                                            "k",
                                                            "r")
                                                    .inTenant("elsewhere"),
                                            WAIT));
            assertTrue(
                    tenant.getMessage().contains("got one in tenant 'elsewhere'"),
                    tenant.getMessage());
            // A wrong dimension is the store's own clear error.
            IllegalArgumentException dim =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> store.add(Embedding.from(new float[] {1, 2, 3})));
            assertTrue(
                    dim.getMessage().contains("expected a vector of dimension " + DIM),
                    dim.getMessage());
        }
    }

    /**
     * One langchain4j-core on the class path: the embeddings module brings one, the adapter
     * another.
     */
    @Test
    void oneLangChain4jCoreIsOnTheClassPath() {
        List<String> cores = new ArrayList<>();
        for (String entry :
                System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (name.matches("langchain4j-core-[0-9][^-]*\\.jar")) {
                cores.add(name);
            }
        }
        assertEquals(1, cores.size(), "langchain4j-core jars on the class path: " + cores);
    }
}
