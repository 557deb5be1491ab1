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
 */
public sealed interface Filter {

    boolean test(Map<String, Object> metadata);

    default Filter and(Filter other) {
        return new And(List.of(this, other));
    }

    default Filter or(Filter other) {
        return new Or(List.of(this, other));
    }

    static Filter eq(String key, Object value) {
        return new Eq(key, VectorRecord.normalizeValue(key, value));
    }

    static Filter in(String key, Object... values) {
        Object[] norm = new Object[values.length];
        for (int i = 0; i < values.length; i++) {
            norm[i] = VectorRecord.normalizeValue(key, values[i]);
        }
        return new In(key, Set.of(norm));
    }

    /** {@code min <= value <= max} for a numeric value. */
    static Filter range(String key, double min, double max) {
        if (!(min <= max)) {
            throw new IllegalArgumentException("range on '" + key + "': expected min <= max, got " + min + " > " + max);
        }
        return new Range(key, min, max);
    }

    static Filter exists(String key) {
        return new Exists(key);
    }

    static Filter not(Filter f) {
        return new Not(f);
    }

    record Eq(String key, Object value) implements Filter {
        public Eq {
            Objects.requireNonNull(key, "filter key");
        }

        @Override
        public boolean test(Map<String, Object> m) {
            return valueEquals(m.get(key), value);
        }
    }

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

    record Range(String key, double min, double max) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            return m.get(key) instanceof Number n && n.doubleValue() >= min && n.doubleValue() <= max;
        }
    }

    record Exists(String key) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            return m.containsKey(key);
        }
    }

    record Not(Filter inner) implements Filter {
        @Override
        public boolean test(Map<String, Object> m) {
            return !inner.test(m);
        }
    }

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
