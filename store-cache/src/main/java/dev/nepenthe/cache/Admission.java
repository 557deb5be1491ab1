package dev.nepenthe.cache;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.forget.BlockedScope;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a search result must pass before the cache stores it: no block, purge or invalidation of its
 * scope since its lookup (tickets and marks), no purge of its tenant awaiting release, no record or
 * subject of an unreleased forget. Apart from {@link QueryCache} because this is the part that
 * keeps a forget's records out of the cache while the forget runs, and it reads better alone. Not
 * safe for concurrent use: the cache's lock guards every call.
 */
final class Admission {

    /**
     * Most scopes whose last mark is remembered; past it the marks are dropped and every result
     * looked up before is refused (a floor), so invalidating many tenants cannot grow the cache's
     * memory without bound.
     */
    static final int MAX_MARKS = 4096;

    /**
     * What an invalidation or a forget covers: a tenant, a collection, or one tenant of one
     * collection.
     */
    record Scope(String tenant, String collection) {}

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

    /** A miss's ticket: the epoch now. */
    long ticket() {
        return epoch;
    }

    /** Refuses results of the scope looked up before now. */
    void mark(Scope scope) {
        long now = ++epoch;
        if (marks.size() >= MAX_MARKS && !marks.containsKey(scope)) {
            marks.clear();
            floor = now; // at or above every mark dropped
        } else {
            marks.put(scope, now);
        }
    }

    /** Refuses every result looked up before now. */
    void markAll() {
        floor = ++epoch;
        marks.clear();
    }

    /** Remembers a forget's blocked scope until {@link #release}, and marks its tenant. */
    void block(BlockedScope scope) {
        blocks.put(scope.operationId(), scope);
        mark(new Scope(scope.tenant(), null));
    }

    /** Takes no new entries in the tenant until {@link #release}, and marks it. */
    void purging(String operationId, String tenant) {
        purging.put(operationId, tenant);
        mark(new Scope(tenant, null));
    }

    /** Forgets the operation's scope: its records and tenant take new entries again. */
    void release(String operationId) {
        blocks.remove(operationId);
        purging.remove(operationId);
    }

    /**
     * Whether a result looked up with this ticket may be stored.
     *
     * @param key the query
     * @param ticket the lookup's ticket
     * @param result the hits
     * @return false if anything since the lookup makes it unsafe to serve
     */
    boolean admits(CacheKey key, long ticket, List<SearchHit> result) {
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
        return true;
    }

    private long markOf(Scope scope) {
        return marks.getOrDefault(scope, Long.MIN_VALUE);
    }
}
