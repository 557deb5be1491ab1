package dev.nepenthe.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.SurfaceOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The cache on its own, with results made by hand: the LRU and byte bounds and the counters
 * (oracle: which keys were put and touched, in what order, and {@link QueryCache#cost}), the key
 * (every request field and the vector bit for bit), the tickets that refuse a result computed
 * before an invalidation or a forget, and the forget rules by tenant. The store's own forget is in
 * {@link QueryCacheForgetTest}.
 */
class QueryCacheTest {

    private static final int DIM = 8;
    private static final String C = "notes";

    private static float[] axis(int i) {
        float[] v = new float[DIM];
        v[i % DIM] = 1f;
        v[(i + 1) % DIM] = 0.01f * (i + 1); // distinct for distinct i
        return v;
    }

    private static SearchRequest query(int i) {
        return SearchRequest.of(axis(i), 3);
    }

    private static List<SearchHit> resultIn(String tenant, String... ids) {
        List<SearchHit> hits = new ArrayList<>();
        float score = 1f;
        for (String id : ids) {
            hits.add(
                    new SearchHit(
                            VectorRecord.builder(id)
                                    .tenant(tenant)
                                    .vector(axis(id.hashCode() & 7))
                                    .text("t-" + id)
                                    .metadata("k", id)
                                    .build(),
                            score));
            score -= 0.1f;
        }
        return List.copyOf(hits);
    }

    private static List<SearchHit> result(String... ids) {
        return resultIn(VectorRecord.DEFAULT_TENANT, ids);
    }

    /** Looks up and, on a miss, puts {@code hits}; returns whether the lookup hit. */
    private static boolean cache(QueryCache cache, SearchRequest q, List<SearchHit> hits) {
        QueryCache.Lookup l = cache.lookup(C, q);
        if (l.isHit()) {
            return true;
        }
        assertTrue(cache.put(l, hits), "put refused");
        return false;
    }

    private static boolean isHit(QueryCache cache, SearchRequest q) {
        return cache.lookup(C, q).isHit();
    }

    @Test
    void theLeastRecentlyUsedEntryGoesWhenTheEntryBoundIsReached() {
        QueryCache cache = new QueryCache(3, Long.MAX_VALUE);
        List<SearchHit> r = result("x", "y");
        for (int i = 1; i <= 3; i++) {
            assertFalse(cache(cache, query(i), r));
        }
        assertTrue(isHit(cache, query(1))); // 1 is now the most recently used: 2 is the eldest
        assertFalse(cache(cache, query(4), r));
        assertFalse(isHit(cache, query(2)), "the least recently used entry was evicted");
        assertTrue(isHit(cache, query(1)));
        assertTrue(isHit(cache, query(3)));
        assertTrue(isHit(cache, query(4)));
        QueryCache.Stats s = cache.stats();
        assertEquals(3, s.entries());
        assertEquals(1, s.evictedByCapacity());
        assertEquals(0, s.evictedByForget());
        assertEquals(4, s.puts());
        assertEquals(4, s.hits()); // 1, then 1, 3, 4
        assertEquals(5, s.misses()); // 1..4 first time, then 2
        assertEquals(4.0 / 9, s.hitRate(), 1e-12);
        long one = CacheEntry.cost(new CacheKey(C, query(1)), r);
        assertEquals(3 * one, s.bytes(), "bytes are the sum of the entries' estimates");
    }

    @Test
    void theByteBoundEvictsAndAResultTooLargeAloneIsRefused() {
        List<SearchHit> r = result("x", "y", "z");
        long one = CacheEntry.cost(new CacheKey(C, query(1)), r);
        QueryCache cache = new QueryCache(100, 2 * one + one / 2);
        assertFalse(cache(cache, query(1), r));
        assertFalse(cache(cache, query(2), r));
        assertEquals(2 * one, cache.stats().bytes());
        assertFalse(cache(cache, query(3), r));
        assertFalse(isHit(cache, query(1)), "over the byte bound, the eldest goes");
        assertEquals(2, cache.stats().entries());
        assertEquals(2 * one, cache.stats().bytes());
        assertEquals(1, cache.stats().evictedByCapacity());

        QueryCache tiny = new QueryCache(100, one - 1);
        QueryCache.Lookup l = tiny.lookup(C, query(1));
        assertFalse(tiny.put(l, r), "a result larger than the whole cache is not stored");
        assertEquals(1, tiny.stats().refusedPuts());
        assertEquals(0, tiny.stats().entries());
        assertEquals(0, tiny.stats().bytes());
    }

    @Test
    void theCostCountsVectorsTextAndMetadata() {
        CacheKey key = new CacheKey(C, query(1));
        long empty = CacheEntry.cost(key, List.of());
        assertEquals(QueryCache.ENTRY_BYTES + 4L * DIM, empty);
        SearchHit h =
                new SearchHit(
                        VectorRecord.builder("ab")
                                .vector(axis(0))
                                .text("é€")
                                .metadata("m", 1)
                                .build(),
                        1f);
        // hit + vector + 2 id chars + UTF-8 of "é€" (2 + 3) + one metadata entry
        assertEquals(
                empty + QueryCache.HIT_BYTES + 4L * DIM + 4 + 5 + QueryCache.METADATA_ENTRY_BYTES,
                CacheEntry.cost(key, List.of(h)));
    }

    /** A query carrying an in() of {@code values} strings of 48 characters, and a knob. */
    private static SearchRequest withBigFilter(int i, int values) {
        Object[] ids = new Object[values];
        for (int n = 0; n < values; n++) {
            ids[n] = String.format("doc-%02d-%041d", i, n);
        }
        return query(i).filter(Filter.in("doc", ids)).param("efSearch", 64);
    }

    @Test
    void aKeysFilterAndKnobsCountTowardTheByteBound() {
        // The case: four searches carrying 5 MiB of in() filters grew the count by 896
        // bytes.
        int values =
                27_000; // 27,000 x 48 characters: about 1.3 MB of values a search, 5 MB for four
        long wire =
                48L * values; // the values' own bytes, what a client sent: the least they can cost
        List<SearchHit> r = result("x");
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        long before = 0;
        for (int i = 0; i < 4; i++) {
            assertFalse(cache(cache, withBigFilter(i, values), r));
            long now = cache.stats().bytes();
            assertTrue(
                    now - before >= wire,
                    "search "
                            + i
                            + " grew the count by "
                            + (now - before)
                            + " bytes, expected at least its filter's "
                            + wire);
            assertEquals(
                    CacheEntry.cost(new CacheKey(C, withBigFilter(i, values)), r), now - before);
            before = now;
        }
        long plain = CacheEntry.cost(new CacheKey(C, query(0)), r);
        long one = CacheEntry.cost(new CacheKey(C, withBigFilter(0, values)), r);
        assertTrue(one >= plain + wire + KeyBytes.KNOB_BYTES, one + " vs " + plain);

        // The bound evicts by that count: room for two such entries, four put, two left.
        QueryCache bounded = new QueryCache(100, 2 * one + one / 2);
        for (int i = 0; i < 4; i++) {
            assertFalse(cache(bounded, withBigFilter(i, values), r));
        }
        QueryCache.Stats s = bounded.stats();
        assertEquals(2, s.entries());
        assertEquals(2, s.evictedByCapacity());
        assertTrue(s.bytes() <= 2 * one + one / 2, s.bytes() + " bytes held over the bound");
        assertFalse(isHit(bounded, withBigFilter(0, values)), "the eldest went");
        assertTrue(isHit(bounded, withBigFilter(3, values)));

        // A filter larger than the whole cache is not stored, whatever its small result.
        QueryCache small = new QueryCache(100, wire);
        assertFalse(small.put(small.lookup(C, withBigFilter(0, values)), r));
        assertEquals(0, small.stats().bytes());
    }

    @Test
    void everyRequestFieldAndEveryBitOfTheQueryIsPartOfTheKey() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        SearchRequest base = query(1);
        cache(cache, base, result("x"));
        assertTrue(
                isHit(
                        cache,
                        new SearchRequest(
                                axis(1),
                                3,
                                VectorRecord.DEFAULT_TENANT,
                                null,
                                null,
                                base.params())),
                "an equal request built anew hits");
        assertFalse(cache.lookup("other", base).isHit(), "collection");
        assertFalse(isHit(cache, base.tenant("t2")), "tenant");
        assertFalse(isHit(cache, base.subject("bob")), "subject");
        assertFalse(isHit(cache, base.filter(Filter.eq("lang", "en"))), "filter");
        assertFalse(
                isHit(
                        cache,
                        new SearchRequest(
                                axis(1),
                                4,
                                VectorRecord.DEFAULT_TENANT,
                                null,
                                null,
                                base.params())),
                "k");
        assertFalse(isHit(cache, base.param("efSearch", 64)), "params");
        float[] v = axis(1);
        v[3] = Math.nextUp(v[3]);
        assertFalse(isHit(cache, SearchRequest.of(v, 3)), "one ulp");
        float[] neg = axis(1);
        neg[5] = -0.0f;
        assertFalse(isHit(cache, SearchRequest.of(neg, 3)), "-0.0 is not 0.0");

        SearchRequest filtered =
                base.filter(Filter.eq("lang", "en").and(Filter.range("year", 2020, 2024)));
        cache(cache, filtered, result("y"));
        assertTrue(
                isHit(
                        cache,
                        base.filter(Filter.eq("lang", "en").and(Filter.range("year", 2020, 2024)))),
                "filters are records: equal filters hit");
    }

    @Test
    void theCacheKeepsNoArrayOfTheCaller() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        float[] v = axis(2);
        SearchRequest q =
                new SearchRequest(
                        v,
                        3,
                        VectorRecord.DEFAULT_TENANT,
                        null,
                        null,
                        dev.nepenthe.core.index.SearchParams
                                .DEFAULTS); // shares v, as the canonical constructor does
        cache(cache, q, result("x"));
        v[0] = 42f; // the caller changes its array after the put
        assertTrue(isHit(cache, query(2)), "the entry is still found under the query as it was");
        assertFalse(isHit(cache, SearchRequest.of(v, 3)));
    }

    @Test
    void aResultComputedBeforeAnInvalidationIsRefused() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        QueryCache.Lookup before = cache.lookup(C, query(1));
        QueryCache.Lookup otherTenant = cache.lookup(C, query(1).tenant("t2"));
        QueryCache.Lookup otherCollection = cache.lookup("other", query(1));
        assertEquals(
                0,
                cache.invalidate(
                        C, VectorRecord.DEFAULT_TENANT)); // a write landed during those searches
        assertFalse(cache.put(before, result("x")), "computed before the write: refused");
        assertTrue(cache.put(otherTenant, resultIn("t2", "x")), "another tenant is not affected");
        assertTrue(cache.put(otherCollection, result("x")), "another collection is not affected");
        assertFalse(isHit(cache, query(1)));
        assertFalse(
                cache(cache, query(1), result("x")),
                "a miss, and a lookup after the write is stored");
        assertTrue(isHit(cache, query(1)));

        assertEquals(
                1,
                cache.invalidate(C, VectorRecord.DEFAULT_TENANT),
                "invalidation evicts the tenant's entries");
        assertTrue(cache.lookup(C, query(1).tenant("t2")).isHit());
        QueryCache.Lookup late = cache.lookup(C, query(3).tenant("t3"));
        assertEquals(1, cache.invalidate(C), "a whole collection, every tenant");
        assertFalse(cache.put(late, resultIn("t3", "x")));
        assertTrue(cache.lookup("other", query(1)).isHit());
        QueryCache.Lookup beforeClear = cache.lookup("other", query(5));
        assertEquals(1, cache.clear());
        assertFalse(cache.put(beforeClear, result("x")));
        QueryCache.Stats s = cache.stats();
        assertEquals(0, s.entries());
        assertEquals(0, s.bytes());
        assertEquals(3, s.evictedByInvalidation());
        assertEquals(3, s.refusedPuts());
    }

    @Test
    void aLookupIsPutOnceAndOnlyAfterAMiss() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        QueryCache.Lookup miss = cache.lookup(C, query(1));
        assertThrows(IllegalStateException.class, miss::hits);
        assertTrue(cache.put(miss, result("x")));
        assertThrows(IllegalStateException.class, () -> cache.put(miss, result("x")));
        QueryCache.Lookup hit = cache.lookup(C, query(1));
        assertEquals(result("x"), hit.hits());
        assertThrows(IllegalArgumentException.class, () -> cache.put(hit, result("x")));
        QueryCache other = new QueryCache(100, Long.MAX_VALUE);
        assertThrows(
                IllegalArgumentException.class,
                () -> other.put(cache.lookup(C, query(2)), result("x")));
        assertThrows(IllegalArgumentException.class, () -> new QueryCache(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new QueryCache(1, 0));
        assertThrows(IllegalArgumentException.class, () -> new QueryCache(1, 1, 1.0));
        assertThrows(IllegalArgumentException.class, () -> new QueryCache(1, 1, Double.NaN));
    }

    @Test
    void aBlockEvictsAndRefusesItsRecordsAndSubjectInItsTenantOnly() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        cache(cache, query(1), result("a1", "n1"));
        cache(cache, query(2), result("n1", "n2"));
        cache(cache, query(3).subject("alice"), result()); // an empty result, asked for alice
        cache(cache, query(1).tenant("t2"), resultIn("t2", "a1")); // the same id in another tenant
        QueryCache.Lookup racing = cache.lookup(C, query(4));
        cache.block(
                new BlockedScope(
                        "op1",
                        VectorRecord.DEFAULT_TENANT,
                        "alice",
                        Map.of(C, Set.of("a1", "a2"))));
        assertFalse(isHit(cache, query(1)), "holds a1");
        assertFalse(isHit(cache, query(3).subject("alice")), "asked for alice");
        assertTrue(isHit(cache, query(2)));
        assertTrue(
                cache.lookup(C, query(1).tenant("t2")).isHit(),
                "another tenant's a1 is another record");
        assertEquals(2, cache.stats().evictedByForget());
        assertFalse(cache.put(racing, result("n3")), "computed before the mark");
        assertFalse(
                cache.put(cache.lookup(C, query(5)), result("n3", "a2")), "holds a blocked record");
        assertFalse(
                cache.put(cache.lookup(C, query(6).subject("alice")), result()),
                "asks for the blocked subject");
        assertTrue(
                cache.put(cache.lookup(C, query(7)), result("n3")), "anything else after the mark");
        cache.release("op1");
        assertTrue(
                cache.put(cache.lookup(C, query(5)), result("n3", "a2")),
                "released: the block is gone");
    }

    @Test
    void purgeEvictsByRecordSubjectAndNearQueryInTheTenantThenTakesNothingNewThereUntilRelease() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE, 0.85);
        float[] forgotten = axis(0);
        float[] near = forgotten.clone();
        near[4] = 0.3f; // cosine about 0.96
        float[] far = forgotten.clone();
        far[4] = 1.5f; // cosine about 0.55
        assertTrue(cosine(forgotten, near) > 0.9 && cosine(forgotten, far) < 0.6);
        cache(cache, query(1), result("a1", "n1"));
        cache(cache, SearchRequest.of(near, 3), result("n1"));
        cache(cache, SearchRequest.of(far, 3), result("n2"));
        cache(cache, query(2).subject("alice"), result());
        cache(cache, SearchRequest.of(near, 3).tenant("t2"), resultIn("t2", "n1"));
        cache(cache, query(1).tenant("t2"), resultIn("t2", "a1"));
        QueryCache.Lookup farLookup = cache.lookup(C, SearchRequest.of(far, 3));
        assertTrue(farLookup.isHit());
        List<float[]> heldNear = new ArrayList<>();
        QueryCache.Lookup nearMiss = cache.lookup(C, SearchRequest.of(near, 4));
        cache.put(nearMiss, result("n1"));
        heldNear.add(nearMiss.key.vector);

        ForgottenRecords f = forgotten("op1", VectorRecord.DEFAULT_TENANT, "alice", forgotten);
        SurfaceOutcome dirty = cache.verify(f, 0);
        assertEquals(
                3,
                dirty.problems().size(),
                "before the purge each rule finds its entry: " + dirty.problems());
        assertEquals(7, dirty.checked());

        assertEquals(4, cache.purge(f)); // a1, alice, the two near queries
        assertFalse(isHit(cache, query(1)));
        assertFalse(isHit(cache, SearchRequest.of(near, 3)));
        assertFalse(isHit(cache, query(2).subject("alice")));
        assertTrue(isHit(cache, SearchRequest.of(far, 3)), "a far query survives");
        assertTrue(
                cache.lookup(C, SearchRequest.of(near, 3).tenant("t2")).isHit(),
                "another tenant is not touched");
        assertTrue(cache.lookup(C, query(1).tenant("t2")).isHit());
        for (float[] v : heldNear) {
            assertTrue(allZero(v), "an evicted entry's query vector is zeroed");
        }
        SurfaceOutcome clean = cache.verify(f, 4);
        assertTrue(clean.clean(), clean.problems().toString());
        assertEquals(4, clean.purged());
        assertEquals(3, clean.checked());

        assertFalse(
                cache.put(cache.lookup(C, query(9)), result("n9")),
                "purged and not released: the tenant is frozen");
        assertTrue(cache.put(cache.lookup(C, query(9).tenant("t2")), resultIn("t2", "n9")));
        cache.release("op1");
        assertTrue(cache.put(cache.lookup(C, query(9)), result("n9")));
    }

    @Test
    void verifyFindsAnEntryPutBackPastEveryCheck() {
        QueryCache cache = new QueryCache(100, Long.MAX_VALUE);
        ForgottenRecords f = forgotten("op1", VectorRecord.DEFAULT_TENANT, null, axis(0));
        cache.block(
                new BlockedScope(
                        "op1", VectorRecord.DEFAULT_TENANT, null, Map.of(C, Set.of("a1"))));
        cache.purge(f);
        assertTrue(cache.verify(f, 0).clean());
        cache.insertUnchecked(C, query(3), result("a1"));
        SurfaceOutcome o = cache.verify(f, 0);
        assertFalse(o.clean());
        assertEquals(List.of("1 cached entries hold a forgotten record"), o.problems());
        assertNull(o.residual());
        assertEquals(QueryCache.NAME, o.surface());
    }

    private static ForgottenRecords forgotten(
            String op, String tenant, String subject, float[] vector) {
        return new ForgottenRecords(
                op, tenant, subject, List.of(new ForgottenRecords.Item(C, "a1", 0, vector)));
    }

    private static double cosine(float[] a, float[] b) {
        double ab = 0, aa = 0, bb = 0;
        for (int i = 0; i < a.length; i++) {
            ab += a[i] * b[i];
            aa += a[i] * a[i];
            bb += b[i] * b[i];
        }
        return ab / Math.sqrt(aa * bb);
    }

    private static boolean allZero(float[] v) {
        for (float x : v) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
