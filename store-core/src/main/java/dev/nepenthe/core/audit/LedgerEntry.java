package dev.nepenthe.core.audit;

import java.util.HexFormat;

/**
 * One verified entry of an evidence ledger: its position, time, the hash of the entry before
 * it, its body (canonical JSON naming an operation by id and its evidence by keyed hashes, never
 * a subject's data), its own hash and the store's signature over it.
 */
public record LedgerEntry(long seq, long timeMillis, byte[] prevHash, String body, byte[] hash, byte[] signature) {

    /** The entry's hash in lower-case hex, as receipts and heads name it. */
    public String hashHex() {
        return HexFormat.of().formatHex(hash);
    }
}
