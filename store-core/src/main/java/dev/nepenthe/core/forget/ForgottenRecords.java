package dev.nepenthe.core.forget;

import java.util.List;

/**
 * What one operation removed, handed to every surface's purge and verify. Held in memory only
 * for the operation's life; vectors are copies a surface must not keep.
 *
 * @param subject the subject for a subject scope, else null
 */
public record ForgottenRecords(String operationId, String tenant, String subject, List<Item> items) {

    /**
     * @param ordinal the ordinal the record had in its collection's index (recycled afterwards)
     * @param vector a copy of its vector as it was stored (the probe)
     */
    public record Item(String collection, String recordId, int ordinal, float[] vector) {}

    public ForgottenRecords {
        items = List.copyOf(items);
    }
}
