package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.util.Arrays;

/**
 * At open, takes each stored copy's vector into its catalogue row as the storage decodes it, on the
 * storage's threads, while the copy is still in the cache: the record is checked and its vector
 * copied once, and the heap never holds a million decoded vectors waiting for the last segment.
 * Which copy of an ordinal is live is decided later, by admission; until then a row holds the copy
 * of the highest version offered, which is the one admission keeps (both skip what the tombstone
 * journal deletes). {@link #holds} lets the engine confirm that for each live record, and {@link
 * #clearUnlinked} zeros a row whose copy did not stay live (a logged delete removed it).
 */
final class LoadedRows {

    private static final long NONE = Long.MIN_VALUE;

    private final RecordCatalogue catalogue;
    private final RecordValidator validator;
    private final int dimension;

    /** Lock stripes for the claims: two copies of one ordinal may be decoded at once. */
    private final Object[] stripes = new Object[64];

    /** Per ordinal, the version whose vector the row holds, or {@link #NONE}. */
    private long[] claimed = new long[0];

    LoadedRows(RecordCatalogue catalogue, RecordValidator validator, int dimension) {
        this.catalogue = catalogue;
        this.validator = validator;
        this.dimension = dimension;
        for (int i = 0; i < stripes.length; i++) {
            stripes[i] = new Object();
        }
    }

    /** Before any copy is decoded (one thread): reserves the rows the segments can name. */
    void expect(int ordinals) {
        catalogue.reserveRows(ordinals);
        claimed = new long[Math.max(0, ordinals)];
        Arrays.fill(claimed, NONE);
    }

    /**
     * A decoded copy (any thread): checked as a stored record, and its vector moved into its row
     * when no higher version of the ordinal got there first. Returns the record without its vector,
     * or as it came for an ordinal beyond the reserved rows (the engine stores that one once the
     * storage hands it over).
     *
     * @throws IllegalArgumentException when the record fails the collection's checks
     */
    VectorRecord take(int ordinal, long seq, VectorRecord r) {
        validator.validate(r, "stored record");
        long[] c = claimed;
        if (ordinal >= c.length) {
            return r;
        }
        float[] v = RecordAccess.vectorUnsafe(r);
        synchronized (stripes[ordinal & (stripes.length - 1)]) {
            if (seq > c[ordinal]) {
                catalogue.storeLoadedVector(ordinal, r);
                c[ordinal] = seq;
            }
        }
        Arrays.fill(v, 0f);
        return RecordAccess.withVector(r, null);
    }

    /** Whether the row at {@code ordinal} holds the vector of version {@code seq}. */
    boolean holds(int ordinal, long seq) {
        return ordinal < claimed.length && claimed[ordinal] == seq;
    }

    /** {@code r} with the vector its row holds, in an array of its own (the caller zeros it). */
    VectorRecord rejoin(int ordinal, long seq, VectorRecord r) {
        if (!holds(ordinal, seq)) {
            throw new IllegalStateException(
                    "ordinal " + ordinal + ": its row does not hold version " + seq);
        }
        float[] v = new float[dimension];
        catalogue.readLoadedRow(ordinal, v);
        return RecordAccess.withVector(r, v);
    }

    /** After the linking: zeros each row that took a vector whose record is not linked. */
    int clearUnlinked() {
        int cleared = 0;
        for (int ord = 0; ord < claimed.length; ord++) {
            if (claimed[ord] != NONE && catalogue.entry(ord) == null) {
                catalogue.clearLoadedRow(ord);
                cleared++;
            }
        }
        claimed = new long[0];
        return cleared;
    }
}
