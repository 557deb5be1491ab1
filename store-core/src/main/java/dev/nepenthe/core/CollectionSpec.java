package dev.nepenthe.core;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A collection's fixed shape: name, vector dimension, metric and index.
 *
 * @param name 1 to 64 characters of letters, digits, '_' and '-' (it names a folder)
 * @param dimension vector length, 1 to {@value #MAX_DIMENSION}
 */
public record CollectionSpec(String name, int dimension, Metric metric, IndexSpec index, Provenance provenance) {

    /**
     * What a forget does to records derived from forgotten ones (their {@code derivedFrom} names
     * a forgotten record): {@code CASCADE} forgets them in the same operation;
     * {@code REGENERATE} keeps them blocked and lists them, with their surviving sources, for
     * someone to regenerate (the operation waits in NEEDS_REVIEW until they are gone).
     */
    public enum Provenance {
        CASCADE, REGENERATE
    }

    /** A collection whose derived records are forgotten with their sources. */
    public CollectionSpec(String name, int dimension, Metric metric, IndexSpec index) {
        this(name, dimension, metric, index, Provenance.CASCADE);
    }

    public static final int MAX_DIMENSION = 16_384;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

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

    /** A collection with the exact index. */
    public static CollectionSpec of(String name, int dimension, Metric metric) {
        return new CollectionSpec(name, dimension, metric, IndexSpec.exact());
    }

    public CollectionSpec withIndex(IndexSpec index) {
        return new CollectionSpec(name, dimension, metric, index, provenance);
    }

    public CollectionSpec withProvenance(Provenance policy) {
        return new CollectionSpec(name, dimension, metric, index, policy);
    }
}
