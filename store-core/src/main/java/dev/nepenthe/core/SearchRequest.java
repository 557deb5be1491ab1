package dev.nepenthe.core;

import dev.nepenthe.core.index.SearchParams;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;

/**
 * A query within one tenant, optionally narrowed to a subject and a metadata filter: by vector (k
 * nearest neighbours), by keyword (BM25 over the collection's text index), or both fused (hybrid).
 * Index knobs (efSearch, nprobe, rerank, and the fusion's {@code window} and {@code rrfK}) ride
 * along in {@link #params()}.
 *
 * <p>A vector query may carry text instead of a vector: the collection's embedder turns it into
 * one. A hybrid query runs both searches, each for {@code window} candidates (default {@value
 * #DEFAULT_WINDOW}, at least k), and fuses them by reciprocal rank fusion: a record's score is the
 * sum over the lists it appears in of {@code 1 / (rrfK + rank)}, ranks counted from 1, {@code rrfK}
 * = {@value #DEFAULT_RRF_K} unless set (the constant of Cormack, Clarke and Büttcher's paper, which
 * damps the weight of the very top ranks so that a record both lists rank well beats one only a
 * single list ranks first). A record found by both lists scores higher than one found by either at
 * the same ranks.
 *
 * <p>{@link #of} copies the query vector; the canonical constructor keeps the array it is given,
 * and the methods that derive one request from another share it, so a caller must not change that
 * array while a search runs.
 *
 * @param vector the query vector, or null when the text is to be embedded (vector and hybrid modes)
 *     or the search is by keyword only; the collection checks its dimension and values
 * @param text the query text: keywords for BM25 (keyword and hybrid modes), or what the
 *     collection's embedder embeds when there is no vector; null for a vector-only query
 * @param mode vector, keyword or hybrid
 * @param k how many hits to return at most, 1 to {@value #MAX_K}
 * @param tenant the tenant searched; a search never sees another tenant's records
 * @param subject only this subject's records, or null for every subject
 * @param filter a metadata predicate the hits must pass, or null for none
 * @param params per-query knobs; indexes ignore names they do not know
 */
