package dev.nepenthe.core;

import dev.nepenthe.core.index.SearchParams;
import java.util.Objects;

/**
 * A k-nearest-neighbour query within one tenant, optionally narrowed to a subject and a
 * metadata filter. Index knobs (efSearch, nprobe, rerank) ride along in {@link #params()}.
 */
public record SearchRequest(float[] vector, int k, String tenant, String subject, Filter filter,
        SearchParams params) {

    /** Upper bound on k: a larger k is a scan, not a search. */
    public static final int MAX_K = 10_000;

    public SearchRequest {
        Objects.requireNonNull(vector, "query vector must not be null");
        Objects.requireNonNull(tenant, "tenant must not be null");
        Objects.requireNonNull(params, "params must not be null");
        if (k <= 0 || k > MAX_K) {
            throw new IllegalArgumentException("k: expected 1 to " + MAX_K + ", got " + k);
        }
    }

    /** A query for the k nearest records of the default tenant. */
    public static SearchRequest of(float[] vector, int k) {
        return new SearchRequest(vector.clone(), k, VectorRecord.DEFAULT_TENANT, null, null, SearchParams.DEFAULTS);
    }

    public SearchRequest tenant(String t) {
        return new SearchRequest(vector, k, t, subject, filter, params);
    }

    public SearchRequest subject(String s) {
        return new SearchRequest(vector, k, tenant, s, filter, params);
    }

    public SearchRequest filter(Filter f) {
        return new SearchRequest(vector, k, tenant, subject, f, params);
    }

    public SearchRequest param(String name, int value) {
        return new SearchRequest(vector, k, tenant, subject, filter, params.with(name, value));
    }
}
