package dev.nepenthe.core.index;

import java.util.HashMap;
import java.util.Map;

/**
 * Per-query knobs, by name: {@code efSearch} for HNSW, {@code nprobe} and {@code rerank} for
 * IVF-PQ. An index reads the names it knows and ignores the rest, so one request can carry settings
 * for whichever index a collection uses.
 *
 * @param values the knobs by name (an immutable copy)
 */
public record SearchParams(Map<String, Integer> values) {

    /** No knobs: every index uses its own defaults. */
    public static final SearchParams DEFAULTS = new SearchParams(Map.of());

    /**
     * Copies the knobs.
     *
     * @throws NullPointerException if the map, a name or a value is null
     */
    public SearchParams {
        values = Map.copyOf(values);
    }

    /**
     * One knob.
     *
     * @param name the knob's name
     * @param value its value
     * @return the params
     */
    public static SearchParams of(String name, int value) {
        return new SearchParams(Map.of(name, value));
    }

    /**
     * These knobs with one more set (or replaced); copies the map.
     *
     * @param name the knob's name
     * @param value its value
     * @return new params
     */
    public SearchParams with(String name, int value) {
        var copy = new HashMap<>(values);
        copy.put(name, value);
        return new SearchParams(copy);
    }

    /**
     * A knob's value.
     *
     * @param name the knob's name
     * @param dflt the value when the knob is not set
     * @return the value, or {@code dflt}
     */
    public int get(String name, int dflt) {
        Integer v = values.get(name);
        return v == null ? dflt : v;
    }
}
