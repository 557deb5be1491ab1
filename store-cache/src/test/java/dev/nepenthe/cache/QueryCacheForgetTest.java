package dev.nepenthe.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Filter;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache in front of a real embedded store (exact index, 320 records in two tenants) and
 * registered as its "cache:query" surface. Oracles: an uncached {@link VectorCollection#search} for
 * what a hit must return; the subject's record ids for what no search may return once {@code
 * forget()} has returned; cosines computed here in double precision for which entries the
 * near-query rule must evict; and the operation's own surface outcome, which must name the cache
 * clean with exactly the count of entries the rules cover.
 */
class QueryCacheForgetTest {

    @TempDir Path tmp;

    /**
     * 32 dimensions: random directions almost never meet at cosine 0.85, so the store's probe stays
     * quiet.
     */
    private static final int DIM = 32;

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String C = "notes";
    private static final String ALICE = "alice";
    private static final String BOB = "bob";
    private static final String OTHER = "other-tenant";
    private static final double THRESHOLD = 0.85;

    /** Vectors of the stored records, by tenant and id. */
    private final Map<String, float[]> vectors = new HashMap<>();

    private final Set<String> aliceIds = new LinkedHashSet<>();

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    private static float[] gaussian(Random rnd) {
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }

    private float[] vec(String id) {
        return vectors.get(VectorRecord.DEFAULT_TENANT + "/" + id).clone();
    }

