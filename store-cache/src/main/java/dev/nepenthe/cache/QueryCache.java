package dev.nepenthe.cache;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.SurfaceOutcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Search results by query, kept in front of {@link VectorCollection#search}, that take part in
 * every forget: registered with {@code Nepenthe.registerSurface}, it stops serving a forget's
 * records before {@code forget()} returns, evicts at the purge every entry that holds a forgotten
 * record or whose query lies near a forgotten vector, and proves at verification that none is left.
 * One cache serves one store (entries are keyed by collection name, not by store).
 *
 * <pre>{@code
 * QueryCache cache = new QueryCache(10_000, 256L << 20);
 * store.registerSurface(cache);                       // again after every open
 * List<SearchHit> hits = cache.search(collection, request);
 * collection.upsertAll(batch); cache.invalidate(collection.name(), tenant);  // after every write
 * }</pre>
 *
 * <p><b>Keys.</b> Collection name, tenant, subject, filter, k, index knobs and the query vector bit
 * for bit. A query that differs in one bit, or asks for another k, is another entry.
 *
 * <p><b>Bounds and cost.</b> At most {@code maxEntries} entries and {@code maxBytes} estimated
 * bytes; past either, the least recently used entries go. An entry's size is an estimate of the
 * heap it keeps reachable: {@value #ENTRY_BYTES} bytes plus 4 per query dimension, what the key's
 * subject, filter and knobs hold ({@link KeyBytes}: a filter can be megabytes), and per hit {@value
 * #HIT_BYTES} bytes, 4 per dimension (the record's vector), 2 per id character, the text's UTF-8
 * length and {@value #METADATA_ENTRY_BYTES} per metadata entry (strings shared with the store or
 * the caller are counted as if they were not). A result bigger than {@code maxBytes} on its own is
 * not stored.
 *
 * <p><b>Concurrency.</b> Safe for concurrent use; one lock guards the map. A hit costs hashing the
 * query (O(dimension)) and one hash lookup with an LRU relink under the lock, no search. A miss
 * costs a copy of the query vector; storing a result costs a pass over its hits (outside the lock)
 * and a few map operations under it. {@link #block} and {@link #invalidate} scan the entries under
 * the lock; {@link #purge} and {@link #verify} compare every entry of the tenant with every
 * forgotten vector outside it.
 *
 * <p><b>Writes are not seen.</b> The cache cannot tell that a collection changed: whoever writes
 * (upserts, deletes, rebuilds) must call {@link #invalidate(String, String)} or {@link
 * #invalidate(String)} once the write has returned, or stale results are served. A result computed
 * before the write and stored after the invalidation is refused (see {@link #put}). Forgets need no
 * such call: the cache is one of their surfaces.
 *
 * <p><b>What the cache holds.</b> Its own copy of each query vector (a caller's array is never
 * kept), zeroed when the entry is evicted, and the hits as an immutable list. The hits' records are
 * the immutable copies the store handed out (their arrays are private and copied on every access),
 * shared with the caller that searched; the cache cannot zero them and, once an entry is evicted,
 * holds no reference to them. Nothing is logged and no message names a query, a subject or a
 * record.
 */
public final class QueryCache implements ErasureSurface {

    /** The surface's name in operations, receipts and evidence. */
    public static final String NAME = "cache:query";

    /**
     * Estimated bytes of an entry apart from its query vector and hits (key, entry, map node,
     * list).
     */
    static final long ENTRY_BYTES = 192;

    /**
     * Estimated bytes of a hit apart from its vector, id, text and metadata (hit, record, array
     * headers).
     */
    static final long HIT_BYTES = 128;

    /** Estimated bytes of one metadata entry. */
    static final long METADATA_ENTRY_BYTES = 64;

    private final long maxBytes;
    private final double probeThreshold;

    /** Guards everything below, and every entry's {@code alive}. */
    private final Object lock = new Object();

    private final LruEntries entries;
    private final Admission admission = new Admission();

    private long hits;
    private long misses;
    private long puts;
    private long refused;
    private long evictedByForget;
    private long evictedByInvalidation;

    /**
     * A cache whose near-query rule uses the store's default probe threshold, {@link
     * ProbePolicy#DEFAULT} (cosine 0.85).
     *
     * @param maxEntries most entries kept, at least 1
     * @param maxBytes most estimated bytes kept (see the class comment), at least 1
     * @throws IllegalArgumentException if a bound is out of range
     */
    public QueryCache(int maxEntries, long maxBytes) {
        this(maxEntries, maxBytes, ProbePolicy.DEFAULT.threshold());
    }

    /**
     * A cache whose near-query rule uses the given threshold: pass the threshold of the store's
     * {@link ProbePolicy} ({@code StoreOptions.probePolicy()}), so that the cache evicts at least
     * what the store's probe would flag. (A request that tightens its own threshold is not seen by
     * surfaces; pass a lower one here to cover such requests.)
     *
     * @param maxEntries most entries kept, at least 1
     * @param maxBytes most estimated bytes kept (see the class comment), at least 1
     * @param probeThreshold cosine at or above which an entry's query counts as near a forgotten
     *     vector, in (0, 1); lower evicts more entries at every forget
     * @throws IllegalArgumentException if a bound or the threshold is out of range (NaN included)
     */
    public QueryCache(int maxEntries, long maxBytes, double probeThreshold) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException(
                    "query cache maxEntries: expected at least 1, got " + maxEntries);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException(
                    "query cache maxBytes: expected at least 1, got " + maxBytes);
        }
        if (!(probeThreshold > 0 && probeThreshold < 1)) {
            throw new IllegalArgumentException(
                    "query cache probe threshold: expected a cosine in (0, 1), as the"
                            + " store's probe policy takes, got "
                            + probeThreshold);
        }
        this.maxBytes = maxBytes;
        this.probeThreshold = probeThreshold;
        this.entries = new LruEntries(maxEntries, maxBytes);
    }

    // ---------------------------------------------------------------------------------- reads

    /**
     * The cached hits for {@code request} on {@code collection}, or the collection's own search,
     * stored for next time: {@link #lookup}, then on a miss {@link VectorCollection#search} and
     * {@link #put}. Only vector queries are cached: a query with text (keyword, hybrid, or embedded
     * by the collection) goes to the collection every time, since the forget rule that evicts
     * entries whose query lies near a forgotten vector has no vector to compare.
     *
     * @param collection the collection to search
     * @param request the query
     * @return at most k hits, best first, as an immutable list
     * @throws IllegalArgumentException and the other exceptions of {@link VectorCollection#search}
     */
    public List<SearchHit> search(VectorCollection collection, SearchRequest request) {
        if (!cacheable(request)) {
            return List.copyOf(collection.search(request));
        }
        Lookup lookup = lookup(collection.name(), request);
        if (lookup.isHit()) {
            return lookup.hits();
        }
        List<SearchHit> found;
        try {
            found = List.copyOf(collection.search(request));
        } catch (RuntimeException e) {
            lookup.key.wipe();
            throw e;
        }
        put(lookup, found);
        return found;
    }

    /**
     * Whether the cache serves this query: a vector query that carries its vector and no text.
     *
     * @param request the query
     * @return true for the queries {@link #lookup} accepts
     */
    public static boolean cacheable(SearchRequest request) {
        return request.mode() == SearchRequest.Mode.VECTOR
                && request.vector() != null
                && request.text() == null;
    }

    /**
     * Looks a query up. On a miss the lookup carries a ticket (the cache's epoch now) and a copy of
     * the query, for {@link #put}: take it before searching, so that a forget or an invalidation
     * that lands during the search is seen.
     *
     * @param collection the collection's name
     * @param request the query; its vector is read, not kept
     * @return a hit with the cached hits, or a miss to search and put
     * @throws NullPointerException if the collection or the request is null
     */
    public Lookup lookup(String collection, SearchRequest request) {
        Objects.requireNonNull(request, "search request must not be null");
        if (!cacheable(request)) {
            throw new IllegalArgumentException(
                    "query cache: expected a vector query without text, got a "
                            + request.mode()
                            + " query"
                            + (request.text() != null ? " with text" : ""));
        }
        CacheKey probe =
                new CacheKey(collection, request); // reads the caller's array; never stored
        long ticket;
        synchronized (lock) {
            CacheEntry e = entries.get(probe);
            if (e != null) {
                hits++;
                return new Lookup(this, null, e.hits, 0);
            }
            misses++;
            ticket = admission.ticket();
        }
        return new Lookup(this, probe.ownCopy(), null, ticket);
    }

    /**
     * Stores the result of a search after a miss, unless something since the miss makes it unsafe
     * to serve. Refused (and false returned) when, since the lookup:
     *
     * <ul>
     *   <li>a forget blocked or purged the tenant, or the collection or tenant was invalidated (the
     *       search may have run before the forget's mark or the write): the lookup's ticket is
     *       older than the scope's last mark;
     *   <li>a forget of the tenant has purged and not yet been released (no new entry lands between
     *       a purge and its verification);
     *   <li>a hit is a record an unreleased forget blocked, or the request names a subject one
     *       blocked;
     *   <li>the result alone is larger than {@code maxBytes}.
     * </ul>
     *
     * A stored result replaces an entry with the same key and may evict least recently used ones.
     *
     * @param miss the lookup that missed, used once
     * @param result the search's hits; the list is copied, the immutable hits are kept
     * @return whether the result was stored
     * @throws IllegalArgumentException if {@code miss} is a hit or comes from another cache
     * @throws IllegalStateException if {@code miss} was put already
     * @throws NullPointerException if the result is or holds null
     */
    public boolean put(Lookup miss, List<SearchHit> result) {
        Objects.requireNonNull(miss, "lookup must not be null");
        if (miss.owner != this) {
            throw new IllegalArgumentException("lookup comes from another query cache");
        }
        if (miss.isHit()) {
            throw new IllegalArgumentException("lookup was a hit: there is nothing to put");
        }
        List<SearchHit> copy = List.copyOf(result);
        long size = CacheEntry.cost(miss.key, copy);
        synchronized (lock) {
            if (miss.used) {
                throw new IllegalStateException(
                        "lookup was put already: take a new one for each search");
            }
            miss.used = true;
            if (size <= maxBytes && admission.admits(miss.key, miss.ticket, copy)) {
                entries.insert(new CacheEntry(miss.key, copy, size));
                puts++;
                return true;
            }
            refused++;
        }
        miss.key.wipe(); // the cache's own copy, never stored
        return false;
    }

    // ------------------------------------------------------------------------- invalidation

    /**
     * Evicts every entry of one tenant in one collection and refuses results computed before this
     * call; call it once a write to that tenant and collection has returned. O(entries) under the
     * lock.
     *
     * @param collection the collection's name
     * @param tenant the tenant written to
     * @return how many entries were evicted
     */
    public int invalidate(String collection, String tenant) {
        Objects.requireNonNull(collection, "collection name must not be null");
        Objects.requireNonNull(tenant, "tenant must not be null");
        synchronized (lock) {
            admission.mark(new Admission.Scope(tenant, collection));
            return evictInvalidated(
                    e -> e.key.collection.equals(collection) && e.key.tenant.equals(tenant));
        }
    }

    /**
     * Evicts every entry of a collection, in all tenants, and refuses results computed before this
     * call: after a write that touched many tenants, a rebuild, or dropping and re-creating the
     * collection. O(entries) under the lock.
     *
     * @param collection the collection's name
     * @return how many entries were evicted
     */
    public int invalidate(String collection) {
        Objects.requireNonNull(collection, "collection name must not be null");
        synchronized (lock) {
            admission.mark(new Admission.Scope(null, collection));
            return evictInvalidated(e -> e.key.collection.equals(collection));
        }
    }

    /**
     * Evicts every entry and refuses every result computed before this call. Also the way out for
     * an operator when {@link #verify} reported a problem: clear, then re-verify the operation.
     *
     * @return how many entries were evicted
     */
    public int clear() {
        synchronized (lock) {
            admission.markAll();
            return evictInvalidated(e -> true);
        }
    }

    /** Guarded by lock. */
    private int evictInvalidated(Predicate<CacheEntry> which) {
        int n = entries.evictWhere(which);
        evictedByInvalidation += n;
        return n;
    }

    // ------------------------------------------------------------------------ erasure surface

    /**
     * @return {@value #NAME}
     */
    @Override
    public String name() {
        return NAME;
    }

    /**
     * @return {@link ErasureClass#PHYSICAL}: entries are removed and their query vectors zeroed
     */
    @Override
    public ErasureClass erasureClass() {
        return ErasureClass.PHYSICAL;
    }

    /**
     * Stops serving the scope before it returns: evicts every entry of the tenant holding a blocked
     * record or asked for the blocked subject, remembers the scope (a result holding one of its
     * records is refused until {@link #release}) and refuses results computed before this call in
     * the tenant. O(entries) under the lock.
     */
    @Override
    public void block(BlockedScope scope) {
        Objects.requireNonNull(scope, "blocked scope must not be null");
        synchronized (lock) {
            admission.block(scope);
            evictedByForget +=
                    entries.evictWhere(
                            e ->
                                    e.key.tenant.equals(scope.tenant())
                                            && ((scope.subject() != null
                                                            && scope.subject()
                                                                    .equals(e.key.subject))
                                                    || e.holdsAny(
                                                            scope.recordIds()
                                                                    .get(e.key.collection))));
        }
    }

    /**
     * Evicts every entry of the tenant that holds a forgotten record (by collection and id), whose
     * query has cosine at or above the probe threshold with a forgotten vector of its dimension, or
     * that was asked for the forgotten subject, and zeroes their query vectors. From here until
     * {@link #release} the tenant takes no new entries, so what {@link #verify} checks is what this
     * left. Costs (tenant's entries) x (forgotten vectors) x dimension multiply-adds, outside the
     * lock.
     *
     * @return how many entries were evicted
     */
    @Override
    public long purge(ForgottenRecords forgotten) {
        Objects.requireNonNull(forgotten, "forgotten records must not be null");
        List<CacheEntry> candidates = new ArrayList<>();
        synchronized (lock) {
            admission.purging(forgotten.operationId(), forgotten.tenant());
            for (CacheEntry e : entries.all()) {
                if (e.key.tenant.equals(forgotten.tenant())) {
                    candidates.add(e);
                }
            }
        }
        ForgetResidue rule = new ForgetResidue(forgotten, probeThreshold);
        List<CacheEntry> doomed = new ArrayList<>();
        for (CacheEntry e : candidates) {
            if (rule.why(e) != null) {
                doomed.add(e);
            }
        }
        long evicted = 0;
        synchronized (lock) {
            for (CacheEntry e : doomed) {
                if (entries.evict(e)) {
                    evicted++;
                }
            }
            evictedByForget += evicted;
        }
        return evicted;
    }

    /**
     * Proves no entry serves forgotten data: scans every entry and, in the operation's tenant,
     * looks for forgotten records among its hits, for a query within the probe threshold of a
     * forgotten vector and for the forgotten subject as the query's subject. Read-only: entries it
     * finds stay (an operator clears the cache and re-verifies). Problems give counts only.
     *
     * @return the outcome: {@code purged} as given, {@code checked} the entries scanned
     */
    @Override
    public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
        Objects.requireNonNull(forgotten, "forgotten records must not be null");
        List<CacheEntry> all;
        synchronized (lock) {
            all = entries.all();
        }
        ForgetResidue rule = new ForgetResidue(forgotten, probeThreshold);
        Map<CacheEntry, ForgetResidue.Reason> found = new LinkedHashMap<>();
        for (CacheEntry e : all) {
            if (e.key.tenant.equals(forgotten.tenant())) {
                ForgetResidue.Reason why = rule.why(e);
                if (why != null) {
                    found.put(e, why);
                }
            }
        }
        // An entry evicted (and its vector zeroed) while it was being compared is gone: not
        // residue.
        synchronized (lock) {
            found.keySet().removeIf(e -> !e.alive);
        }
        List<String> problems = ForgetResidue.problems(found.values(), probeThreshold);
        return new SurfaceOutcome(NAME, ErasureClass.PHYSICAL, purged, all.size(), problems, null);
    }

    /** Forgets the operation's scope: its records and tenant take new entries again. */
    @Override
    public void release(String operationId) {
        synchronized (lock) {
            admission.release(operationId);
        }
    }

    // ---------------------------------------------------------------------------------- stats

    /**
     * The counters since the cache was made, and its size now.
     *
     * @return a snapshot
     */
    public Stats stats() {
        synchronized (lock) {
            return new Stats(
                    hits,
                    misses,
                    puts,
                    refused,
                    entries.evictedByCapacity(),
                    evictedByForget,
                    evictedByInvalidation,
                    entries.size(),
                    entries.bytes());
        }
    }

    /**
     * The cache's counters at one moment.
     *
     * @param hits lookups answered from the cache
     * @param misses lookups that were not
     * @param puts results stored
     * @param refusedPuts results refused (computed before a forget or invalidation, holding a
     *     blocked record, during a purge of their tenant, or too large)
     * @param evictedByCapacity entries evicted for the entry or byte bound (least recently used)
     * @param evictedByForget entries evicted by a forget's block or purge
     * @param evictedByInvalidation entries evicted by {@link QueryCache#invalidate(String,
     *     String)}, {@link QueryCache#invalidate(String)} or {@link QueryCache#clear()}
     * @param entries entries held now
     * @param bytes estimated bytes held now (see the class comment)
     */
    public record Stats(
            long hits,
            long misses,
            long puts,
            long refusedPuts,
            long evictedByCapacity,
            long evictedByForget,
            long evictedByInvalidation,
            int entries,
            long bytes) {

        /**
         * Hits over lookups.
         *
         * @return the share of lookups that hit, 0 when there were none
         */
        public double hitRate() {
            long lookups = hits + misses;
            return lookups == 0 ? 0 : (double) hits / lookups;
        }
    }

    /**
     * What {@link #lookup} found: a hit with its hits, or a miss that carries what {@link #put}
     * needs (a ticket and the cache's copy of the query). Not safe for concurrent use; a miss is
     * put at most once.
     */
    public static final class Lookup {
        private final QueryCache owner;

        /** The cache's own copy of the query on a miss (stored by {@link #put}), null on a hit. */
        final CacheKey key;

        private final List<SearchHit> hits;
        private final long ticket;
        private boolean used; // guarded by owner.lock

        private Lookup(QueryCache owner, CacheKey key, List<SearchHit> hits, long ticket) {
            this.owner = owner;
            this.key = key;
            this.hits = hits;
            this.ticket = ticket;
        }

        /**
         * Whether the cache held a result.
         *
         * @return true for a hit
         */
        public boolean isHit() {
            return hits != null;
        }

        /**
         * The cached hits.
         *
         * @return an immutable list, best first
         * @throws IllegalStateException on a miss
         */
        public List<SearchHit> hits() {
            if (hits == null) {
                throw new IllegalStateException("lookup was a miss: search, then put the result");
            }
            return hits;
        }

        /** Content-free. */
        @Override
        public String toString() {
            return isHit()
                    ? "Lookup[hit, " + hits.size() + " hits]"
                    : "Lookup[miss, ticket=" + ticket + "]";
        }
    }

    // ------------------------------------------------------------------------------ internals

    /**
     * Test hook: stores a result as if it were fresh, past every check (tickets, blocks, purges):
     * how a test makes a stale entry that {@link #verify} must find.
     */
    void insertUnchecked(String collection, SearchRequest request, List<SearchHit> result) {
        CacheKey key = new CacheKey(collection, request).ownCopy();
        List<SearchHit> copy = List.copyOf(result);
        long size = CacheEntry.cost(key, copy);
        synchronized (lock) {
            entries.insert(new CacheEntry(key, copy, size));
        }
    }
}
