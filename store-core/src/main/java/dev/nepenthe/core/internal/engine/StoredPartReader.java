package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Map;

/**
 * Reads a catalogued record's text and metadata from its one stored copy, decrypted, since the
 * catalogue's entries hold neither. Every read checks afterwards that the entry still holds its
 * ordinal, as a vector read does: a copy read while its record left is dropped, never handed out as
 * another record's.
 */
final class StoredPartReader {
    private final RecordCatalogue catalogue;
    private volatile RecordCatalogue.StoredCopies stored = ord -> null;

    StoredPartReader(RecordCatalogue catalogue) {
        this.catalogue = catalogue;
    }

    /** Where the copies are read from from now on (the collection's storage, once open). */
    void readFrom(RecordCatalogue.StoredCopies copies) {
        this.stored = copies;
    }

    /**
     * The text of the record at {@code e}, decrypted from its stored copy; null when it has none or
     * it left.
     */
    String text(Entry e) {
        if (!e.hasText()) {
            return null;
        }
        VectorRecord copy = copyOf(e);
        if (copy == null) {
            return null;
        }
        try {
            return copy.text();
        } finally {
            RecordAccess.wipe(copy);
        }
    }

    /**
     * The metadata of the record at {@code e}, decrypted from its stored copy (an empty map when it
     * has none); null when it left.
     */
    Map<String, Object> metadata(Entry e) {
        if (!e.hasMetadata()) {
            return Map.of();
        }
        VectorRecord copy = copyOf(e);
        if (copy == null) {
            return null;
        }
        RecordAccess.wipe(copy);
        return copy.metadata();
    }

    /**
     * The record at {@code e} with its text and metadata from its stored copy, without its vector;
     * null when it left. A forget's checks read records whole this way.
     */
    VectorRecord withStoredParts(Entry e) {
        if (!e.readsCopy()) {
            return RecordAccess.joined(e.record(), null, null, Map.of());
        }
        VectorRecord copy = copyOf(e);
        return copy == null
                ? null
                : RecordAccess.joined(
                        e.record(), null, RecordAccess.textUnsafe(copy), copy.metadata());
    }

    /**
     * The decrypted copy of the record at {@code e}, its vector zeroed (the caller wipes its text),
     * or null when the entry no longer holds its ordinal or is hidden with its copy gone (a forget
     * destroyed the key). Fails when a live entry has no copy of its own where the storage says it
     * lies.
     */
    VectorRecord copyOf(Entry e) {
        VectorRecord copy;
        try {
            copy = stored.read(e.ordinal());
        } catch (IOException | RuntimeException x) {
            if (!catalogue.stillHolds(e)) {
                return null; // the copy left with its record, or the ordinal's file was replaced
            }
            if (x instanceof IOException io) {
                throw new UncheckedIOException(io);
            }
            throw (RuntimeException) x;
        }
        if (copy != null) {
            float[] v = RecordAccess.vectorUnsafe(copy);
            if (v != null) {
                Arrays.fill(v, 0f);
            }
            if (copy.id().equals(e.record().id())
                    && copy.tenant().equals(e.record().tenant())
                    && (!e.hasText() || RecordAccess.textUnsafe(copy) != null)) {
                return copy;
            }
            RecordAccess.wipe(copy);
        }
        if (!catalogue.stillHolds(e) || catalogue.hidden().contains(e.ordinal())) {
            return null;
        }
        throw new IllegalStateException(
                "the live record at ordinal "
                        + e.ordinal()
                        + " has no stored copy of its own"
                        + (copy == null ? "" : " (the copy there is another record's)"));
    }
}
