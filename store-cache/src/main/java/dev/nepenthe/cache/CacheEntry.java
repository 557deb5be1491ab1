package dev.nepenthe.cache;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.VectorRecord;
import java.util.List;
import java.util.Set;

/**
 * A cached result and what it is estimated to cost (see {@link QueryCache}'s class comment for the
 * cost model). Apart from {@link QueryCache} so that the eviction order ({@link LruEntries}) and
 * the forget rule ({@link ForgetResidue}) can see an entry without seeing the whole cache. {@code
 * alive} turns false, under the cache's lock, before the key is zeroed.
 */
final class CacheEntry {
    final CacheKey key;
    final List<SearchHit> hits;
    final long bytes;
    boolean alive = true; // guarded by the cache's lock; read after a lock when checking a snapshot

    CacheEntry(CacheKey key, List<SearchHit> hits, long bytes) {
        this.key = key;
        this.hits = hits;
        this.bytes = bytes;
    }

    /**
     * Whether one of the entry's hits has one of these ids.
     *
     * @param ids record ids of the entry's collection, or null
     * @return true if a hit is among them
     */
    boolean holdsAny(Set<String> ids) {
        if (ids == null || ids.isEmpty()) {
            return false;
        }
        for (SearchHit h : hits) {
            if (ids.contains(h.id())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The estimated heap an entry of this key and these hits keeps reachable.
     *
     * @param key the key
     * @param hits the hits
     * @return the estimate, in bytes
     */
    static long cost(CacheKey key, List<SearchHit> hits) {
        int dim = key.dimension();
        long c =
                QueryCache.ENTRY_BYTES
                        + 4L * dim
                        + KeyBytes.of(key.subject, key.filter, key.params);
        for (SearchHit h : hits) {
            VectorRecord r = h.record();
            c +=
                    QueryCache.HIT_BYTES
                            + 4L * dim
                            + 2L * r.id().length()
                            + utf8Length(r.text())
                            + QueryCache.METADATA_ENTRY_BYTES * r.metadata().size();
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
}
