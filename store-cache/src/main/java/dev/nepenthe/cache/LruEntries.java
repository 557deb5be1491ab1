package dev.nepenthe.cache;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Predicate;

/**
 * The cache's entries in access order, held within an entry bound and a byte bound by evicting the
 * least recently used. Apart from {@link QueryCache} so the bookkeeping every removal must do
 * (bytes, the entry's liveness, zeroing its query) is written once. Not safe for concurrent use:
 * the cache's lock guards every call.
 */
final class LruEntries {
    private final int maxEntries;
    private final long maxBytes;

    /** Access order: the first entry is the least recently used. */
    private final LinkedHashMap<CacheKey, CacheEntry> entries =
            new LinkedHashMap<>(16, 0.75f, true);

    private long bytes;
    private long evictedByCapacity;

    LruEntries(int maxEntries, long maxBytes) {
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
    }

    /** The entry of this key, now the most recently used; or null. */
    CacheEntry get(CacheKey key) {
        return entries.get(key);
    }

    /** Every entry, least recently used first, as a new list. */
    List<CacheEntry> all() {
        return new ArrayList<>(entries.values());
    }

    /** Entries held. */
    int size() {
        return entries.size();
    }

    /** Estimated bytes held. */
    long bytes() {
        return bytes;
    }

    /** Entries evicted for a bound. */
    long evictedByCapacity() {
        return evictedByCapacity;
    }

    /** Adds the entry (replacing one with its key), then evicts down to the bounds. */
    void insert(CacheEntry e) {
        CacheEntry old = entries.remove(e.key);
        if (old != null) {
            drop(old);
        }
        entries.put(e.key, e);
        bytes += e.bytes;
        Iterator<CacheEntry> lru = entries.values().iterator();
        while ((entries.size() > maxEntries || bytes > maxBytes) && lru.hasNext()) {
            CacheEntry victim = lru.next();
            if (victim == e) {
                // Cannot happen while e.bytes <= maxBytes and maxEntries >= 1; never evict what
                // was just put.
                break;
            }
            lru.remove();
            drop(victim);
            evictedByCapacity++;
        }
    }

    /** Evicts the entry if it is still the one held under its key; remove(k, v) keeps the order. */
    boolean evict(CacheEntry e) {
        if (e.alive && entries.remove(e.key, e)) {
            drop(e);
            return true;
        }
        return false;
    }

    /** Evicts every entry that passes, returns how many. */
    int evictWhere(Predicate<CacheEntry> which) {
        int n = 0;
        for (Iterator<CacheEntry> it = entries.values().iterator(); it.hasNext(); ) {
            CacheEntry e = it.next();
            if (which.test(e)) {
                it.remove();
                drop(e);
                n++;
            }
        }
        return n;
    }

    /** Accounts for an entry removed from the map and zeroes its query. */
    private void drop(CacheEntry e) {
        bytes -= e.bytes;
        e.alive = false;
        e.key.wipe();
    }
}
