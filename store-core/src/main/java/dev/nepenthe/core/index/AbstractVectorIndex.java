package dev.nepenthe.core.index;

import dev.nepenthe.core.Metric;
import java.util.Objects;

/**
 * The part of a {@link VectorIndex} that every index has the same way: its kind, dimension and
 * metric, checked once when it is built. Extending it is optional; it exists so that the exact,
 * HNSW and IVF-PQ indexes (and a third party's) check their shape with the same words instead of
 * each keeping its own copy.
 */
public abstract class AbstractVectorIndex implements VectorIndex {
    private final String kind;
    private final int dimension;
    private final Metric metric;

    /**
     * Checks and keeps the shape.
     *
     * @param kind the kind the index's factory registers (see {@link VectorIndexFactory#kind()})
     * @param dimension the vectors' length, above 0
     * @param metric how the index scores
     * @throws IllegalArgumentException if the dimension is 0 or less
     * @throws NullPointerException if the kind or the metric is null
     */
    protected AbstractVectorIndex(String kind, int dimension, Metric metric) {
        this.kind = Objects.requireNonNull(kind, "kind");
        if (dimension <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dimension);
        }
        this.dimension = dimension;
        this.metric = Objects.requireNonNull(metric, "metric");
    }

    @Override
    public final String kind() {
        return kind;
    }

    @Override
    public final int dimension() {
        return dimension;
    }

    @Override
    public final Metric metric() {
        return metric;
    }
}
