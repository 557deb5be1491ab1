package dev.nepenthe.core.audit;

/**
 * The result of verifying a ledger file's hash chain and signatures: how many entries held,
 * the first that did not (-1 when all did) and why, and the hash of the last good entry.
 */
public record LedgerVerification(int entries, int firstBadEntry, String problem, String headHash) {

    /** Whether every entry verified. */
    public boolean ok() {
        return firstBadEntry < 0;
    }
}