@SuppressWarnings("ArrayRecordComponent") // equals and hashCode below compare the vector's content
public record SearchRequest(
        float[] vector,
        String text,
        Mode mode,
        int k,
        String tenant,
        String subject,
        Filter filter,
        SearchParams params) {

    /** Upper bound on k: a larger k is a scan, not a search. */
    public static final int MAX_K = 10_000;

    /** Longest query text, in characters. */
    public static final int MAX_TEXT = 64 * 1024;

    /**
     * Candidates each list contributes to a hybrid fusion, unless {@code window} is set (at least
     * k).
     */
    public static final int DEFAULT_WINDOW = 100;

    /** The reciprocal rank fusion constant, unless {@code rrfK} is set. */
    public static final int DEFAULT_RRF_K = 60;

    /** What a request searches by. */
    public enum Mode {
        /** k nearest neighbours of the vector (or of the text's embedding). */
        VECTOR,
        /** BM25 over the collection's text index; needs text. */
        KEYWORD,
        /** Both, fused by reciprocal rank fusion; needs text, and a vector or an embedder. */
        HYBRID
    }

    /**
     * Checks what can be checked without a collection.
     *
     * @throws IllegalArgumentException if k is not within 1 to {@value #MAX_K}, the text is blank
     *     or longer than {@value #MAX_TEXT} characters, or the mode lacks what it needs (keyword
     *     and hybrid need text; vector needs a vector or text)
     * @throws NullPointerException if the mode, the tenant or the params are null
     */
    public SearchRequest {
        Objects.requireNonNull(mode, "search mode must not be null");
        Objects.requireNonNull(tenant, "tenant must not be null");
        Objects.requireNonNull(params, "params must not be null");
        if (k <= 0 || k > MAX_K) {
            throw new IllegalArgumentException("k: expected 1 to " + MAX_K + ", got " + k);
        }
        if (text != null && (text.isBlank() || text.length() > MAX_TEXT)) {
            throw new IllegalArgumentException(
                    "query text: expected 1 to "
                            + MAX_TEXT
                            + " characters, not all blank,"
                            + " got "
                            + (text.isBlank() ? "a blank string" : text.length() + " characters"));
        }
        if (mode == Mode.VECTOR && vector == null && text == null) {
            throw new NullPointerException(
                    "query vector must not be null (or give text for the collection's embedder)");
        }
        if (mode != Mode.VECTOR && text == null) {
            throw new IllegalArgumentException(
                    mode.name().toLowerCase(Locale.ROOT)
                            + " search: expected query text, got none");
        }
    }

    /**
     * A vector query (the form before text search existed).
     *
     * @param vector the query; the collection checks its dimension and values when searching
     * @param k how many hits to return at most, 1 to {@value #MAX_K}
     * @param tenant the tenant searched
     * @param subject only this subject's records, or null for every subject
     * @param filter a metadata predicate the hits must pass, or null for none
     * @param params per-query index knobs
     * @throws IllegalArgumentException if k is out of range
     * @throws NullPointerException if the vector, the tenant or the params are null
     */
    public SearchRequest(
            float[] vector,
            int k,
            String tenant,
            String subject,
            Filter filter,
            SearchParams params) {
        this(
                Objects.requireNonNull(vector, "query vector must not be null"),
                null,
                Mode.VECTOR,
                k,
                tenant,
                subject,
                filter,
                params);
    }

    /**
     * A query for the k nearest records of the default tenant, with no subject, no filter and the
     * index's default knobs.
     *
     * @param vector the query (copied)
     * @param k how many hits to return at most, 1 to {@value #MAX_K}
     * @return the request
     * @throws IllegalArgumentException if k is out of range
     */
    public static SearchRequest of(float[] vector, int k) {
        return new SearchRequest(
                vector.clone(),
                null,
                Mode.VECTOR,
                k,
                VectorRecord.DEFAULT_TENANT,
                null,
                null,
                SearchParams.DEFAULTS);
    }

    /**
     * The k records nearest in meaning to a text: the collection's embedder embeds it, then a
     * vector search runs (default tenant, no subject or filter).
     *
     * @param text the text (a question, a phrase)
     * @param k how many hits to return at most
     * @return the request
     * @throws IllegalArgumentException if k is out of range or the text blank or too long
     */
    public static SearchRequest semantic(String text, int k) {
        return new SearchRequest(
                null,
                Objects.requireNonNull(text, "query text"),
                Mode.VECTOR,
                k,
                VectorRecord.DEFAULT_TENANT,
                null,
                null,
                SearchParams.DEFAULTS);
    }

    /**
     * The k records whose text best matches the query's terms by BM25 (the collection's text index;
     * default tenant, no subject or filter). The query is analysed as the records' text is, and a
     * record matching any term qualifies; no query syntax is interpreted.
     *
     * @param text the keywords
     * @param k how many hits to return at most
     * @return the request
     * @throws IllegalArgumentException if k is out of range or the text blank or too long
     */
    public static SearchRequest keyword(String text, int k) {
        return new SearchRequest(
                null,
                Objects.requireNonNull(text, "query text"),
                Mode.KEYWORD,
                k,
                VectorRecord.DEFAULT_TENANT,
                null,
                null,
                SearchParams.DEFAULTS);
    }

    /**
     * Keyword and semantic search fused: the text is searched by BM25 and, embedded by the
     * collection's embedder, by vector; see the class comment for the fusion.
     *
     * @param text the query text
     * @param k how many hits to return at most
     * @return the request
     * @throws IllegalArgumentException if k is out of range or the text blank or too long
     */
    public static SearchRequest hybrid(String text, int k) {
        return new SearchRequest(
                null,
                Objects.requireNonNull(text, "query text"),
                Mode.HYBRID,
                k,
                VectorRecord.DEFAULT_TENANT,
                null,
                null,
                SearchParams.DEFAULTS);
    }

    /**
     * This request with a query vector of the caller's (copied): a hybrid request then uses it
     * instead of embedding its text.
     *
     * @param v the vector
     * @return a new request
     */
    public SearchRequest vector(float[] v) {
        return new SearchRequest(
                v == null ? null : v.clone(), text, mode, k, tenant, subject, filter, params);
    }

    /**
     * This request in another tenant.
     *
     * @param t the tenant to search
     * @return a new request
     */
    public SearchRequest tenant(String t) {
        return new SearchRequest(vector, text, mode, k, t, subject, filter, params);
    }

    /**
     * This request narrowed to one subject's records (uses the subject's bitmap, so it costs less
     * than a metadata filter).
     *
     * @param s the subject, or null for every subject
     * @return a new request
     */
    public SearchRequest subject(String s) {
        return new SearchRequest(vector, text, mode, k, tenant, s, filter, params);
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
        return new SearchRequest(vector, text, mode, k, tenant, subject, f, params);
    }

    /**
     * This request with one knob set ({@code efSearch}, {@code nprobe}, {@code rerank}, {@code
     * window}, {@code rrfK}).
     *
     * @param name the knob's name
     * @param value its value; an index refuses a value out of its range when the search runs
     *     (IllegalArgumentException), not here
     * @return a new request
     */
    public SearchRequest param(String name, int value) {
        return new SearchRequest(
                vector, text, mode, k, tenant, subject, filter, params.with(name, value));
    }

    /**
     * Equal when every field is, the vector element by element.
     *
     * @param o the object to compare with
     * @return whether {@code o} is an equal request
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof SearchRequest r
                && Arrays.equals(vector, r.vector)
                && Objects.equals(text, r.text)
                && mode == r.mode
                && k == r.k
                && tenant.equals(r.tenant)
                && Objects.equals(subject, r.subject)
                && Objects.equals(filter, r.filter)
                && params.equals(r.params);
    }

    /**
     * A hash of every field, the vector's elements included.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        return Objects.hash(
                Arrays.hashCode(vector), text, mode, k, tenant, subject, filter, params);
    }

    /**
     * Content-free, as records are: the query may be personal.
     *
     * @return the mode, k, whether there is a vector and text, and whether a subject or filter
     *     narrows it
     */
    @Override
    public String toString() {
        return "SearchRequest[mode="
                + mode
                + ", k="
                + k
                + ", vector="
                + (vector != null)
                + ", text="
                + (text != null)
                + ", subject="
                + (subject != null)
                + ", filter="
                + (filter != null)
                + "]";
    }
}
