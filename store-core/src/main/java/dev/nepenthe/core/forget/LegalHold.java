package dev.nepenthe.core.forget;

import java.time.Instant;

/**
 * A legal hold on a subject or a source (every version) within a tenant. A forget whose records
 * fall under a hold keeps them, blocks their retrieval and ends {@code COMPLETED_WITH_EXCEPTION};
 * lifting the hold resumes it. Only a keyed hash of the held subject or source is stored.
 *
 * @param id the hold's id ({@code hold-} and 16 hex digits)
 * @param tenant the tenant the hold applies in
 * @param scopeKind "subject" or "source"
 * @param scopeHash keyed hash (hex) of the held subject or source
 * @param reasonCode a code, not free text (it goes into evidence)
 * @param placedAt when the hold was placed
 * @param liftedAt null while the hold stands
 */
public record LegalHold(
        String id,
        String tenant,
        String scopeKind,
        String scopeHash,
        String reasonCode,
        Instant placedAt,
        Instant liftedAt) {

    /**
     * Whether the hold still stands.
     *
     * @return true until it is lifted
     */
    public boolean active() {
        return liftedAt == null;
    }
}
