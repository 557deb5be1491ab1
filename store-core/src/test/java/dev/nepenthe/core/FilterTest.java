package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @TempDir
    Path tmp;

    private static final String[] KEYS = {"a", "b", "c"};
    private static final String ALPHABET = "abcAB |";

    /** A value of any kind the store keeps, with numbers near the places where doubles lose longs. */
    private static Object randomValue(Random rnd) {
        return switch (rnd.nextInt(8)) {
            case 0 -> (long) rnd.nextInt(7) - 3;
            case 1 -> (1L << 53) + rnd.nextInt(5) - 2;
            case 2 -> rnd.nextBoolean() ? Long.MAX_VALUE - rnd.nextInt(3) : Long.MIN_VALUE + rnd.nextInt(3);
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
            case 1 -> new Case("gte", Filter.gte(key, bound), m -> order(m, key, bound, o -> o >= 0));
            case 2 -> new Case("lt", Filter.lt(key, bound), m -> order(m, key, bound, o -> o < 0));
            case 3 -> new Case("lte", Filter.lte(key, bound), m -> order(m, key, bound, o -> o <= 0));
            case 4 -> new Case("eq", Filter.eq(key, bound), m -> order(m, key, bound, o -> o == 0));
            default -> {
                String part = randomString(rnd);
                yield new Case("contains", Filter.contains(key, part),
                        m -> m.get(key) instanceof String s && s.contains(part));
            }
        };
    }

    private static boolean order(Map<String, Object> m, String key, Object bound, Predicate<Integer> accepts) {
        Integer o = oracleOrder(m.get(key), bound);
        return o != null && accepts.test(o);
    }

    @Test
    void orderingAndSubstringFiltersAgreeWithTheOracleOnRandomMetadata() {
        long seed = Seeds.draw("FilterTest.orderingAndSubstringFiltersAgreeWithTheOracleOnRandomMetadata");
        Random rnd = new Random(seed);
        int matched = 0;
        for (int trial = 0; trial < 20_000; trial++) {
            Map<String, Object> m = randomMetadata(rnd);
            Case c = randomCase(rnd);
            boolean expected = c.oracle().test(m);
            assertEquals(expected, c.filter().test(m), c.name() + " trial " + trial + Seeds.replay(seed));
            // Not flips exactly, missing keys included.
            assertEquals(!expected, Filter.not(c.filter()).test(m), "not " + c.name() + " trial " + trial + Seeds.replay(seed));
            matched += expected ? 1 : 0;
        }
        // The draw must exercise both answers, or the comparison above proves little.
        assertTrue(matched > 2_000 && matched < 18_000, "matched " + matched + " of 20000" + Seeds.replay(seed));
    }

    @Test
    void numbersCompareByExactValueWhereDoublesWouldRoundLongsTogether() {
        Map<String, Object> m = Map.of("big", Long.MAX_VALUE - 1, "edge", (1L << 53) + 1, "zero", -0.0);
        // As doubles, all three of these equal 2^63; as values they differ.
        assertFalse(Filter.eq("big", Long.MAX_VALUE).test(m));
        assertFalse(Filter.eq("big", 9.223372036854775807E18).test(m));
        assertTrue(Filter.lt("big", Long.MAX_VALUE).test(m));
        assertTrue(Filter.lt("big", 9.223372036854775807E18).test(m), "2^63 as a double is above every long");
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
        assertTrue(Filter.gt("s", "B").test(m), "strings order as String.compareTo does: lower case after upper");
        assertFalse(Filter.gt("s", 1).test(m), "a string never orders against a number");
        assertFalse(Filter.lt("n", "z").test(m), "a number never orders against a string");
        assertFalse(Filter.gte("ok", 0).test(m), "a boolean has no order");
        assertTrue(Filter.gte("n", 2).test(m), "an Integer bound is widened to Long");
        assertTrue(Filter.lt("x", 1.6f).test(m), "a Float bound is widened to Double");
        assertFalse(Filter.gt("missing", "a").test(m));
        assertTrue(Filter.not(Filter.gt("missing", "a")).test(m), "not lets a missing key through");

        IllegalArgumentException b = assertThrows(IllegalArgumentException.class, () -> Filter.gt("ok", true));
        assertTrue(b.getMessage().contains("expected a String or number to order by"), b.getMessage());
        IllegalArgumentException nan = assertThrows(IllegalArgumentException.class, () -> Filter.lte("x", Double.NaN));
        assertTrue(nan.getMessage().contains("got NaN"), nan.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Filter.lt("x", null));
        assertThrows(IllegalArgumentException.class, () -> Filter.lt("x", new Object()));
        assertThrows(NullPointerException.class, () -> Filter.contains("s", null));
        assertEquals(2L, ((Filter.Compare) Filter.gt("n", 2)).value(), "the record keeps the widened value");
    }

    @Test
    void containsMatchesSubstringsOfStringValuesOnly() {
        Map<String, Object> m = Map.of("s", "|contains|", "n", 123L);
        assertTrue(Filter.contains("s", "contains").test(m));
        assertTrue(Filter.contains("s", "").test(m), "the empty substring is in every string");
        assertFalse(Filter.contains("s", "Contains").test(m), "case-sensitive");
        assertFalse(Filter.contains("n", "2").test(m), "a number is not searched as its decimal form");
        assertFalse(Filter.contains("missing", "").test(m));
    }

    /**
     * Through a store: a search with one of the new filters and k = all records returns exactly
     * the records the oracle accepts, and with a small k the k nearest of them (the filter
     * narrows the candidates the index sees, so k visible records come back).
     */
    @Test
    void searchesNarrowByTheNewFiltersExactlyAsTheOracleDoes() throws IOException {
        long seed = Seeds.draw("FilterTest.searchesNarrowByTheNewFiltersExactlyAsTheOracleDoes");
        Random rnd = new Random(seed);
        int n = 300;
        List<Map<String, Object>> metas = new ArrayList<>();
        List<float[]> vectors = new ArrayList<>();
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
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
                List<String> nearest = expected.stream()
                        .sorted(java.util.Comparator.comparingDouble(id -> dist(vectors.get(Integer.parseInt(id.substring(1))), q)))
                        .limit(k).toList();
                List<String> top = c.search(SearchRequest.of(q, k).filter(cs.filter())).stream().map(SearchHit::id).toList();
                assertEquals(nearest, top, cs.name() + " top " + k + ", trial " + trial + Seeds.replay(seed));
                nonEmpty += expected.isEmpty() ? 0 : 1;
            }
            assertTrue(nonEmpty >= 10, "only " + nonEmpty + " of 40 filters matched anything" + Seeds.replay(seed));
        }
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
