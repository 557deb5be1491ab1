package dev.nepenthe.core.forget;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A forget operation as it stands: an immutable view, replaced as the operation advances.
 *
 * @param timeline when each state was entered, in order
 * @param recordsForgotten records removed, per collection (provenance cascades included)
 * @param surfaces each surface's purge and verification, once verification has run
 * @param suspects what verification flagged (by id and score), when the state is NEEDS_REVIEW
 * @param holds ids of the legal holds that stopped it, for COMPLETED_WITH_EXCEPTION
 * @param receipt the signed receipt once SEALED, else null
 * @param note why it stopped where it did (no content)
 * @param outcome once SEALED, what it found and did (ERASED, NOTHING_FOUND, UNKNOWN_TENANT), else null
 */
public record ForgetOperation(String id, String tenant, String scopeKind, String scopeHash, String reasonCode,
        OperationState state, Map<OperationState, Instant> timeline, Map<String, Integer> recordsForgotten,
        List<SurfaceOutcome> surfaces, List<Suspect> suspects, List<String> holds, String receipt, String note,
        ErasureOutcome outcome) {

    public ForgetOperation {
        timeline = Map.copyOf(timeline);
        recordsForgotten = Map.copyOf(recordsForgotten);
        surfaces = List.copyOf(surfaces);
        suspects = List.copyOf(suspects);
        holds = List.copyOf(holds);
    }

    public int totalForgotten() {
        return recordsForgotten.values().stream().mapToInt(Integer::intValue).sum();
    }
}
