package dev.nepenthe.cache;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.index.SearchParams;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a cached result is found by: the collection and every field of the {@link SearchRequest}
 * that can change its hits (tenant, subject, filter, k, index knobs) and the query vector bit for
 * bit ({@link Arrays#equals(float[], float[])}: {@code 0.0f} and {@code -0.0f} differ, NaNs are
 * refused by the search anyway). The hash is computed once.
 *
 * <p>A key built for a lookup reads the caller's array in place and is never stored; a key that
 * goes into the cache holds a copy of its own ({@link #ownCopy}), which the cache zeroes when it
 * evicts the entry ({@link #wipe}).
 */
final class CacheKey {

    final String collection;
    final String tenant;
    final String subject;
    final Filter filter;
    final int k;
    final SearchParams params;
    final float[] vector;
    private final int hash;

    CacheKey(String collection, SearchRequest request) {
        this(
                collection,
                request.tenant(),
                request.subject(),
                request.filter(),
                request.k(),
                request.params(),
                request.vector(),
                hash(collection, request));
    }

    private CacheKey(
            String collection,
            String tenant,
            String subject,
            Filter filter,
            int k,
            SearchParams params,
            float[] vector,
            int hash) {
        this.collection = Objects.requireNonNull(collection, "collection name must not be null");
        this.tenant = tenant;
        this.subject = subject;
        this.filter = filter;
        this.k = k;
        this.params = params;
        this.vector = vector;
        this.hash = hash;
    }

    private static int hash(String collection, SearchRequest r) {
        int h = Objects.hash(collection, r.tenant(), r.subject(), r.filter(), r.k(), r.params());
        return 31 * h + Arrays.hashCode(r.vector());
    }

    /**
     * The same key over a copy of the vector: what the cache stores, so no caller's array is kept.
     */
    CacheKey ownCopy() {
        return new CacheKey(collection, tenant, subject, filter, k, params, vector.clone(), hash);
    }

    /** Zeroes the vector; only for a key the cache owns and no longer holds in its map. */
    void wipe() {
        Arrays.fill(vector, 0f);
    }

    int dimension() {
        return vector.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CacheKey c
                && hash == c.hash
                && k == c.k
                && collection.equals(c.collection)
                && tenant.equals(c.tenant)
                && Objects.equals(subject, c.subject)
                && Objects.equals(filter, c.filter)
                && params.equals(c.params)
                && Arrays.equals(vector, c.vector);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** Content-free, like {@code VectorRecord}'s: no tenant, subject, filter values or vector. */
    @Override
    public String toString() {
        return "CacheKey[collection="
                + collection
                + ", dimension="
                + vector.length
                + ", k="
                + k
                + "]";
    }
}
