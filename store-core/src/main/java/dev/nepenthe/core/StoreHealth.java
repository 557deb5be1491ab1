package dev.nepenthe.core;

import dev.nepenthe.core.audit.LedgerHead;

/**
 * What an operator needs to know about a store that is serving: whether it accepts writes and
 * forgets, and if not, why. A damaged evidence ledger (cut short, rolled back, a changed byte) does
 * not stop searches; it stops new forgets, holds and overrides until an operator puts back a ledger
 * that holds every anchored entry (see docs/FORGET.md, "When the ledger is damaged"). A failed
 * write to the store's files (a full disk, an I/O error, a failed fsync) makes the store read-only
 * until it is reopened: searches and reads go on (see docs/STORAGE.md, "When a write fails").
 *
 * @param forgetsAccepted false while the ledger is damaged
 * @param ledgerProblem what is wrong with the ledger, naming the file and the entry, or null
 * @param ledgerHead the last entry that verifies
 * @param anchoredHead the head the operation log anchored last (null before the first anchor)
 * @param operationsPaused unfinished forget operations waiting for the ledger (their scopes stay
 *     blocked)
 * @param reconciledWithoutEvidence records reconciliation removed at open with no ledger entry to
 *     record it
 * @param writeProblem the write that failed and made the store read-only, naming the file, or null
 *     while writes are accepted
 */
public record StoreHealth(
        boolean forgetsAccepted,
        String ledgerProblem,
        LedgerHead ledgerHead,
        LedgerHead anchoredHead,
        int operationsPaused,
        int reconciledWithoutEvidence,
        String writeProblem) {

    /**
     * Whether writes, deletes and forgets are accepted: false once a write to the store's files has
     * failed, until the store is reopened.
     *
     * @return true when {@code writeProblem} is null
     */
    public boolean writesAccepted() {
        return writeProblem == null;
    }

    /**
     * Whether the ledger is sound. While the store is open this agrees with {@code
     * forgetsAccepted}.
     *
     * @return true when {@code ledgerProblem} is null
     */
    public boolean ok() {
        return ledgerProblem == null;
    }
}
