package dev.nepenthe.core.forget;

import java.util.Map;
import java.util.Set;

/**
 * What a forget operation blocked when it was marked, handed to every registered surface's {@link
 * ErasureSurface#block}: the records in scope at that moment, by collection. Writes in scope are
 * refused from the mark on, so no record joins the scope later. Held in memory only, for as long as
 * the operation is unsealed.
 *
 * @param operationId the forget operation that blocked the scope
 * @param tenant the tenant the scope lies in
 * @param subject the subject for a subject scope, else null
 * @param recordIds ids of the records in scope, by collection (an immutable copy; collections with
 *     none in scope are absent)
 */
public record BlockedScope(
        String operationId, String tenant, String subject, Map<String, Set<String>> recordIds) {

    /**
     * Copies the map (the sets inside it are kept as given).
     *
     * @throws NullPointerException if {@code recordIds} is null or holds a null key or value
     */
    public BlockedScope {
        recordIds = Map.copyOf(recordIds);
    }

    /**
     * Whether the record {@code id} of {@code collection} in {@code tenant} is blocked by this
     * scope: a map lookup and a set lookup.
     *
     * @param tenant the record's tenant
     * @param collection the record's collection
     * @param id the record's id
     * @return true if this scope blocks it
     */
    public boolean covers(String tenant, String collection, String id) {
        return this.tenant.equals(tenant)
                && recordIds.getOrDefault(collection, Set.of()).contains(id);
    }
}
