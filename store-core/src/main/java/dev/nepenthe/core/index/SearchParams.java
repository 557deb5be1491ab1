package dev.nepenthe.core.index;

import java.util.Map;

/**
 * Per-query knobs, by name: {@code efSearch} for HNSW, {@code nprobe} and {@code rerank} for
 * IVF-PQ. An index reads the names it knows and ignores the rest, so one request can carry
 * settings for whichever index a collection uses.
 */
public record SearchParams(Map<String, Integer> values) {

    public static final SearchParams DEFAULTS = new SearchParams(Map.of());

    public SearchParams {
        values = Map.copyOf(values);
    }

    public static SearchParams of(String name, int value) {
        return new SearchParams(Map.of(name, value));
    }

    public SearchParams with(String name, int value) {
        var copy = new java.util.HashMap<>(values);
        copy.put(name, value);
        return new SearchParams(copy);
    }

    public int get(String name, int dflt) {
        Integer v = values.get(name);
        return v == null ? dflt : v;
    }
}
