package dev.nepenthe.core;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A collection's fixed shape: name, vector dimension, metric and index.
 *
 * @param name 1 to 64 characters of letters, digits, '_' and '-' (it names a folder)
 * @param dimension vector length, 1 to {@value #MAX_DIMENSION}
 * @param metric how vectors are compared
 * @param index the index kind and its parameters (checked by the index's factory when the
 *     collection is created, not here)
 * @param provenance what a forget does to records derived from forgotten ones
 */
public record CollectionSpec(String name, int dimension, Metric metric, IndexSpec index, Provenance provenance) {

    /**
     * What a forget does to records derived from forgotten ones (their {@code derivedFrom} names
     * a forgotten record): {@code CASCADE} forgets them in the same operation;
     * {@code REGENERATE} keeps them blocked and lists them, with their surviving sources, for
     * someone to regenerate (the operation waits in NEEDS_REVIEW until they are gone).
     */
    public enum Provenance {
        /** Derived records are forgotten with their sources, in the same operation. */
        CASCADE,
        /** Derived records stay blocked and are listed for regeneration; the operation waits in review. */
        REGENERATE
    }

    /**
     * A collection whose derived records are forgotten with their sources ({@link Provenance#CASCADE}).
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

    /** Longest vector a collection accepts. */
    public static final int MAX_DIMENSION = 16_384;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /**
     * Checks the shape; nothing touches the disk until {@link Nepenthe#createCollection}.
     *
     * @throws IllegalArgumentException if the name or the dimension is out of range, naming both
     *     the rule and the value
     * @throws NullPointerException if the name, metric, index or provenance policy is null
     */
    public CollectionSpec {
        Objects.requireNonNull(name, "collection name");
        Objects.requireNonNull(metric, "metric");
        Objects.requireNonNull(index, "index");
        Objects.requireNonNull(provenance, "provenance policy");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("collection name: expected 1 to 64 characters of letters, digits, "
                    + "'_' or '-', got '" + name + "'");
        }
        if (dimension < 1 || dimension > MAX_DIMENSION) {
            throw new IllegalArgumentException("dimension: expected 1 to " + MAX_DIMENSION + ", got " + dimension);
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
        return new CollectionSpec(name, dimension, metric, index, provenance);
    }

    /**
     * This spec with another provenance policy.
     *
     * @param policy what a forget does to records derived from forgotten ones
     * @return a new spec
     */
    public CollectionSpec withProvenance(Provenance policy) {
        return new CollectionSpec(name, dimension, metric, index, policy);
    }
}