    /**
     * Default tenant: alice a0..a9, bob b0..b39, nobody n0..n249 (metadata lang en or de). Tenant
     * {@value #OTHER}: o0..o19, the first three also alice's (the same name in another tenant is
     * another person to the store).
     */
    private VectorCollection populate(Nepenthe store, Random rnd) {
        VectorCollection c = store.createCollection(CollectionSpec.of(C, DIM, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            batch.add(record(VectorRecord.DEFAULT_TENANT, "a" + i, ALICE, rnd, "en"));
            aliceIds.add("a" + i);
        }
        for (int i = 0; i < 40; i++) {
            batch.add(
                    record(
                            VectorRecord.DEFAULT_TENANT,
                            "b" + i,
                            BOB,
                            rnd,
                            i % 2 == 0 ? "en" : "de"));
        }
        for (int i = 0; i < 250; i++) {
            batch.add(
                    record(
                            VectorRecord.DEFAULT_TENANT,
                            "n" + i,
                            null,
                            rnd,
                            i % 3 == 0 ? "de" : "en"));
        }
        for (int i = 0; i < 20; i++) {
            batch.add(record(OTHER, "o" + i, i < 3 ? ALICE : null, rnd, "en"));
        }
        c.upsertAll(batch);
        return c;
    }

    private VectorRecord record(String tenant, String id, String subject, Random rnd, String lang) {
        float[] v = gaussian(rnd);
        vectors.put(tenant + "/" + id, v.clone());
        return VectorRecord.builder(id)
                .tenant(tenant)
                .subject(subject)
                .vector(v)
                .text("note " + id)
                .metadata("lang", lang)
                .build();
    }

    private static ForgetRequest forgetAlice(String key) {
        return ForgetRequest.of(ForgetScope.subject(ALICE), key, "gdpr-art17");
    }

    private boolean holdsAlice(SearchRequest q, List<SearchHit> hits) {
        return q.tenant().equals(VectorRecord.DEFAULT_TENANT)
                && hits.stream().anyMatch(h -> aliceIds.contains(h.id()));
    }

    private static SurfaceOutcome cacheOutcome(ForgetOperation op) {
        return op.surfaces().stream()
                .filter(s -> s.surface().equals(QueryCache.NAME))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no cache:query among " + op.surfaces()));
    }

    /** What the purge must evict, decided here: the rules of FORGET.md in double precision. */
    private boolean purgeMustEvict(SearchRequest q, List<SearchHit> hits) {
        if (!q.tenant().equals(VectorRecord.DEFAULT_TENANT)) {
            return false;
        }
        if (holdsAlice(q, hits) || ALICE.equals(q.subject())) {
            return true;
        }
        for (String id : aliceIds) {
            if (cosine(q.vector(), vec(id)) >= THRESHOLD) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aHitReturnsWhatAnUncachedSearchReturns() throws Exception {
        long seed = Seeds.draw("QueryCacheForgetTest.aHitReturnsWhatAnUncachedSearchReturns");
        Random rnd = new Random(seed);
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, rnd);
            QueryCache cache = new QueryCache(1_000, 64L << 20);
            store.registerSurface(cache);
            List<SearchRequest> queries = new ArrayList<>();
            List<String> stored = new ArrayList<>(vectors.keySet());
            Collections.sort(stored);
            int[] ks = {1, 5, 10, 40};
            for (int i = 0; i < 60; i++) {
                float[] v =
                        rnd.nextBoolean()
                                ? gaussian(rnd)
                                : vectors.get(stored.get(rnd.nextInt(stored.size()))).clone();
                SearchRequest q = SearchRequest.of(v, ks[rnd.nextInt(ks.length)]);
                switch (rnd.nextInt(6)) {
                    case 0 -> q = q.subject(BOB);
                    case 1 -> q = q.subject(ALICE);
                    case 2 -> q = q.filter(Filter.eq("lang", "de"));
                    case 3 -> q = q.tenant(OTHER).filter(Filter.in("lang", "en", "de"));
                    case 4 -> q = q.param("efSearch", 16 + rnd.nextInt(100));
                    default -> {}
                }
                queries.add(q);
            }
            // The draw can repeat a request (the same stored vector, k and narrowing twice): the
            // repeat is a hit. The oracle counts distinct requests by every field of the key.
            java.util.Set<String> distinct = new java.util.HashSet<>();
            for (SearchRequest q : queries) {
                distinct.add(
                        java.util.Arrays.toString(q.vector())
                                + "|"
                                + q.k()
                                + "|"
                                + q.tenant()
                                + "|"
                                + q.subject()
                                + "|"
                                + q.filter()
                                + "|"
                                + q.params());
            }
            int unique = distinct.size();
            for (SearchRequest q : queries) {
                assertEquals(
                        c.search(q),
                        cache.search(c, q),
                        "a miss returns the store's hits" + Seeds.replay(seed));
            }
            assertEquals(
                    new QueryCache.Stats(
                            60 - unique, unique, unique, 0, 0, 0, 0, unique, cache.stats().bytes()),
                    cache.stats(),
                    Seeds.replay(seed));
            Collections.shuffle(queries, rnd);
            for (SearchRequest q : queries) {
                assertTrue(cache.lookup(C, q).isHit(), Seeds.replay(seed));
                assertEquals(
                        c.search(q),
                        cache.search(c, q),
                        "a hit returns the store's hits" + Seeds.replay(seed));
            }
            QueryCache.Stats s = cache.stats();
            // 60 - unique repeats in the first pass, then two hits (lookup and search) per request.
            assertEquals(60 - unique + 120, s.hits(), Seeds.replay(seed));
            assertEquals(unique, s.misses());
            assertEquals((double) (180 - unique) / 180, s.hitRate(), 1e-12);
        }
    }

    @Test
    void onceForgetReturnsNoSearchThroughTheCacheReturnsTheSubjectNorDoesARacingPutLand()
            throws Exception {
        long seed = Seeds.draw("QueryCacheForgetTest.onceForgetReturnsNoSearchThroughTheCache...");
        Random rnd = new Random(seed);
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, rnd);
            QueryCache cache = new QueryCache(1_000, 64L << 20, THRESHOLD);
            store.registerSurface(cache);
            List<SearchRequest> issued = new ArrayList<>();
            List<SearchRequest> aliceQueries = new ArrayList<>();
            for (String id : aliceIds) {
                aliceQueries.add(SearchRequest.of(vec(id), 10));
                aliceQueries.add(SearchRequest.of(vec(id), 3).subject(ALICE));
                aliceQueries.add(SearchRequest.of(vec(id), 10).filter(Filter.eq("lang", "en")));
            }
            List<SearchRequest> controls = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                controls.add(SearchRequest.of(vec("b" + i), 5).subject(BOB));
                controls.add(
                        SearchRequest.of(gaussian(rnd), 5)
                                .tenant(OTHER)); // alice of the other tenant may be here
            }
            for (SearchRequest q : aliceQueries) {
                assertTrue(
                        holdsAlice(q, cache.search(c, q)),
                        "precondition: each is a record's own nearest neighbour");
            }
            controls.forEach(q -> cache.search(c, q));
            issued.addAll(aliceQueries);
            issued.addAll(controls);
            // The race: a search that computed its result before the mark and puts it after.
            SearchRequest racing = SearchRequest.of(vec("a3"), 10).filter(Filter.exists("lang"));
            QueryCache.Lookup racingLookup = cache.lookup(C, racing);
            List<SearchHit> stale = c.search(racing);
            assertTrue(holdsAlice(racing, stale), "precondition: the racing search found alice");
            issued.add(racing);

