package dev.nepenthe.core.forget;

import java.util.List;

/**
 * What one operation removed, handed to every surface's purge and verify. Held in memory only for
 * the operation's life; vectors are copies a surface must not keep (the store zeroes them once the
 * surface's call returns).
 *
 * @param operationId the forget operation
 * @param tenant the tenant it worked in
 * @param subject the subject for a subject scope, else null
 * @param items each removed record (an immutable list)
 */
public record ForgottenRecords(
        String operationId, String tenant, String subject, List<Item> items) {

    /**
     * One removed record.
     *
     * @param collection the collection it was removed from
     * @param recordId its id
     * @param ordinal the ordinal the record had in its collection's index (recycled afterwards)
     * @param vector a copy of its vector as it was stored (the probe)
     */
    // Public API: the vector is a copy made for this item, handed over as it is.
    @SuppressWarnings("ArrayRecordComponent")
    public record Item(String collection, String recordId, int ordinal, float[] vector) {}

    /**
     * Copies the list of items.
     *
     * @throws NullPointerException if the list or an item is null
     */
    public ForgottenRecords {
        items = List.copyOf(items);
    }
}
