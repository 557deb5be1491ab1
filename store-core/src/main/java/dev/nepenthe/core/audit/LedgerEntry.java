package dev.nepenthe.core.audit;

import java.util.HexFormat;

/**
 * One verified entry of an evidence ledger: its position, time, the hash of the entry before it,
 * its body (canonical JSON naming an operation by id and its evidence by keyed hashes, never a
 * subject's data), its own hash and the store's signature over it.
 *
 * <p>The arrays are the record's own, not copies: a caller that changes them changes this entry.
 *
 * @param seq the entry's position, from 0
 * @param timeMillis when it was appended, in milliseconds since the epoch
 * @param prevHash the previous entry's hash (32 zero bytes for the first)
 * @param body canonical JSON with sorted keys
 * @param hash SHA-256 over the position, time, previous hash and body
 * @param signature the store's Ed25519 signature of {@code hash}
 */
// Public API since its first release: the arrays are documented as the record's own.
@SuppressWarnings("ArrayRecordComponent")
public record LedgerEntry(
        long seq, long timeMillis, byte[] prevHash, String body, byte[] hash, byte[] signature) {

    /**
     * The entry's hash in lower-case hex, as receipts and heads name it.
     *
     * @return 64 hex digits
     */
    public String hashHex() {
        return HexFormat.of().formatHex(hash);
    }
}
