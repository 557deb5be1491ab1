package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ordering and substring filters ({@link Filter#gt}, {@link Filter#gte}, {@link Filter#lt},
 * {@link Filter#lte}, {@link Filter#contains}) and exact number equality, against an oracle that
 * compares with BigDecimal and {@link String#compareTo} directly: first on random metadata maps,
 * then through a store's search, where a filter must narrow the candidates, not the hits.
 */
class FilterTest {

    @TempDir Path tmp;

    private static final String[] KEYS = {"a", "b", "c"};
    private static final String ALPHABET = "abcAB |";

    /**
     * A value of any kind the store keeps, with numbers near the places where doubles lose longs.
     */
    private static Object randomValue(Random rnd) {
        return switch (rnd.nextInt(8)) {
            case 0 -> (long) rnd.nextInt(7) - 3;
            case 1 -> (1L << 53) + rnd.nextInt(5) - 2;
            case 2 ->
                    rnd.nextBoolean()
                            ? Long.MAX_VALUE - rnd.nextInt(3)
                            : Long.MIN_VALUE + rnd.nextInt(3);
            case 3 -> (rnd.nextInt(13) - 6) / 2.0;
            case 4 -> rnd.nextBoolean() ? -0.0 : 9.007199254740992E15;
            case 5 -> rnd.nextBoolean() ? 9.223372036854775807E18 : -9.223372036854775808E18;
            case 6 -> rnd.nextBoolean();
            default -> randomString(rnd);
        };
    }

    private static Object randomBound(Random rnd) {
        Object v;
        do {
            v = randomValue(rnd);
        } while (v instanceof Boolean);
        return v;
    }

    private static String randomString(Random rnd) {
        StringBuilder sb = new StringBuilder();
        for (int i = rnd.nextInt(4); i > 0; i--) {
            sb.append(ALPHABET.charAt(rnd.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }

    private static Map<String, Object> randomMetadata(Random rnd) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (String k : KEYS) {
            if (rnd.nextInt(4) != 0) {
                m.put(k, randomValue(rnd));
            }
        }
        return m;
    }

    private static BigDecimal exact(Object n) {
        return n instanceof Long l ? new BigDecimal(l) : new BigDecimal((Double) n);
    }

    /** The oracle's order of a record's value against a bound, or null when they do not compare. */
    private static Integer oracleOrder(Object value, Object bound) {
        if (value instanceof String s && bound instanceof String b) {
            return Integer.signum(s.compareTo(b));
        }
        if (value instanceof Number && bound instanceof Number) {
            return exact(value).compareTo(exact(bound));
        }
        return null;
    }

    private record Case(String name, Filter filter, Predicate<Map<String, Object>> oracle) {}

    private static Case randomCase(Random rnd) {
        String key = KEYS[rnd.nextInt(KEYS.length)];
        Object bound = randomBound(rnd);
        return switch (rnd.nextInt(6)) {
            case 0 -> new Case("gt", Filter.gt(key, bound), m -> order(m, key, bound, o -> o > 0));
            case 1 ->
                    new Case("gte", Filter.gte(key, bound), m -> order(m, key, bound, o -> o >= 0));
            case 2 -> new Case("lt", Filter.lt(key, bound), m -> order(m, key, bound, o -> o < 0));
            case 3 ->
                    new Case("lte", Filter.lte(key, bound), m -> order(m, key, bound, o -> o <= 0));
            case 4 -> new Case("eq", Filter.eq(key, bound), m -> order(m, key, bound, o -> o == 0));
            default -> {
                String part = randomString(rnd);
                yield new Case(
                        "contains",
                        Filter.contains(key, part),
                        m -> m.get(key) instanceof String s && s.contains(part));
            }
        };
    }

    private static boolean order(
            Map<String, Object> m, String key, Object bound, Predicate<Integer> accepts) {
        Integer o = oracleOrder(m.get(key), bound);
        return o != null && accepts.test(o);
    }

    @Test
    void orderingAndSubstringFiltersAgreeWithTheOracleOnRandomMetadata() {
        long seed =
                Seeds.draw(
                        "FilterTest.orderingAndSubstringFiltersAgreeWithTheOracleOnRandomMetadata");
        Random rnd = new Random(seed);
        int matched = 0;
        for (int trial = 0; trial < 20_000; trial++) {
            Map<String, Object> m = randomMetadata(rnd);
            Case c = randomCase(rnd);
            boolean expected = c.oracle().test(m);
            assertEquals(
                    expected,
                    c.filter().test(m),
                    c.name() + " trial " + trial + Seeds.replay(seed));
            // Not flips exactly, missing keys included.
            assertEquals(
                    !expected,
                    Filter.not(c.filter()).test(m),
                    "not " + c.name() + " trial " + trial + Seeds.replay(seed));
            matched += expected ? 1 : 0;
        }
        // The draw must exercise both answers, or the comparison above proves little.
        assertTrue(
                matched > 2_000 && matched < 18_000,
                "matched " + matched + " of 20000" + Seeds.replay(seed));
    }

    @Test
    void numbersCompareByExactValueWhereDoublesWouldRoundLongsTogether() {
        Map<String, Object> m =
                Map.of("big", Long.MAX_VALUE - 1, "edge", (1L << 53) + 1, "zero", -0.0);
        // As doubles, all three of these equal 2^63; as values they differ.
        assertFalse(Filter.eq("big", Long.MAX_VALUE).test(m));
        assertFalse(Filter.eq("big", 9.223372036854775807E18).test(m));
        assertTrue(Filter.lt("big", Long.MAX_VALUE).test(m));
        assertTrue(
                Filter.lt("big", 9.223372036854775807E18).test(m),
                "2^63 as a double is above every long");
        // 2^53 + 1 has no double: the nearest, 2^53, is below it.
        assertTrue(Filter.gt("edge", 9.007199254740992E15).test(m));
        assertFalse(Filter.eq("edge", 9.007199254740992E15).test(m));
        assertTrue(Filter.range("edge", 9.007199254740992E15, 9.007199254740994E15).test(m));
        assertFalse(Filter.range("edge", 0, 9.007199254740992E15).test(m));
        // -0.0 equals 0 by value.
        assertTrue(Filter.eq("zero", 0).test(m));
        assertTrue(Filter.gte("zero", 0L).test(m));
        assertFalse(Filter.lt("zero", 0.0).test(m));
        assertTrue(Filter.in("big", Long.MAX_VALUE - 1, 3).test(m));
        assertFalse(Filter.in("big", Long.MAX_VALUE, Long.MAX_VALUE - 2).test(m));
    }

    @Test
    void orderingFiltersCompareOnlyLikeKindsAndRefuseBoundsWithoutOrder() {
        Map<String, Object> m = Map.of("s", "b", "n", 2L, "x", 1.5, "ok", true);
        assertTrue(Filter.gt("s", "a").test(m));
        assertTrue(
                Filter.gt("s", "B").test(m),
                "strings order as String.compareTo does: lower case after upper");
        assertFalse(Filter.gt("s", 1).test(m), "a string never orders against a number");
        assertFalse(Filter.lt("n", "z").test(m), "a number never orders against a string");
        assertFalse(Filter.gte("ok", 0).test(m), "a boolean has no order");
        assertTrue(Filter.gte("n", 2).test(m), "an Integer bound is widened to Long");
        assertTrue(Filter.lt("x", 1.6f).test(m), "a Float bound is widened to Double");
        assertFalse(Filter.gt("missing", "a").test(m));
        assertTrue(Filter.not(Filter.gt("missing", "a")).test(m), "not lets a missing key through");

        IllegalArgumentException b =
                assertThrows(IllegalArgumentException.class, () -> Filter.gt("ok", true));
        assertTrue(
                b.getMessage().contains("expected a String or number to order by"), b.getMessage());
        IllegalArgumentException nan =
                assertThrows(IllegalArgumentException.class, () -> Filter.lte("x", Double.NaN));
        assertTrue(nan.getMessage().contains("got NaN"), nan.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Filter.lt("x", null));
        assertThrows(IllegalArgumentException.class, () -> Filter.lt("x", new Object()));
        assertThrows(NullPointerException.class, () -> Filter.contains("s", null));
        assertEquals(
                2L,
                ((Filter.Compare) Filter.gt("n", 2)).value(),
                "the record keeps the widened value");
    }

    @Test
    void containsMatchesSubstringsOfStringValuesOnly() {
        Map<String, Object> m = Map.of("s", "|contains|", "n", 123L);
        assertTrue(Filter.contains("s", "contains").test(m));
        assertTrue(Filter.contains("s", "").test(m), "the empty substring is in every string");
        assertFalse(Filter.contains("s", "Contains").test(m), "case-sensitive");
        assertFalse(
                Filter.contains("n", "2").test(m), "a number is not searched as its decimal form");
        assertFalse(Filter.contains("missing", "").test(m));
    }

    /**
     * Through a store: a search with one of the new filters and k = all records returns exactly the
     * records the oracle accepts, and with a small k the k nearest of them (the filter narrows the
     * candidates the index sees, so k visible records come back).
     */
    @Test
    void searchesNarrowByTheNewFiltersExactlyAsTheOracleDoes() throws IOException {
        long seed = Seeds.draw("FilterTest.searchesNarrowByTheNewFiltersExactlyAsTheOracleDoes");
        Random rnd = new Random(seed);
        int n = 300;
        List<Map<String, Object>> metas = new ArrayList<>();
        List<float[]> vectors = new ArrayList<>();
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.createCollection(CollectionSpec.of("f", 4, Metric.L2));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Map<String, Object> m = randomMetadata(rnd);
                float[] v = {rnd.nextFloat(), rnd.nextFloat(), rnd.nextFloat(), rnd.nextFloat()};
                metas.add(m);
                vectors.add(v);
                batch.add(VectorRecord.builder("r" + i).vector(v).metadata(m).build());
            }
            c.upsertAll(batch);
            float[] q = {0.5f, 0.5f, 0.5f, 0.5f};
            int nonEmpty = 0;
            for (int trial = 0; trial < 40; trial++) {
                Case cs = randomCase(rnd);
                Set<String> expected = new TreeSet<>();
                for (int i = 0; i < n; i++) {
                    if (cs.oracle().test(metas.get(i))) {
                        expected.add("r" + i);
                    }
                }
                Set<String> got = new TreeSet<>();
                c.search(SearchRequest.of(q, n).filter(cs.filter())).forEach(h -> got.add(h.id()));
                assertEquals(expected, got, cs.name() + " trial " + trial + Seeds.replay(seed));

                int k = 5;
                List<String> nearest =
                        expected.stream()
                                .sorted(
                                        java.util.Comparator.comparingDouble(
                                                id ->
                                                        dist(
                                                                vectors.get(
                                                                        Integer.parseInt(
                                                                                id.substring(1))),
                                                                q)))
                                .limit(k)
                                .toList();
                List<String> top =
                        c.search(SearchRequest.of(q, k).filter(cs.filter())).stream()
                                .map(SearchHit::id)
                                .toList();
                assertEquals(
                        nearest,
                        top,
                        cs.name() + " top " + k + ", trial " + trial + Seeds.replay(seed));
                nonEmpty += expected.isEmpty() ? 0 : 1;
            }
            assertTrue(
                    nonEmpty >= 10,
                    "only " + nonEmpty + " of 40 filters matched anything" + Seeds.replay(seed));
        }
    }

    /** A random filter tree: every kind of leaf, under not, and, or, up to {@code depth} levels. */
    private static Filter randomTree(Random rnd, int depth) {
        int pick = rnd.nextInt(depth > 0 ? 10 : 7);
        String key = KEYS[rnd.nextInt(KEYS.length)];
        return switch (pick) {
            case 0 -> Filter.eq(key, randomValue(rnd));
            case 1 -> Filter.in(key, randomValue(rnd), randomValue(rnd), randomValue(rnd));
            case 2 -> Filter.exists(key);
            case 3 -> {
                double a = (rnd.nextInt(13) - 6) / 2.0;
                double b = (rnd.nextInt(13) - 6) / 2.0;
                yield Filter.range(key, Math.min(a, b), Math.max(a, b));
            }
            case 4, 5 -> randomCase(rnd).filter();
            case 6 ->
                    new Filter.Eq(
                            key, rnd.nextBoolean() ? (Object) (rnd.nextInt(7) - 3) : (Object) 1.5f);
            case 7 -> Filter.not(randomTree(rnd, depth - 1));
            case 8 -> randomTree(rnd, depth - 1).and(randomTree(rnd, depth - 1));
            default ->
                    new Filter.Or(
                            List.of(
                                    randomTree(rnd, depth - 1),
                                    randomTree(rnd, depth - 1),
                                    randomTree(rnd, depth - 1)));
        };
    }

    /**
     * The store keeps no metadata with its records: a filter is answered from keyed hashes of the
     * values, decrypting a record's copy only for ranges, comparisons and substrings. Random filter
     * trees (equality, in, exists, ranges, comparisons, contains, under not, and and or) through a
     * store's search must return exactly the records {@link Filter#test} accepts on each record's
     * metadata (itself checked against the oracle above): after the first writes, after
     * replacements and deletes, after a reopen, and a forget by metadata removes exactly those
     * records.
     */
    @Test
    void filterTreesThroughTheMetadataIndexMatchTestAcrossWritesAReopenAndAForget()
            throws Exception {
        long seed =
                Seeds.draw(
                        "FilterTest.filterTreesThroughTheMetadataIndexMatchTestAcrossWritesAReopenAndAForget");
        Random rnd = new Random(seed);
        int n = 300;
        Map<String, Map<String, Object>> live = new java.util.TreeMap<>();
        StoreOptions options = StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
        // Gaussian vectors in 32 dimensions: no survivor is near a forgotten one, so the forget's
        // probe finds nothing and the forget seals.
        float[] q = gaussian(rnd);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options)) {
            VectorCollection c = store.createCollection(CollectionSpec.of("f", 32, Metric.L2));
            c.upsertAll(randomRecords(rnd, 0, n, live));
            assertTreesMatch(c, rnd, live, q, "after the first writes", seed);
            // Replace a fifth with new metadata (some with none), delete a tenth.
            List<VectorRecord> replacements = new ArrayList<>();
            for (int i = 0; i < n; i += 5) {
                replacements.addAll(randomRecords(rnd, i, i + 1, live));
            }
            c.upsertAll(replacements);
            for (int i = 3; i < n; i += 10) {
                c.delete("r" + i);
                live.remove("r" + i);
            }
            assertTreesMatch(c, rnd, live, q, "after replacements and deletes", seed);
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options)) {
            VectorCollection c = store.collection("f");
            assertTreesMatch(c, rnd, live, q, "after a reopen", seed);
            Filter scope;
            Set<String> doomed;
            do {
                scope = randomTree(rnd, 2);
                Filter f = scope;
                doomed =
                        new TreeSet<>(
                                live.keySet().stream().filter(id -> f.test(live.get(id))).toList());
            } while (doomed.isEmpty() || doomed.size() > n / 2);
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.metadata(scope),
                                                    "filter-forget",
                                                    "gdpr-art17"))
                                    .id(),
                            java.time.Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, op.state(), op.note() + Seeds.replay(seed));
            Set<String> left = new TreeSet<>();
            c.search(SearchRequest.of(q, n)).forEach(h -> left.add(h.id()));
            Set<String> expected = new TreeSet<>(live.keySet());
            expected.removeAll(doomed);
            assertEquals(expected, left, "a forget of " + scope + Seeds.replay(seed));
            doomed.forEach(live::remove);
            assertTreesMatch(c, rnd, live, q, "after the forget", seed);
        }
    }

    private static List<VectorRecord> randomRecords(
            Random rnd, int from, int to, Map<String, Map<String, Object>> live) {
        List<VectorRecord> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            Map<String, Object> m = randomMetadata(rnd);
            VectorRecord.Builder b =
                    VectorRecord.builder("r" + i).vector(gaussian(rnd)).metadata(m);
            if (rnd.nextInt(3) == 0) {
                b.text("note " + i);
            }
            out.add(b.build());
            live.put("r" + i, m);
        }
        return out;
    }

    private static float[] gaussian(Random rnd) {
        float[] v = new float[32];
        for (int i = 0; i < v.length; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }

    private static void assertTreesMatch(
            VectorCollection c,
            Random rnd,
            Map<String, Map<String, Object>> live,
            float[] q,
            String when,
            long seed) {
        int nonEmpty = 0;
        int notAll = 0;
        for (int trial = 0; trial < 60; trial++) {
            Filter f = randomTree(rnd, 3);
            Set<String> expected = new TreeSet<>();
            live.forEach(
                    (id, m) -> {
                        if (f.test(m)) {
                            expected.add(id);
                        }
                    });
            Set<String> got = new TreeSet<>();
            List<SearchHit> hits = c.search(SearchRequest.of(q, live.size() + 10).filter(f));
            for (SearchHit h : hits) {
                got.add(h.id());
                // What a hit carries is the record's own metadata, read from its copy.
                assertEquals(
                        live.get(h.id()),
                        h.record().metadata(),
                        when + ": metadata of " + h.id() + Seeds.replay(seed));
            }
            assertEquals(expected, got, when + ", trial " + trial + ": " + f + Seeds.replay(seed));
            nonEmpty += expected.isEmpty() ? 0 : 1;
            notAll += expected.size() < live.size() ? 1 : 0;
        }
        assertTrue(
                nonEmpty >= 15 && notAll >= 15,
                when
                        + ": "
                        + nonEmpty
                        + " filters matched something, "
                        + notAll
                        + " not everything, of 60"
                        + Seeds.replay(seed));
    }

    /**
     * Searches with filters racing a writer that replaces and deletes records (changing their
     * metadata, so ordinals are freed and taken again): a search reads the metadata index without a
     * lock, and no hit it returns may fail its filter (each hit's metadata is read from its own
     * copy), for equality, its negation (where a key published late would let a record through) and
     * a range.
     */
    @Test
    void filteredSearchesRacingReplacementsNeverReturnAHitTheFilterRejects() throws Exception {
        long seed =
                Seeds.draw(
                        "FilterTest.filteredSearchesRacingReplacementsNeverReturnAHitTheFilterRejects");
        Random rnd = new Random(seed);
        int n = 64;
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.createCollection(CollectionSpec.of("race", 8, Metric.L2));
            List<VectorRecord> first = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                first.add(raceRecord(i, rnd.nextBoolean() ? "en" : "de", rnd.nextInt(10), rnd));
            }
            c.upsertAll(first);
            List<Filter> filters =
                    List.of(
                            Filter.eq("lang", "en"),
                            Filter.not(Filter.eq("lang", "en")),
                            Filter.range("year", 3, 6),
                            Filter.not(Filter.eq("lang", "de")).and(Filter.gte("year", 5)));
            java.util.concurrent.atomic.AtomicBoolean done =
                    new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                    new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong checked =
                    new java.util.concurrent.atomic.AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                long readerSeed = rnd.nextLong();
                readers.add(
                        Thread.ofPlatform()
                                .start(
                                        () -> {
                                            Random r = new Random(readerSeed);
                                            try {
                                                while (!done.get()) {
                                                    Filter f =
                                                            filters.get(r.nextInt(filters.size()));
                                                    float[] q = new float[8];
                                                    for (int j = 0; j < q.length; j++) {
                                                        q[j] = (float) r.nextGaussian();
                                                    }
                                                    for (SearchHit h :
                                                            c.search(
                                                                    SearchRequest.of(q, 10)
                                                                            .filter(f))) {
                                                        if (!f.test(h.record().metadata())) {
                                                            throw new AssertionError(
                                                                    "hit "
                                                                            + h.id()
                                                                            + " with "
                                                                            + h.record().metadata()
                                                                            + " fails "
                                                                            + f);
                                                        }
                                                        checked.incrementAndGet();
                                                    }
                                                }
                                            } catch (Throwable e) {
                                                failure.compareAndSet(null, e);
                                            }
                                        }));
            }
            try {
                for (int w = 0; w < 3000 && failure.get() == null; w++) {
                    int i = rnd.nextInt(n);
                    if (rnd.nextInt(5) == 0) {
                        c.delete("r" + i);
                    }
                    c.upsertAll(
                            List.of(
                                    raceRecord(
                                            i,
                                            rnd.nextBoolean() ? "en" : "de",
                                            rnd.nextInt(10),
                                            rnd)));
                }
            } finally {
                done.set(true);
                for (Thread t : readers) {
                    t.join();
                }
            }
            if (failure.get() != null) {
                throw new AssertionError(
                        failure.get().getMessage() + Seeds.replay(seed), failure.get());
            }
            assertTrue(
                    checked.get() > 1000,
                    "only " + checked.get() + " hits checked" + Seeds.replay(seed));
        }
    }

    private static VectorRecord raceRecord(int i, String lang, long year, Random rnd) {
        float[] v = new float[8];
        for (int j = 0; j < v.length; j++) {
            v[j] = (float) rnd.nextGaussian();
        }
        return VectorRecord.builder("r" + i)
                .vector(v)
                .metadata("lang", lang)
                .metadata("year", year)
                .build();
    }

    private static double dist(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            double d = a[i] - b[i];
            s += d * d;
        }
        return s;
    }
}
