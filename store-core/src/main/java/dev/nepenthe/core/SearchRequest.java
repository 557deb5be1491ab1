package dev.nepenthe.core;

import dev.nepenthe.core.index.SearchParams;
import java.util.Objects;

/**
 * A k-nearest-neighbour query within one tenant, optionally narrowed to a subject and a
 * metadata filter. Index knobs (efSearch, nprobe, rerank) ride along in {@link #params()}.
 *
 * <p>{@link #of} copies the query vector; the canonical constructor keeps the array it is
 * given, and the methods that derive one request from another share it, so a caller must not
 * change that array while a search runs.
 *
 * @param vector the query; the collection checks its dimension and values when searching
 * @param k how many hits to return at most, 1 to {@value #MAX_K}
 * @param tenant the tenant searched; a search never sees another tenant's records
 * @param subject only this subject's records, or null for every subject
 * @param filter a metadata predicate the hits must pass, or null for none
 * @param params per-query index knobs; indexes ignore names they do not know
 */
public record SearchRequest(float[] vector, int k, String tenant, String subject, Filter filter,
        SearchParams params) {

    /** Upper bound on k: a larger k is a scan, not a search. */
    public static final int MAX_K = 10_000;

    /**
     * Checks what can be checked without a collection.
     *
     * @throws IllegalArgumentException if k is not within 1 to {@value #MAX_K}
     * @throws NullPointerException if the vector, the tenant or the params are null
     */
    public SearchRequest {
        Objects.requireNonNull(vector, "query vector must not be null");
        Objects.requireNonNull(tenant, "tenant must not be null");
        Objects.requireNonNull(params, "params must not be null");
        if (k <= 0 || k > MAX_K) {
            throw new IllegalArgumentException("k: expected 1 to " + MAX_K + ", got " + k);
        }
    }

    /**
     * A query for the k nearest records of the default tenant, with no subject, no filter and
     * the index's default knobs.
     *
     * @param vector the query (copied)
     * @param k how many hits to return at most, 1 to {@value #MAX_K}
     * @return the request
     * @throws IllegalArgumentException if k is out of range
     */
    public static SearchRequest of(float[] vector, int k) {
        return new SearchRequest(vector.clone(), k, VectorRecord.DEFAULT_TENANT, null, null, SearchParams.DEFAULTS);
    }

    /**
     * This request in another tenant.
     *
     * @param t the tenant to search
     * @return a new request
     */
    public SearchRequest tenant(String t) {
        return new SearchRequest(vector, k, t, subject, filter, params);
    }

    /**
     * This request narrowed to one subject's records (uses the subject's bitmap, so it costs
     * less than a metadata filter).
     *
     * @param s the subject, or null for every subject
     * @return a new request
     */
    public SearchRequest subject(String s) {
        return new SearchRequest(vector, k, tenant, s, filter, params);
    }

    /**
     * This request with a metadata filter, which replaces any earlier one (combine filters with
     * {@link Filter#and}). A filter costs a pass over the tenant's (or subject's) records per
     * search, to build the candidate set the index may return.
     *
     * @param f the filter, or null for none
     * @return a new request
     */
    public SearchRequest filter(Filter f) {
        return new SearchRequest(vector, k, tenant, subject, f, params);
    }

    /**
     * This request with one index knob set ({@code efSearch}, {@code nprobe}, {@code rerank}).
     *
     * @param name the knob's name
     * @param value its value; an index refuses a value out of its range when the search runs
     *     (IllegalArgumentException), not here
     * @return a new request
     */
    public SearchRequest param(String name, int value) {
        return new SearchRequest(vector, k, tenant, subject, filter, params.with(name, value));
    }
}
