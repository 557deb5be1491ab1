package dev.nepenthe.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A predicate over a record's metadata, used to narrow a search. Build with the static
 * methods: {@code Filter.eq("lang", "en").and(Filter.range("year", 2020, 2024))}.
 *
 * <p>Numbers compare by value across {@code Long} and {@code Double}; a missing key never
 * matches (except under {@link #not}).
 *
 * <p>A search with a filter tests it once per record of the request's tenant (or subject) to
 * build the candidates the index may return, so a filter costs a pass over those records on
 * every search.
 */
public sealed interface Filter {

    /**
     * Whether a record with this metadata passes.
     *
     * @param metadata a record's metadata, values as {@link VectorRecord} keeps them
     * @return true if the record passes
     */
    boolean test(Map<String, Object> metadata);

    /**
     * Both this filter and {@code other}.
     *
     * @param other the second filter
     * @return a filter that passes what both pass
     */
    default Filter and(Filter other) {
        return new And(List.of(this, other));
    }

    /**
     * Either this filter or {@code other}.
     *
     * @param other the second filter
     * @return a filter that passes what either passes
     */
    default Filter or(Filter other) {
        return new Or(List.of(this, other));
    }

    /**
     * The value at {@code key} equals {@code value} (numbers by value, so 3 matches 3.0).
     *
     * @param key the metadata key
     * @param value a string, number or boolean, widened as {@link VectorRecord.Builder#metadata} widens it
     * @return the filter
     * @throws IllegalArgumentException if the value is null or of another type
     */
    static Filter eq(String key, Object value) {
        return new Eq(key, VectorRecord.normalizeValue(key, value));
    }

    /**
     * The value at {@code key} equals one of {@code values}.
     *
     * @param key the metadata key
     * @param values strings, numbers or booleans, widened as for {@link #eq}
     * @return the filter
     * @throws IllegalArgumentException if a value is null or of another type (values equal once
     *     widened, such as {@code 1} and {@code 1L}, count once)
     */
    static Filter in(String key, Object... values) {
        Set<Object> norm = new java.util.LinkedHashSet<>();
        for (Object value : values) {
            norm.add(VectorRecord.normalizeValue(key, value));
        }
        return new In(key, Set.copyOf(norm));
    }

    /**
     * {@code min <= value <= max} for a numeric value; a non-numeric value never matches.
     *
     * @param key the metadata key
     * @param min the lowest value that matches
     * @param max the highest value that matches
     * @return the filter
     * @throws IllegalArgumentException if {@code min > max} or either is NaN
     */
    static Filter range(String key, double min, double max) {
        return new Range(key, min, max);
    }

    /**
     * The record has a value at {@code key}, of any type.
     *
     * @param key the metadata key
     * @return the filter
     */
    static Filter exists(String key) {
        return new Exists(key);
    }

    /**
     * Records {@code f} rejects, including those that lack the key {@code f} tests.
     *
     * @param f the filter to negate
     * @return the filter
     */
    static Filter not(Filter f) {
        return new Not(f);
    }

    /**
     * See {@link Filter#eq}.
     *
     * @param key the metadata key
     * @param value the value to equal, as {@link VectorRecord} keeps metadata values
     */
    record Eq(String key, Object value) implements Filter {
        /**
         * Checks the key; {@link Filter#eq} also widens the value.
         *
         * @throws NullPointerException if the key is null
         */
        public Eq {
            Objects.requireNonNull(key, "filter key");
        }

        @Override
        public boolean test(Map<String, Object> m) {
            return valueEquals(m.get(key), value);
        }
    }

    /**
     * See {@link Filter#in}.
     *
     * @param key the metadata key
     * @param values the values to equal one of
     */
    record In(String key, Set<Object> values) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            Object v = m.get(key);
            if (v == null) {
                return false;
            }
            for (Object w : values) {
                if (valueEquals(v, w)) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * See {@link Filter#range}.
     *
     * @param key the metadata key
     * @param min the lowest value that matches
     * @param max the highest value that matches
     */
    record Range(String key, double min, double max) implements Filter {
        /**
         * Checks the bounds.
         *
         * @throws IllegalArgumentException unless {@code min <= max} (NaN never is)
         */
        public Range {
            if (!(min <= max)) {
                throw new IllegalArgumentException("range on '" + key + "': expected min <= max, got " + min + " > " + max);
            }
        }

        @Override
        public boolean test(Map<String, Object> m) {
            return m.get(key) instanceof Number n && n.doubleValue() >= min && n.doubleValue() <= max;
        }
    }

    /**
     * See {@link Filter#exists}.
     *
     * @param key the metadata key
     */
    record Exists(String key) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            return m.containsKey(key);
        }
    }

    /**
     * See {@link Filter#not}.
     *
     * @param inner the filter negated
     */
    record Not(Filter inner) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            return !inner.test(m);
        }
    }

    /**
     * Passes when every filter passes, testing them in order and stopping at the first that fails.
     *
     * @param all the filters
     */
    record And(List<Filter> all) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            for (Filter f : all) {
                if (!f.test(m)) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Passes when one filter passes, testing them in order and stopping at the first that passes.
     *
     * @param any the filters
     */
    record Or(List<Filter> any) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            for (Filter f : any) {
                if (f.test(m)) {
                    return true;
                }
            }
            return false;
        }
    }

    private static boolean valueEquals(Object a, Object b) {
        if (a == null || b == null) {
            return false;
        }
        if (a instanceof Number x && b instanceof Number y) {
            return x.doubleValue() == y.doubleValue();
        }
        return a.equals(b);
    }
}
