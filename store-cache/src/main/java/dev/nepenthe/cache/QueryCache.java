package dev.nepenthe.cache;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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

    /**
     * How many scopes (tenant, collection, collection and tenant) the cache remembers the last
     * invalidation or forget of, to refuse results computed before it. Past this many, it forgets
     * them all at once and refuses every result then in flight instead.
     */
    static final int MAX_MARKS = 4096;

    private final int maxEntries;
    private final long maxBytes;
    private final double probeThreshold;

    private final Object lock = new Object();

    // Everything below is guarded by lock.
    /** Access order: the first entry is the least recently used. */
    private final LinkedHashMap<CacheKey, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);

    private long bytes;

    /** Raised by every block, purge, invalidation and clear; a miss's ticket is its value then. */
    private long epoch;

    /** A result whose ticket is below this is refused (every mark older than it was dropped). */
    private long floor;

    /** The epoch of the last block, purge or invalidation of each scope. */
    private final Map<Scope, Long> marks = new HashMap<>();

    /** Scopes of unreleased operations, by operation id. */
    private final Map<String, BlockedScope> blocks = new HashMap<>();

    /** Tenants of operations purged but not released, by operation id: no new entries there. */
    private final Map<String, String> purging = new HashMap<>();

    private long hits;
    private long misses;
    private long puts;
    private long refused;
    private long evictedByCapacity;
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
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
        this.probeThreshold = probeThreshold;
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
            Entry e = entries.get(probe);
            if (e != null) {
                hits++;
                return new Lookup(this, null, e.hits, 0);
            }
            misses++;
            ticket = epoch;
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
        long size = cost(miss.key, copy);
        synchronized (lock) {
            if (miss.used) {
                throw new IllegalStateException(
                        "lookup was put already: take a new one for each search");
            }
            miss.used = true;
            if (admissible(miss.key, miss.ticket, copy, size)) {
                insert(new Entry(miss.key, copy, size));
                puts++;
                return true;
            }
            refused++;
        }
        miss.key.wipe(); // the cache's own copy, never stored
        return false;
    }

    /** Guarded by lock. */
    private boolean admissible(CacheKey key, long ticket, List<SearchHit> result, long size) {
        if (ticket < floor
                || markOf(new Scope(key.tenant, null)) > ticket
                || markOf(new Scope(null, key.collection)) > ticket
                || markOf(new Scope(key.tenant, key.collection)) > ticket) {
            return false;
        }
        if (purging.containsValue(key.tenant)) {
            return false;
        }
        for (BlockedScope b : blocks.values()) {
            if (!b.tenant().equals(key.tenant)) {
                continue;
            }
            if (b.subject() != null && b.subject().equals(key.subject)) {
                return false;
            }
            Set<String> ids = b.recordIds().get(key.collection);
            if (ids != null) {
                for (SearchHit h : result) {
                    if (ids.contains(h.id())) {
                        return false;
                    }
                }
            }
        }
        return size <= maxBytes;
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
            mark(new Scope(tenant, collection));
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
            mark(new Scope(null, collection));
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
            floor = ++epoch;
            marks.clear();
            return evictInvalidated(e -> true);
        }
    }

    /** Guarded by lock. */
    private int evictInvalidated(Predicate<Entry> which) {
        int n = evictWhere(which);
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
            blocks.put(scope.operationId(), scope);
            mark(new Scope(scope.tenant(), null));
            evictedByForget +=
                    evictWhere(
                            e ->
                                    e.key.tenant.equals(scope.tenant())
                                            && ((scope.subject() != null
                                                            && scope.subject()
                                                                    .equals(e.key.subject))
                                                    || holdsAny(
                                                            e,
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
        List<Entry> candidates = new ArrayList<>();
        synchronized (lock) {
            purging.put(forgotten.operationId(), forgotten.tenant());
            mark(new Scope(forgotten.tenant(), null));
            for (Entry e : entries.values()) {
                if (e.key.tenant.equals(forgotten.tenant())) {
                    candidates.add(e);
                }
            }
        }
        Residue rule = new Residue(forgotten, probeThreshold);
        List<Entry> doomed = new ArrayList<>();
        for (Entry e : candidates) {
            if (rule.why(e) != null) {
                doomed.add(e);
            }
        }
        long evicted = 0;
        synchronized (lock) {
            for (Entry e : doomed) {
                if (e.alive
                        && entries.remove(e.key, e)) { // remove(k, v) does not reorder the LRU list
                    drop(e);
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
        List<Entry> all;
        synchronized (lock) {
            all = new ArrayList<>(entries.values());
        }
        Residue rule = new Residue(forgotten, probeThreshold);
        Map<Entry, Reason> found = new LinkedHashMap<>();
        for (Entry e : all) {
            if (e.key.tenant.equals(forgotten.tenant())) {
                Reason why = rule.why(e);
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
        int[] byReason = new int[Reason.values().length];
        found.values().forEach(r -> byReason[r.ordinal()]++);
        List<String> problems = new ArrayList<>();
        if (byReason[Reason.RECORD.ordinal()] > 0) {
            problems.add(
                    byReason[Reason.RECORD.ordinal()] + " cached entries hold a forgotten record");
        }
        if (byReason[Reason.SUBJECT.ordinal()] > 0) {
            problems.add(
                    byReason[Reason.SUBJECT.ordinal()]
                            + " cached entries were asked for the forgotten subject");
        }
        if (byReason[Reason.NEAR_QUERY.ordinal()] > 0) {
            problems.add(
                    byReason[Reason.NEAR_QUERY.ordinal()]
                            + " cached entries have a query at cosine "
                            + probeThreshold
                            + " or above to a forgotten vector");
        }
        return new SurfaceOutcome(NAME, ErasureClass.PHYSICAL, purged, all.size(), problems, null);
    }

    /** Forgets the operation's scope: its records and tenant take new entries again. */
    @Override
    public void release(String operationId) {
        synchronized (lock) {
            blocks.remove(operationId);
            purging.remove(operationId);
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
                    evictedByCapacity,
                    evictedByForget,
                    evictedByInvalidation,
                    entries.size(),
                    bytes);
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
        long size = cost(key, copy);
        synchronized (lock) {
            insert(new Entry(key, copy, size));
        }
    }

    /**
     * Guarded by lock: adds the entry (replacing one with its key), then evicts down to the bounds.
     */
    private void insert(Entry e) {
        Entry old = entries.remove(e.key);
        if (old != null) {
            drop(old);
        }
        entries.put(e.key, e);
        bytes += e.bytes;
        Iterator<Entry> lru = entries.values().iterator();
        while ((entries.size() > maxEntries || bytes > maxBytes) && lru.hasNext()) {
            Entry victim = lru.next();
            if (victim == e) {
                break; // cannot happen while e.bytes <= maxBytes and maxEntries >= 1; never evict
                // what was just put
            }
            lru.remove();
            drop(victim);
            evictedByCapacity++;
        }
    }

    /** Guarded by lock: evicts every entry that passes, returns how many. */
    private int evictWhere(Predicate<Entry> which) {
        int n = 0;
        for (Iterator<Entry> it = entries.values().iterator(); it.hasNext(); ) {
            Entry e = it.next();
            if (which.test(e)) {
                it.remove();
                drop(e);
                n++;
            }
        }
        return n;
    }

    /** Guarded by lock: accounts for an entry removed from the map and zeroes its query. */
    private void drop(Entry e) {
        bytes -= e.bytes;
        e.alive = false;
        e.key.wipe();
    }

    /** Guarded by lock. */
    private void mark(Scope scope) {
        long now = ++epoch;
        if (marks.size() >= MAX_MARKS && !marks.containsKey(scope)) {
            marks.clear();
            floor = now; // at or above every mark dropped
        } else {
            marks.put(scope, now);
        }
    }

    /** Guarded by lock. */
    private long markOf(Scope scope) {
        return marks.getOrDefault(scope, Long.MIN_VALUE);
    }

    private static boolean holdsAny(Entry e, Set<String> ids) {
        if (ids == null || ids.isEmpty()) {
            return false;
        }
        for (SearchHit h : e.hits) {
            if (ids.contains(h.id())) {
                return true;
            }
        }
        return false;
    }

    static long cost(CacheKey key, List<SearchHit> hits) {
        int dim = key.dimension();
        long c = ENTRY_BYTES + 4L * dim + KeyBytes.of(key.subject, key.filter, key.params);
        for (SearchHit h : hits) {
            VectorRecord r = h.record();
            c +=
                    HIT_BYTES
                            + 4L * dim
                            + 2L * r.id().length()
                            + utf8Length(r.text())
                            + METADATA_ENTRY_BYTES * r.metadata().size();
        }
        return c;
    }

    private static long utf8Length(String s) {
        if (s == null) {
            return 0;
        }
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch < 0x80) {
                n += 1;
            } else if (ch < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(ch)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /** A cached result. {@code alive} turns false, under the lock, before the key is zeroed. */
    private static final class Entry {
        final CacheKey key;
        final List<SearchHit> hits;
        final long bytes;
        boolean alive = true; // guarded by lock; read after a lock when checking a snapshot

        Entry(CacheKey key, List<SearchHit> hits, long bytes) {
            this.key = key;
            this.hits = hits;
            this.bytes = bytes;
        }
    }

    /**
     * What an invalidation or a forget covers: a tenant, a collection, or one tenant of one
     * collection.
     */
    private record Scope(String tenant, String collection) {}

    private enum Reason {
        RECORD,
        SUBJECT,
        NEAR_QUERY
    }

    /**
     * The rule shared by purge and verify: why an entry of the operation's tenant serves forgotten
     * data, or null.
     */
    private static final class Residue {
        private final Map<String, Set<String>> idsByCollection = new HashMap<>();
        private final List<float[]> vectors = new ArrayList<>();
        private final String subject;
        private final double threshold;
        private final VectorKernels kernels = Kernels.get();

        Residue(ForgottenRecords forgotten, double threshold) {
            this.subject = forgotten.subject();
            this.threshold = threshold;
            for (ForgottenRecords.Item i : forgotten.items()) {
                idsByCollection
                        .computeIfAbsent(i.collection(), c -> new HashSet<>())
                        .add(i.recordId());
                if (i.vector() != null) {
                    vectors.add(i.vector()); // the store's copy, zeroed by the store after the call
                }
            }
        }

        Reason why(Entry e) {
            if (holdsAny(e, idsByCollection.get(e.key.collection))) {
                return Reason.RECORD;
            }
            if (subject != null && subject.equals(e.key.subject)) {
                return Reason.SUBJECT;
            }
            float[] q = e.key.vector;
            for (float[] v : vectors) {
                // cosine is 0 for a zero vector (a wiped key, a zeroed probe): never near.
                if (v.length == q.length && kernels.cosine(q, v) >= threshold) {
                    return Reason.NEAR_QUERY;
                }
            }
            return null;
        }
    }
}