            // A legal hold keeps the operation marked (BLOCKED, then COMPLETED_WITH_EXCEPTION) but
            // not purged, so what follows is checked while the block alone protects the cache.
            LegalHold hold =
                    store.placeHold(
                            VectorRecord.DEFAULT_TENANT,
                            ForgetScope.subject(ALICE),
                            "litigation-7");
            ForgetOperation op = store.forget(forgetAlice("req-1"));
            // forget() has returned: from here no search through the cache returns alice.
            for (SearchRequest q : aliceQueries) {
                List<SearchHit> hits = cache.search(c, q);
                assertFalse(
                        holdsAlice(q, hits),
                        "served alice after forget returned" + Seeds.replay(seed));
                assertEquals(c.search(q), hits, "and serves what the store serves");
            }
            assertFalse(
                    cache.put(racingLookup, stale),
                    "a result computed before the mark must not land");
            assertFalse(holdsAlice(racing, cache.search(c, racing)));
            QueryCache.Lookup fresh = cache.lookup(C, SearchRequest.of(vec("a5"), 10).subject(BOB));
            assertFalse(
                    cache.put(fresh, stale),
                    "a result holding a blocked record is refused until release");
            for (SearchRequest q : controls) {
                assertTrue(
                        cache.lookup(C, q).isHit(),
                        "an entry without alice's records survives the block");
            }
            assertEquals(
                    OperationState.COMPLETED_WITH_EXCEPTION,
                    store.awaitOperation(op.id(), WAIT).state());
            for (SearchRequest q : aliceQueries) {
                if (q.subject() != null) {
                    assertFalse(
                            cache.lookup(C, q).isHit(),
                            "a query for the blocked subject is not stored");
                }
            }

