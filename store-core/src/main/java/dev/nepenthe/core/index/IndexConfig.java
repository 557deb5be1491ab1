package dev.nepenthe.core.index;

import dev.nepenthe.core.Metric;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a factory needs to build an index: dimension, metric, the kind-specific parameters as
 * strings (as a user or a config file gives them) and a seed for every random choice.
 */
public record IndexConfig(int dimension, Metric metric, Map<String, String> params, long seed) {

    public IndexConfig {
        if (dimension <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dimension);
        }
        Objects.requireNonNull(metric, "metric");
        params = Map.copyOf(params == null ? Map.of() : params);
    }

    public IndexConfig(int dimension, Metric metric) {
        this(dimension, metric, Map.of(), 42L);
    }

    /** Fails if a parameter name is not among {@code known}, listing the accepted names. */
    public void requireKnown(String kind, Set<String> known) {
        for (String name : params.keySet()) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException(kind + " index: unknown parameter '" + name
                        + "'; expected one of " + new TreeSet<>(known));
            }
        }
    }

    /** An int parameter within [min, max], or {@code dflt} when absent. */
    public int intParam(String kind, String name, int dflt, int min, int max) {
        String raw = params.get(name);
        if (raw == null) {
            return dflt;
        }
        int v;
        try {
            v = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(kind + " index: parameter '" + name
                    + "' expected an integer in [" + min + ", " + max + "], got '" + raw + "'");
        }
        if (v < min || v > max) {
            throw new IllegalArgumentException(kind + " index: parameter '" + name
                    + "' expected an integer in [" + min + ", " + max + "], got " + v);
        }
        return v;
    }

    /** A double parameter within [min, max], or {@code dflt} when absent. */
    public double doubleParam(String kind, String name, double dflt, double min, double max) {
        String raw = params.get(name);
        if (raw == null) {
            return dflt;
        }
        double v;
        try {
            v = Double.parseDouble(raw.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(kind + " index: parameter '" + name
                    + "' expected a number in [" + min + ", " + max + "], got '" + raw + "'");
        }
        if (!(v >= min && v <= max)) {
            throw new IllegalArgumentException(kind + " index: parameter '" + name
                    + "' expected a number in [" + min + ", " + max + "], got " + v);
        }
        return v;
    }
}
