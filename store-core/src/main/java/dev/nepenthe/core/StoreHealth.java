package dev.nepenthe.core;

import dev.nepenthe.core.audit.LedgerHead;

/**
 * What an operator needs to know about a store that is serving: whether it accepts forgets, and
 * if not, why. A damaged evidence ledger (cut short, rolled back, a changed byte) does not stop
 * searches; it stops new forgets, holds and overrides until an operator puts back a ledger that
 * holds every anchored entry (see docs/FORGET.md, "When the ledger is damaged").
 *
 * @param forgetsAccepted false while the ledger is damaged
 * @param ledgerProblem what is wrong with the ledger, naming the file and the entry, or null
 * @param ledgerHead the last entry that verifies
 * @param anchoredHead the head the operation log anchored last (null before the first anchor)
 * @param operationsPaused unfinished forget operations waiting for the ledger (their scopes stay blocked)
 * @param reconciledWithoutEvidence records reconciliation removed at open with no ledger entry to record it
 */
public record StoreHealth(boolean forgetsAccepted, String ledgerProblem, LedgerHead ledgerHead, LedgerHead anchoredHead,
        int operationsPaused, int reconciledWithoutEvidence) {

    /**
     * Whether the ledger is sound. While the store is open this agrees with
     * {@code forgetsAccepted}.
     *
     * @return true when {@code ledgerProblem} is null
     */
    public boolean ok() {
        return ledgerProblem == null;
    }
}