            long mustEvict = 0;
            for (SearchRequest q : issued) {
                QueryCache.Lookup l = cache.lookup(C, q);
                if (l.isHit() && purgeMustEvict(q, l.hits())) {
                    mustEvict++;
                }
            }
            assertTrue(
                    mustEvict >= aliceIds.size(),
                    "the re-cached queries at alice's own vectors are near them");
            store.liftHold(hold.id());
            ForgetOperation done = store.awaitOperation(op.id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            SurfaceOutcome outcome = cacheOutcome(done);
            assertTrue(outcome.clean(), outcome.problems().toString());
            assertEquals(ErasureClass.PHYSICAL, outcome.erasureClass());
            assertEquals(
                    mustEvict,
                    outcome.purged(),
                    "the purge evicts exactly what the rules cover" + Seeds.replay(seed));
            assertEquals(cache.stats().entries(), outcome.checked());
            for (SearchRequest q : issued) {
                QueryCache.Lookup l = cache.lookup(C, q);
                assertTrue(!l.isHit() || !purgeMustEvict(q, l.hits()));
                List<SearchHit> hits = cache.search(c, q);
                assertFalse(holdsAlice(q, hits));
                assertEquals(c.search(q), hits);
            }
            for (SearchRequest q : controls) {
                assertTrue(cache.lookup(C, q).isHit(), "controls survive the purge too");
            }
        }
    }

    @Test
    void anEntryWhoseQueryWasNearAForgottenVectorIsEvictedAtPurgeAndAFarOneSurvives()
            throws Exception {
        long seed = Seeds.draw("QueryCacheForgetTest.anEntryWhoseQueryWasNearAForgottenVector...");
        Random rnd = new Random(seed);
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, rnd);
            QueryCache cache = new QueryCache(1_000, 64L << 20, THRESHOLD);
            store.registerSurface(cache);
            float[] a0 = vec("a0");
            SearchRequest near = SearchRequest.of(atCosine(a0, 0.95, rnd), 5).subject(BOB);
            SearchRequest far = SearchRequest.of(atCosine(a0, 0.5, rnd), 5).subject(BOB);
            SearchRequest otherTenant = SearchRequest.of(atCosine(a0, 0.95, rnd), 5).tenant(OTHER);
            assertTrue(
                    cosine(near.vector(), a0) > 0.9 && cosine(far.vector(), a0) < 0.6,
                    Seeds.replay(seed));
            Map<SearchRequest, QueryCache.Lookup> lookups = new HashMap<>();
            for (SearchRequest q : List.of(near, far, otherTenant)) {
                QueryCache.Lookup l = cache.lookup(C, q);
                List<SearchHit> hits = c.search(q);
                assertFalse(holdsAlice(q, hits), "precondition: no entry holds alice's records");
                assertTrue(cache.put(l, hits));
                lookups.put(q, l);
            }
            // A search that computed its result before the mark and puts it only after the
            // operation sealed and released its block: the blocked ids are gone by then, so only
            // the ticket can refuse it.
            SearchRequest slow = SearchRequest.of(vec("a4"), 10);
            QueryCache.Lookup slowLookup = cache.lookup(C, slow);
            List<SearchHit> stale = c.search(slow);
            assertTrue(holdsAlice(slow, stale));
            ForgetOperation done =
                    store.awaitOperation(store.forget(forgetAlice("req-1")).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            SurfaceOutcome outcome = cacheOutcome(done);
            assertTrue(outcome.clean(), outcome.problems().toString());
            assertEquals(1, outcome.purged(), "the near query, and only it" + Seeds.replay(seed));
            assertFalse(
                    cache.put(slowLookup, stale),
                    "a result computed before the mark never lands, even after release");
            assertFalse(holdsAlice(slow, cache.search(c, slow)));
            assertFalse(
                    cache.lookup(C, near).isHit(),
                    "evicted though its hits never held alice's records");
            assertTrue(cache.lookup(C, far).isHit(), "a far query survives");
            assertTrue(cache.lookup(C, otherTenant).isHit(), "another tenant is not touched");
            assertTrue(
                    allZero(lookups.get(near).key.vector),
                    "the evicted entry's query vector is zeroed");
            assertFalse(allZero(lookups.get(far).key.vector));
            assertEquals(1, cache.stats().evictedByForget());
        }
    }

    /**
     * A surface registered after the cache: its purge runs after the cache's and before the cache's
     * verify, and puts back what the cache just purged, past every check.
     */
    private static final class Saboteur implements ErasureSurface {
        private final Runnable corrupt;

        Saboteur(Runnable corrupt) {
            this.corrupt = corrupt;
        }

        @Override
        public String name() {
            return "test:saboteur";
        }

        @Override
        public ErasureClass erasureClass() {
            return ErasureClass.PHYSICAL;
        }

        @Override
        public void block(dev.nepenthe.core.forget.BlockedScope scope) {}

        @Override
        public long purge(ForgottenRecords forgotten) {
            corrupt.run();
            return 0;
        }

        @Override
        public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
            return new SurfaceOutcome(name(), ErasureClass.PHYSICAL, 0, 0, List.of(), null);
        }
    }

    @Test
    void verifyIsCleanAfterThePurgeAndFailsOnAStaleEntryPutBack() throws Exception {
        long seed =
                Seeds.draw(
                        "QueryCacheForgetTest.verifyIsCleanAfterThePurgeAndFailsOnAStaleEntryPutBack");
        Random rnd = new Random(seed);
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, rnd);
            QueryCache cache = new QueryCache(1_000, 64L << 20, THRESHOLD);
            store.registerSurface(cache);
            SearchRequest holding = SearchRequest.of(vec("a1"), 10);
            List<SearchHit> holdingHits = c.search(holding);
            assertTrue(holdsAlice(holding, holdingHits));
            SearchRequest nearQuery =
                    SearchRequest.of(atCosine(vec("a2"), 0.95, rnd), 5).subject(BOB);
            List<SearchHit> nearHits = c.search(nearQuery);
            AtomicBoolean armed = new AtomicBoolean(true);
            store.registerSurface(
                    new Saboteur(
                            () -> {
                                if (armed.get()) {
                                    cache.insertUnchecked(C, holding, holdingHits);
                                    cache.insertUnchecked(C, nearQuery, nearHits);
                                }
                            }));
            // Something besides, which survives unless the forget's own rules take it (its hits
            // may include one of alice's records, or its query lie near one of hers: random data).
            SearchRequest besides = SearchRequest.of(vec("b1"), 5);
            List<SearchHit> besidesHits = cache.search(c, besides);
            int survivors = purgeMustEvict(besides, besidesHits) ? 0 : 1;
            ForgetOperation review =
                    store.awaitOperation(store.forget(forgetAlice("req-1")).id(), WAIT);
            assertEquals(
                    OperationState.NEEDS_REVIEW,
                    review.state(),
                    "a stale entry must keep the forget from sealing");
            SurfaceOutcome dirty = cacheOutcome(review);
            assertFalse(dirty.clean());
            assertEquals(2, dirty.problems().size(), dirty.problems().toString());
            assertTrue(
                    dirty.problems().get(0).contains("hold a forgotten record"),
                    dirty.problems().toString());
            assertTrue(
                    dirty.problems().get(1).contains("query at cosine"),
                    dirty.problems().toString());
            for (String p : dirty.problems()) {
                assertFalse(
                        p.contains(ALICE) || aliceIds.stream().anyMatch(p::contains),
                        "counts only: " + p);
            }
            assertThrows(
                    IllegalStateException.class,
                    () -> store.override(review.id(), "no-residue"),
                    "an override cannot clear a failing surface");

            armed.set(false);
            assertEquals(
                    2 + survivors, cache.clear(), Seeds.replay(seed)); // the operator's way out
            store.reverify(review.id());
            ForgetOperation done = store.awaitOperation(review.id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            SurfaceOutcome clean = cacheOutcome(done);
            assertTrue(clean.clean(), clean.problems().toString());
            assertEquals(0, clean.checked());
        }
    }

    /**
     * Searches through the cache on two threads while a forget runs: any search that started after
     * {@code forget()} returned (it read the flag first) must not see alice, whether the cache or
     * the store answered it, and the forget must seal with the cache clean.
     */
    @Test
    void searchesRacingAForgetNeverSeeTheSubjectOnceItReturned() throws Exception {
        long seed =
                Seeds.draw(
                        "QueryCacheForgetTest.searchesRacingAForgetNeverSeeTheSubjectOnceItReturned");
        Random rnd = new Random(seed);
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, rnd);
            QueryCache cache = new QueryCache(200, 64L << 20, THRESHOLD);
            store.registerSurface(cache);
            List<SearchRequest> pool = new ArrayList<>();
            for (String id : aliceIds) {
                pool.add(SearchRequest.of(vec(id), 10));
                pool.add(SearchRequest.of(atCosine(vec(id), 0.97, rnd), 10));
            }
            for (int i = 0; i < 40; i++) {
                pool.add(SearchRequest.of(vec("n" + rnd.nextInt(250)), 10));
            }
            pool.forEach(q -> cache.search(c, q));
            AtomicBoolean returned = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong after = new AtomicLong();
            AtomicLong violations = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Random tr = new Random(seed + t);
                threads.add(
                        Thread.ofPlatform()
                                .name("cache-searcher-" + t)
                                .start(
                                        () -> {
                                            while (!stop.get()) {
                                                SearchRequest q = pool.get(tr.nextInt(pool.size()));
                                                boolean started = returned.get();
                                                List<SearchHit> hits = cache.search(c, q);
                                                if (started) {
                                                    after.incrementAndGet();
                                                    if (holdsAlice(q, hits)) {
                                                        violations.incrementAndGet();
                                                    }
                                                }
                                            }
                                        }));
            }
            Thread.sleep(50);
            ForgetOperation op = store.forget(forgetAlice("req-1"));
            returned.set(true);
            ForgetOperation done = store.awaitOperation(op.id(), WAIT);
            Thread.sleep(50);
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            assertEquals(
                    0,
                    violations.get(),
                    "searches started after forget returned that got alice" + Seeds.replay(seed));
            assertTrue(after.get() > 0, "no search ran after forget returned");
            assertEquals(OperationState.SEALED, done.state(), done.note());
            SurfaceOutcome outcome = cacheOutcome(done);
            assertTrue(outcome.clean(), outcome.problems() + Seeds.replay(seed));
            QueryCache.Stats s = cache.stats();
            assertNotEquals(0, s.hits());
            assertTrue(s.entries() <= 200);
            System.out.println("[cache] racing searches after forget: " + after.get() + ", " + s);
        }
    }

    /** A vector at cosine {@code c} to {@code v}: v's direction plus an orthogonal random part. */
    private static float[] atCosine(float[] v, double c, Random rnd) {
        float[] w = gaussian(rnd);
        double vv = 0, vw = 0;
        for (int i = 0; i < DIM; i++) {
            vv += v[i] * v[i];
            vw += v[i] * w[i];
        }
        double nw = 0;
        double[] o = new double[DIM];
        for (int i = 0; i < DIM; i++) {
            o[i] = w[i] - vw / vv * v[i];
            nw += o[i] * o[i];
        }
        double nv = Math.sqrt(vv);
        nw = Math.sqrt(nw);
        float[] out = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            out[i] = (float) (c * v[i] / nv + Math.sqrt(1 - c * c) * o[i] / nw);
        }
        return out;
    }

    private static double cosine(float[] a, float[] b) {
        double ab = 0, aa = 0, bb = 0;
        for (int i = 0; i < a.length; i++) {
            ab += (double) a[i] * b[i];
            aa += (double) a[i] * a[i];
            bb += (double) b[i] * b[i];
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
