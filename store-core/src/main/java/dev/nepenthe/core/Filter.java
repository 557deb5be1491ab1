package dev.nepenthe.core;

import java.math.BigDecimal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A predicate over a record's metadata, used to narrow a search. Build with the static methods:
 * {@code Filter.eq("lang", "en").and(Filter.range("year", 2020, 2024))}.
 *
 * <p>Numbers compare by value across {@code Long} and {@code Double}, exactly: a long beyond
 * 2<sup>53</sup> is not rounded to a double first, so {@code Long.MAX_VALUE} and {@code
 * Long.MAX_VALUE - 1} differ. Strings order by {@link String#compareTo} (UTF-16 code units,
 * case-sensitive). A missing key never matches, nor does a value of another kind than the filter's
 * (a string against a number), except under {@link #not}.
 *
 * <p>A search answers a filter before the index runs, as the set of candidates the index may
 * return. The store keeps no metadata in memory, only keyed hashes of it: equalities, {@code in},
 * {@code exists}, numeric ranges and comparisons, and {@code not}, {@code and} and {@code or} over
 * them are answered from those hashes (a range or comparison costs up to a few hundred hashes,
 * whatever the number of records). A comparison of strings and {@code contains} have no hash to go
 * by: they decrypt the metadata of each record that has the key and is still in question after the
 * rest of an {@code and}, about 2 to 3 microseconds a record.
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
     * @param value a string, number or boolean, widened as {@link VectorRecord.Builder#metadata}
     *     widens it
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
        Set<Object> norm = new LinkedHashSet<>();
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
     * The value at {@code key} is greater than {@code value}: numbers by value, strings in {@link
     * String#compareTo} order; a value of the other kind (or a boolean) never matches.
     *
     * @param key the metadata key
     * @param value a string or a number ({@code Integer} and {@code Float} are widened as {@link
     *     VectorRecord.Builder#metadata} widens them), not NaN
     * @return the filter
     * @throws IllegalArgumentException if the value is null, NaN, a boolean or of another type
     */
    static Filter gt(String key, Object value) {
        return new Compare(key, Comparison.GT, value);
    }

    /**
     * The value at {@code key} is greater than or equal to {@code value}; see {@link #gt}.
     *
     * @param key the metadata key
     * @param value a string or a number, not NaN
     * @return the filter
     * @throws IllegalArgumentException if the value is null, NaN, a boolean or of another type
     */
    static Filter gte(String key, Object value) {
        return new Compare(key, Comparison.GTE, value);
    }

    /**
     * The value at {@code key} is less than {@code value}; see {@link #gt}.
     *
     * @param key the metadata key
     * @param value a string or a number, not NaN
     * @return the filter
     * @throws IllegalArgumentException if the value is null, NaN, a boolean or of another type
     */
    static Filter lt(String key, Object value) {
        return new Compare(key, Comparison.LT, value);
    }

    /**
     * The value at {@code key} is less than or equal to {@code value}; see {@link #gt}.
     *
     * @param key the metadata key
     * @param value a string or a number, not NaN
     * @return the filter
     * @throws IllegalArgumentException if the value is null, NaN, a boolean or of another type
     */
    static Filter lte(String key, Object value) {
        return new Compare(key, Comparison.LTE, value);
    }

    /**
     * The value at {@code key} is a string that contains {@code substring} (case-sensitive,
     * anywhere in it; the empty substring is in every string). A number or boolean never matches,
     * even when its decimal form would. Decrypts the metadata of each record tested that has the
     * key (see the class comment).
     *
     * @param key the metadata key
     * @param substring the characters to look for
     * @return the filter
     * @throws NullPointerException if the key or substring is null
     */
    static Filter contains(String key, String substring) {
        return new Contains(key, substring);
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
                throw new IllegalArgumentException(
                        "range on '" + key + "': expected min <= max, got " + min + " > " + max);
            }
        }

        @Override
        public boolean test(Map<String, Object> m) {
            return m.get(key) instanceof Number n
                    && !isNaN(n)
                    && compareNumbers(n, min) >= 0
                    && compareNumbers(n, max) <= 0;
        }
    }

    /** How a {@link Compare} filter orders the record's value against its own. */
    enum Comparison {
        /** The record's value is less than the filter's. */
        LT,
        /** The record's value is less than or equal to the filter's. */
        LTE,
        /** The record's value is greater than the filter's. */
        GT,
        /** The record's value is greater than or equal to the filter's. */
        GTE;

        /**
         * Whether a comparison result (negative, zero or positive, as {@link Comparable#compareTo}
         * gives it for the record's value against the filter's) passes.
         *
         * @param order the comparison result
         * @return whether it passes
         */
        public boolean accepts(int order) {
            return switch (this) {
                case LT -> order < 0;
                case LTE -> order <= 0;
                case GT -> order > 0;
                case GTE -> order >= 0;
            };
        }
    }

    /**
     * See {@link Filter#gt}, {@link Filter#gte}, {@link Filter#lt} and {@link Filter#lte}.
     *
     * @param key the metadata key
     * @param comparison how the record's value must order against {@code value}
     * @param value a {@code String}, {@code Long} or {@code Double} (not NaN)
     */
    record Compare(String key, Comparison comparison, Object value) implements Filter {
        /**
         * Checks the key and comparison, widens the value and refuses one without an order.
         *
         * @throws NullPointerException if the key or comparison is null
         * @throws IllegalArgumentException if the value is null, NaN, a boolean or of another type
         */
        public Compare {
            Objects.requireNonNull(key, "filter key");
            Objects.requireNonNull(comparison, "filter comparison");
            value = VectorRecord.normalizeValue(key, value);
            if (value instanceof Boolean) {
                throw new IllegalArgumentException(
                        "filter "
                                + comparison
                                + " on '"
                                + key
                                + "': expected a String or number to order by, got"
                                + " java.lang.Boolean");
            }
            if (value instanceof Double d && d.isNaN()) {
                throw new IllegalArgumentException(
                        "filter "
                                + comparison
                                + " on '"
                                + key
                                + "': expected a number to order by, got NaN");
            }
        }

        @Override
        public boolean test(Map<String, Object> m) {
            Object v = m.get(key);
            if (v instanceof String s && value instanceof String bound) {
                return comparison.accepts(s.compareTo(bound));
            }
            if (v instanceof Number n && value instanceof Number bound) {
                return !isNaN(n) && comparison.accepts(compareNumbers(n, bound));
            }
            return false;
        }
    }

    /**
     * See {@link Filter#contains}.
     *
     * @param key the metadata key
     * @param substring the characters the value must contain
     */
    record Contains(String key, String substring) implements Filter {
        /**
         * Checks the key and substring.
         *
         * @throws NullPointerException if either is null
         */
        public Contains {
            Objects.requireNonNull(key, "filter key");
            Objects.requireNonNull(substring, "filter contains: the substring");
        }

        @Override
        public boolean test(Map<String, Object> m) {
            return m.get(key) instanceof String s && s.contains(substring);
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
            return !isNaN(x) && !isNaN(y) && compareNumbers(x, y) == 0;
        }
        return a.equals(b);
    }

    /**
     * NaN has no order and equals nothing; the store keeps none, but {@link #test} takes any map.
     */
    private static boolean isNaN(Number n) {
        return (n instanceof Double d && d.isNaN()) || (n instanceof Float f && f.isNaN());
    }

    /**
     * Orders two numbers, neither NaN, by their exact values (negative, zero or positive). Integral
     * against floating point compares as doubles only where the long converts exactly (magnitude up
     * to 2^53: the common case, and allocation-free); beyond that it goes through BigDecimal, since
     * rounding the long would make neighbours equal. -0.0 equals 0.0, as {@code ==} has it.
     */
    private static int compareNumbers(Number a, Number b) {
        boolean aIntegral = isIntegral(a);
        boolean bIntegral = isIntegral(b);
        if (aIntegral && bIntegral) {
            return Long.compare(a.longValue(), b.longValue());
        }
        if (!aIntegral && !bIntegral) {
            return compareDoubles(a.doubleValue(), b.doubleValue());
        }
        return aIntegral
                ? compareLongToDouble(a.longValue(), b.doubleValue())
                : -compareLongToDouble(b.longValue(), a.doubleValue());
    }

    private static boolean isIntegral(Number n) {
        return n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte;
    }

    private static int compareDoubles(double x, double y) {
        return x < y ? -1 : x > y ? 1 : 0;
    }

    private static int compareLongToDouble(long l, double d) {
        if (Double.isInfinite(d)) {
            return d > 0 ? -1 : 1;
        }
        // 2^53: every long of at most this magnitude is exactly a double.
        if (Math.abs(l) <= (1L << 53) && l != Long.MIN_VALUE) {
            return compareDoubles((double) l, d);
        }
        return new BigDecimal(l).compareTo(new BigDecimal(d));
    }
}
