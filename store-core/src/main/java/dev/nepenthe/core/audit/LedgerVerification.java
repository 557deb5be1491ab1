package dev.nepenthe.core.audit;

/**
 * The result of verifying a ledger file's hash chain and signatures: how many entries held, the
 * first that did not (-1 when all did) and why, and the hash of the last good entry.
 *
 * @param entries how many entries verified, from the first on
 * @param firstBadEntry the position of the first entry that did not verify, or -1 when every entry
 *     did; {@link dev.nepenthe.core.Nepenthe#verifyLedger()} sets it to {@code entries} when the
 *     chain holds but a cross-check (the anchored head, a receipt) fails
 * @param problem why, or null
 * @param headHash the hash of the last entry that verified, in hex (all zeros for none)
 */
public record LedgerVerification(int entries, int firstBadEntry, String problem, String headHash) {

    /**
     * Whether every entry verified (and, from {@code verifyLedger}, every cross-check passed).
     *
     * @return true when {@code firstBadEntry} is -1
     */
    public boolean ok() {
        return firstBadEntry < 0;
    }
}
