package dev.nepenthe.core;

import java.util.Objects;

/**
 * Where a record came from: a kind ("email", "ticket", "doc"), the source's id and its version.
 * Forgetting version 3 of a source keeps version 4, so the version is part of the reference.
 *
 * @param kind what sort of source it is; not blank
 * @param id the source's id within its kind; not blank
 * @param version the source's version, 0 or more
 */
public record SourceRef(String kind, String id, long version) {
    /**
     * Checks the reference.
     *
     * @throws IllegalArgumentException if the kind or the id is blank, or the version negative
     * @throws NullPointerException if the kind or the id is null
     */
    public SourceRef {
        Objects.requireNonNull(kind, "source kind");
        Objects.requireNonNull(id, "source id");
        if (kind.isBlank()) {
            throw new IllegalArgumentException(
                    "source kind: expected a non-blank string, got a blank one");
        }
        if (id.isBlank()) {
            throw new IllegalArgumentException(
                    "source id: expected a non-blank string, got a blank one");
        }
        if (version < 0) {
            throw new IllegalArgumentException("source version: expected >= 0, got " + version);
        }
    }
}
