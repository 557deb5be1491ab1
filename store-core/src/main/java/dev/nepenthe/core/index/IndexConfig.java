package dev.nepenthe.core.index;

import dev.nepenthe.core.Metric;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a factory needs to build an index: dimension, metric, the kind-specific parameters as
 * strings (as a user or a config file gives them) and a seed for every random choice.
 *
 * @param dimension the vectors' length, above 0
 * @param metric how the index scores
 * @param params the kind-specific parameters by name (an immutable copy; null reads as none)
 * @param seed the seed for every random choice the index makes, so one input gives one index
 */
public record IndexConfig(int dimension, Metric metric, Map<String, String> params, long seed) {

    /**
     * Checks the dimension and the metric and copies the parameters; the parameters' names and
     * values are the factory's to check.
     *
     * @throws IllegalArgumentException if the dimension is 0 or less
     * @throws NullPointerException if the metric is null, or a parameter name or value is null
     */
    public IndexConfig {
        if (dimension <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dimension);
        }
        Objects.requireNonNull(metric, "metric");
        params = Map.copyOf(params == null ? Map.of() : params);
    }

    /**
     * A config with no parameters and seed 42 (the seed the store uses).
     *
     * @param dimension the vectors' length, above 0
     * @param metric how the index scores
     * @throws IllegalArgumentException if the dimension is 0 or less
     */
    public IndexConfig(int dimension, Metric metric) {
        this(dimension, metric, Map.of(), 42L);
    }

    /**
     * Fails if a parameter name is not among {@code known}, listing the accepted names.
     *
     * @param kind the index kind, for the message
     * @param known the names the index accepts
     * @throws IllegalArgumentException naming the first unknown parameter and the accepted ones
     */
    public void requireKnown(String kind, Set<String> known) {
        for (String name : params.keySet()) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException(
                        kind
                                + " index: unknown parameter '"
                                + name
                                + "'; expected one of "
                                + new TreeSet<>(known));
            }
        }
    }

    /**
     * An int parameter within [min, max], or {@code dflt} when absent (the default is not checked
     * against the range).
     *
     * @param kind the index kind, for the message
     * @param name the parameter's name
     * @param dflt the value when the parameter is absent
     * @param min the lowest accepted value
     * @param max the highest accepted value
     * @return the value
     * @throws IllegalArgumentException if the value is not an integer or lies outside [min, max]
     */
    public int intParam(String kind, String name, int dflt, int min, int max) {
        String raw = params.get(name);
        if (raw == null) {
            return dflt;
        }
        int v;
        try {
            v = Integer.parseInt(raw.trim());
        } catch (NumberFormatException e) {
            throw outOfRange(kind, name, "an integer", min, max, "'" + raw + "'");
        }
        checkRange(kind, name, v, min, max);
        return v;
    }

    /**
     * The range check {@link #intParam} applies, for a value that comes from code rather than from
     * a config (a record's constructor, a builder), so both refuse with the same words.
     *
     * @param kind the index kind, for the message
     * @param name the parameter's name
     * @param value the value to check
     * @param min the lowest accepted value
     * @param max the highest accepted value
     * @throws IllegalArgumentException if the value lies outside [min, max]
     */
    public static void checkRange(String kind, String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw outOfRange(kind, name, "an integer", min, max, value);
        }
    }

    /**
     * A double parameter within [min, max], or {@code dflt} when absent (the default is not checked
     * against the range).
     *
     * @param kind the index kind, for the message
     * @param name the parameter's name
     * @param dflt the value when the parameter is absent
     * @param min the lowest accepted value
     * @param max the highest accepted value
     * @return the value
     * @throws IllegalArgumentException if the value is not a number or lies outside [min, max] (NaN
     *     included)
     */
    public double doubleParam(String kind, String name, double dflt, double min, double max) {
        String raw = params.get(name);
        if (raw == null) {
            return dflt;
        }
        double v;
        try {
            v = Double.parseDouble(raw.trim());
        } catch (NumberFormatException e) {
            throw outOfRange(kind, name, "a number", min, max, "'" + raw + "'");
        }
        if (!(v >= min && v <= max)) {
            throw outOfRange(kind, name, "a number", min, max, v);
        }
        return v;
    }

    /** The error for a parameter that does not parse or lies outside {@code [min, max]}. */
    private static IllegalArgumentException outOfRange(
            String kind, String name, String what, Object min, Object max, Object got) {
        return new IllegalArgumentException(
                kind
                        + " index: parameter '"
                        + name
                        + "' expected "
                        + what
                        + " in ["
                        + min
                        + ", "
                        + max
                        + "], got "
                        + got);
    }
}
