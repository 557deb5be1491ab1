package dev.nepenthe.core;

import java.util.Objects;

/**
 * Where a record came from: a kind ("email", "ticket", "doc"), the source's id and its version.
 * Forgetting version 3 of a source keeps version 4, so the version is part of the reference.
 */
public record SourceRef(String kind, String id, long version) {
    public SourceRef {
        Objects.requireNonNull(kind, "source kind");
        Objects.requireNonNull(id, "source id");
        if (kind.isBlank()) {
            throw new IllegalArgumentException("source kind: expected a non-blank string, got a blank one");
        }
        if (id.isBlank()) {
            throw new IllegalArgumentException("source id: expected a non-blank string, got a blank one");
        }
        if (version < 0) {
            throw new IllegalArgumentException("source version: expected >= 0, got " + version);
        }
    }
}
