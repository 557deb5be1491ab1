package dev.nepenthe.core;

import java.util.Map;
import java.util.Objects;

/**
 * Which index a collection uses and its parameters, as strings (the index's factory validates them
 * when the collection is created). Kinds: {@code exact} (always available), {@code hnsw} and {@code
 * ivfpq} (when their modules are on the class path).
 *
 * @param kind the index kind; an unknown kind fails when the collection is created, not here
 * @param params the index's parameters by name (an immutable copy; null reads as none)
 */
public record IndexSpec(String kind, Map<String, String> params) {

    /**
     * Copies the parameters.
     *
     * @throws NullPointerException if the kind is null, or a parameter name or value is null
     */
    public IndexSpec {
        Objects.requireNonNull(kind, "index kind");
        params = Map.copyOf(params == null ? Map.of() : params);
    }

    /**
     * The exact index: a search scores every candidate vector, so it finds the true nearest records
     * at a cost linear in their number.
     *
     * @return the spec of the exact index, with no parameters
     */
    public static IndexSpec exact() {
        return new IndexSpec("exact", Map.of());
    }

    /**
     * An index of this kind with these parameters.
     *
     * @param kind the index kind ("exact", "hnsw", "ivfpq")
     * @param params the parameters by name, as strings
     * @return the spec
     */
    public static IndexSpec of(String kind, Map<String, String> params) {
        return new IndexSpec(kind, params);
    }

    /**
     * An index of this kind with its default parameters.
     *
     * @param kind the index kind ("exact", "hnsw", "ivfpq")
     * @return the spec
     */
    public static IndexSpec of(String kind) {
        return new IndexSpec(kind, Map.of());
    }
}
