package dev.nepenthe.core.forget;

import dev.nepenthe.core.audit.LedgerHead;
import java.time.Instant;
import java.util.List;

/**
 * A re-admission: a subject, or record ids, that sealed forgets fenced may be written again. Writes
 * that the forgets' fences refused are accepted from then on and stored as new records; nothing
 * from before the forgets comes back (reconciliation still removes a record from before them that a
 * restore or a lost journal brings back). The forgets' receipts and ledger entries are untouched.
 * Only keyed hashes of the scope are stored, as for a forget.
 *
 * @param id the re-admission's id ({@code rad-} and 20 hex digits)
 * @param tenant the tenant it applies in
 * @param scopeKind "subject" or "records"
 * @param scopeHash keyed hash (hex) of the re-admitted scope: for a subject, the same hash its
 *     forget's operation and receipt carry
 * @param reasonCode why, as a code (it is in the evidence)
 * @param at when it was recorded
 * @param forgetOperations the sealed forget operations whose fences it lifted
 * @param ledgerEntry its evidence ledger entry (sequence and hash); null while it is pending (the
 *     store stopped before writing the entry; the next open finishes it, and until then nothing is
 *     lifted)
 */
public record Readmission(
        String id,
        String tenant,
        String scopeKind,
        String scopeHash,
        String reasonCode,
        Instant at,
        List<String> forgetOperations,
        LedgerHead ledgerEntry) {

    /**
     * Copies the operation list.
     *
     * @throws NullPointerException if the list is null
     */
    public Readmission {
        forgetOperations = List.copyOf(forgetOperations);
    }

    /**
     * Whether the re-admission is in force: its evidence is in the ledger and the fences are
     * lifted.
     *
     * @return true once its ledger entry is written
     */
    public boolean complete() {
        return ledgerEntry != null;
    }
}
