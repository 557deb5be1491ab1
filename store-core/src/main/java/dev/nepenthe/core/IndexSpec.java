package dev.nepenthe.core;

import java.util.Map;
import java.util.Objects;

/**
 * Which index a collection uses and its parameters, as strings (the index's factory validates
 * them when the collection is created). Kinds: {@code exact} (always available),
 * {@code hnsw} and {@code ivfpq} (when their modules are on the class path).
 */
public record IndexSpec(String kind, Map<String, String> params) {

    public IndexSpec {
        Objects.requireNonNull(kind, "index kind");
        params = Map.copyOf(params == null ? Map.of() : params);
    }

    public static IndexSpec exact() {
        return new IndexSpec("exact", Map.of());
    }

    public static IndexSpec of(String kind, Map<String, String> params) {
        return new IndexSpec(kind, params);
    }

    public static IndexSpec of(String kind) {
        return new IndexSpec(kind, Map.of());
    }
}
