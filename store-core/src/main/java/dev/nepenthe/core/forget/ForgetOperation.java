package dev.nepenthe.core.forget;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A forget operation as it stands: an immutable view, replaced as the operation advances. It names
 * the scope by keyed hash only: the subject, ids or filter it was asked to forget are not in it.
 *
 * @param id the operation's id ({@code fop-} and 20 hex digits)
 * @param tenant the tenant the operation works in
 * @param scopeKind "subject", "records", "source" or "metadata"
 * @param scopeHash keyed hash (hex) of the scope, as the evidence names it
 * @param reasonCode the request's reason code
 * @param state where the operation stands
 * @param timeline when each state was entered, in order
 * @param recordsForgotten records removed, per collection (provenance cascades included)
 * @param surfaces each surface's purge and verification, once verification has run
 * @param suspects what verification flagged (by id and score), when the state is NEEDS_REVIEW
 * @param holds ids of the legal holds that stopped it, for COMPLETED_WITH_EXCEPTION
 * @param receipt the signed receipt once SEALED, else null
 * @param note why it stopped where it did (no content)
 * @param outcome once SEALED, what it found and did (ERASED, NOTHING_FOUND, UNKNOWN_TENANT), else
 *     null
 */
public record ForgetOperation(
        String id,
        String tenant,
        String scopeKind,
        String scopeHash,
        String reasonCode,
        OperationState state,
        Map<OperationState, Instant> timeline,
        Map<String, Integer> recordsForgotten,
        List<SurfaceOutcome> surfaces,
        List<Suspect> suspects,
        List<String> holds,
        String receipt,
        String note,
        ErasureOutcome outcome) {

    /**
     * Copies the collections.
     *
     * @throws NullPointerException if a map or list is null or holds a null
     */
    public ForgetOperation {
        timeline = Map.copyOf(timeline);
        recordsForgotten = Map.copyOf(recordsForgotten);
        surfaces = List.copyOf(surfaces);
        suspects = List.copyOf(suspects);
        holds = List.copyOf(holds);
    }

    /**
     * Records removed across every collection, provenance cascades included.
     *
     * @return the sum of {@code recordsForgotten}
     */
    public int totalForgotten() {
        return recordsForgotten.values().stream().mapToInt(Integer::intValue).sum();
    }
}
