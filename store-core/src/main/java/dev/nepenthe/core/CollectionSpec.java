package dev.nepenthe.core;

import dev.nepenthe.core.internal.text.Analyzers;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A collection's fixed shape: name, vector dimension, metric and index, what a forget does to
 * derived records, and optionally a text index, an embedder and the metadata keys that identify a
 * record's subject.
 *
 * @param name 1 to 64 characters of letters, digits, '_' and '-' (it names a folder)
 * @param dimension vector length, 1 to {@value #MAX_DIMENSION}
 * @param metric how vectors are compared
 * @param index the index kind and its parameters (checked by the index's factory when the
 *     collection is created, not here)
 * @param provenance what a forget does to records derived from forgotten ones
 * @param textAnalyzer the analyzer of the collection's text index (BM25 keyword and hybrid search
 *     over record text), one of {@link #TEXT_ANALYZERS}; null for no text index
 * @param embedder the {@link dev.nepenthe.core.embed.Embedder#name() name} of the embedder that
 *     turns text into vectors for records stored without one and for text queries; null for none
 *     (records then need vectors, and queries too)
 * @param subjectIdentifiers metadata keys whose string values identify a record's subject (a name,
 *     an email, a phone number): a forget of a subject reads them from the subject's own records
 *     before they go and looks for them in every surviving record of the tenant, as if the request
 *     had declared them (docs/FORGET.md, "Declared identifiers"); empty for none
 */
public record CollectionSpec(
        String name,
        int dimension,
        Metric metric,
        IndexSpec index,
        Provenance provenance,
        String textAnalyzer,
        String embedder,
        List<String> subjectIdentifiers) {

    /**
     * The analyzers a text index may use (from Lucene): {@code standard} (Unicode word breaks,
     * lower case), {@code english} (that, English stop words removed and Porter stemming), {@code
     * simple}, {@code whitespace}, and stemming analyzers for {@code german}, {@code french},
     * {@code spanish}, {@code italian}, {@code portuguese} and {@code dutch}.
     */
    public static final Set<String> TEXT_ANALYZERS = Analyzers.names();

    /**
     * What a forget does to records derived from forgotten ones (their {@code derivedFrom} names a
     * forgotten record): {@code CASCADE} forgets them in the same operation; {@code REGENERATE}
     * keeps them blocked and lists them, with their surviving sources, for someone to regenerate
     * (the operation waits in NEEDS_REVIEW until they are gone).
     */
    public enum Provenance {
        /** Derived records are forgotten with their sources, in the same operation. */
        CASCADE,
        /**
         * Derived records stay blocked and are listed for regeneration; the operation waits in
         * review.
         */
        REGENERATE
    }

    /**
     * A collection whose derived records are forgotten with their sources ({@link
     * Provenance#CASCADE}).
     *
     * @param name 1 to 64 characters of letters, digits, '_' and '-'
     * @param dimension vector length, 1 to {@value #MAX_DIMENSION}
     * @param metric how vectors are compared
     * @param index the index kind and its parameters
     * @throws IllegalArgumentException if the name or the dimension is out of range
     * @throws NullPointerException if the name, metric or index is null
     */
    public CollectionSpec(String name, int dimension, Metric metric, IndexSpec index) {
        this(name, dimension, metric, index, Provenance.CASCADE);
    }

    /**
     * A collection with no text index and no embedder.
     *
     * @param name 1 to 64 characters of letters, digits, '_' and '-'
     * @param dimension vector length, 1 to {@value #MAX_DIMENSION}
     * @param metric how vectors are compared
     * @param index the index kind and its parameters
     * @param provenance what a forget does to records derived from forgotten ones
     * @throws IllegalArgumentException if the name or the dimension is out of range
     * @throws NullPointerException if the name, metric, index or provenance policy is null
     */
    public CollectionSpec(
            String name, int dimension, Metric metric, IndexSpec index, Provenance provenance) {
        this(name, dimension, metric, index, provenance, null, null, List.of());
    }

    /** Most metadata keys a collection may declare as subject identifiers. */
    public static final int MAX_SUBJECT_IDENTIFIERS = 16;

    /** Longest metadata key a record may carry, so the longest a declaration may name. */
    private static final int MAX_KEY_CHARS = 128;

    /** Longest vector a collection accepts. */
    public static final int MAX_DIMENSION = 16_384;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern EMBEDDER_NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    /**
     * Checks the shape; nothing touches the disk until {@link Nepenthe#createCollection}.
     *
     * @throws IllegalArgumentException if the name or the dimension is out of range, the analyzer
     *     unknown, the embedder's name malformed or a subject identifier key blank, too long or
     *     repeated, naming both the rule and the value
     * @throws NullPointerException if the name, metric, index, provenance policy or identifier list
     *     (or a key in it) is null
     */
    public CollectionSpec {
        Objects.requireNonNull(name, "collection name");
        Objects.requireNonNull(metric, "metric");
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(provenance, "provenance policy");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "collection name: expected 1 to 64 characters of letters, digits, "
                            + "'_' or '-', got '"
                            + name
                            + "'");
        }
        if (dimension < 1 || dimension > MAX_DIMENSION) {
            throw new IllegalArgumentException(
                    "dimension: expected 1 to " + MAX_DIMENSION + ", got " + dimension);
        }
        if (textAnalyzer != null && !TEXT_ANALYZERS.contains(textAnalyzer)) {
            throw new IllegalArgumentException(
                    "text analyzer: expected one of "
                            + TEXT_ANALYZERS
                            + ", got '"
                            + textAnalyzer
                            + "'");
        }
        if (embedder != null && !EMBEDDER_NAME.matcher(embedder).matches()) {
            throw new IllegalArgumentException(
                    "embedder name: expected 1 to 64 characters of letters, digits, '.', '_'"
                            + " or '-', got '"
                            + embedder
                            + "'");
        }
        subjectIdentifiers =
                List.copyOf(Objects.requireNonNull(subjectIdentifiers, "subject identifier keys"));
        if (subjectIdentifiers.size() > MAX_SUBJECT_IDENTIFIERS) {
            throw new IllegalArgumentException(
                    "subject identifier keys: expected at most "
                            + MAX_SUBJECT_IDENTIFIERS
                            + ", got "
                            + subjectIdentifiers.size());
        }
        Set<String> seen = new HashSet<>();
        for (String key : subjectIdentifiers) {
            // A key is a schema name, not subject data: messages may quote it.
            if (key.isBlank() || key.length() > MAX_KEY_CHARS) {
                throw new IllegalArgumentException(
                        "subject identifier key: expected a metadata key of 1 to "
                                + MAX_KEY_CHARS
                                + " characters, not blank, got '"
                                + key
                                + "'");
            }
            if (!seen.add(key)) {
                throw new IllegalArgumentException(
                        "subject identifier keys: expected distinct keys, got '" + key + "' twice");
            }
        }
    }

    /**
     * A collection with the exact index and the {@link Provenance#CASCADE} policy.
     *
     * @param name 1 to 64 characters of letters, digits, '_' and '-'
     * @param dimension vector length, 1 to {@value #MAX_DIMENSION}
     * @param metric how vectors are compared
     * @return the spec
     * @throws IllegalArgumentException if the name or the dimension is out of range
     */
    public static CollectionSpec of(String name, int dimension, Metric metric) {
        return new CollectionSpec(name, dimension, metric, IndexSpec.exact());
    }

    /**
     * This spec with another index; its parameters are checked when the collection is created.
     *
     * @param index the index kind and its parameters
     * @return a new spec
     */
    public CollectionSpec withIndex(IndexSpec index) {
        return with(o -> o.index = index);
    }

    /**
     * This spec with a text index over record text, for keyword (BM25) and hybrid search.
     *
     * @param analyzer one of {@link #TEXT_ANALYZERS}, or null for no text index
     * @return a new spec
     * @throws IllegalArgumentException if the analyzer is unknown
     */
    public CollectionSpec withTextIndex(String analyzer) {
        return with(o -> o.textAnalyzer = analyzer);
    }

    /**
     * This spec with an embedder: records stored with text and no vector, and text queries, are
     * embedded by the store's embedder of this name, whose dimension must be this spec's.
     *
     * @param embedderName the embedder's {@link dev.nepenthe.core.embed.Embedder#name() name}, or
     *     null for none
     * @return a new spec
     * @throws IllegalArgumentException if the name is malformed
     */
    public CollectionSpec withEmbedder(String embedderName) {
        return with(o -> o.embedder = embedderName);
    }

    /**
     * This spec with another provenance policy.
     *
     * @param policy what a forget does to records derived from forgotten ones
     * @return a new spec
     */
    public CollectionSpec withProvenance(Provenance policy) {
        return with(o -> o.provenance = policy);
    }

    /**
     * This spec with metadata keys that identify a record's subject: when a subject is forgotten,
     * the string values its records hold under these keys (its name, email, phone number) are read
     * before the records go and looked for in the metadata and text of every surviving record of
     * the tenant, in every collection, so that a survivor naming the subject (an emergency contact,
     * a "reported by") is a suspect without the request repeating them. Costs, on such a forget, a
     * scan of the tenant's surviving records, as declared identifiers do.
     *
     * @param keys metadata keys, at most {@value #MAX_SUBJECT_IDENTIFIERS}, distinct, 1 to 128
     *     characters; none to declare none
     * @return a new spec
     * @throws IllegalArgumentException if a key is blank, too long or repeated, or there are too
     *     many
     */
    public CollectionSpec withSubjectIdentifiers(String... keys) {
        return with(o -> o.subjectIdentifiers = List.of(keys));
    }

    /** A copy of this spec with {@code change} made: the one place the withers list it. */
    private CollectionSpec with(Consumer<Copy> change) {
        Copy o = new Copy(this);
        change.accept(o);
        return new CollectionSpec(
                o.name,
                o.dimension,
                o.metric,
                o.index,
                o.provenance,
                o.textAnalyzer,
                o.embedder,
                o.subjectIdentifiers);
    }

    /** The components of a copy being made, changed by a wither before the copy is checked. */
    private static final class Copy {
        String name;
        int dimension;
        Metric metric;
        IndexSpec index;
        Provenance provenance;
        String textAnalyzer;
        String embedder;
        List<String> subjectIdentifiers;

        Copy(CollectionSpec from) {
            name = from.name;
            dimension = from.dimension;
            metric = from.metric;
            index = from.index;
            provenance = from.provenance;
            textAnalyzer = from.textAnalyzer;
            embedder = from.embedder;
            subjectIdentifiers = from.subjectIdentifiers;
        }
    }
}
