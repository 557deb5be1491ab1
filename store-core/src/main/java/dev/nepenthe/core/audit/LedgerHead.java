package dev.nepenthe.core.audit;

import java.util.regex.Pattern;

/**
 * The head of an evidence ledger: the last entry's sequence number and hash. The store anchors it
 * in its operation log after every append, and receipts name their own entry the same way, so a
 * ledger cut short, rolled back or replaced no longer matches what was anchored. An operator can
 * also hand heads to an outside witness ({@link #toString()} gives {@code SEQ:HASH}) and check a
 * ledger against them later ({@link LedgerAudit#checkHead}).
 *
 * @param seq the last entry's sequence number, -1 for an empty ledger
 * @param hash its SHA-256 in lowercase hex
 */
public record LedgerHead(long seq, String hash) {

    private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");

    /**
     * Checks the head.
     *
     * @throws IllegalArgumentException if the sequence number is below -1 or the hash is not 64
     *     lowercase hex digits
     */
    public LedgerHead {
        if (seq < -1) {
            throw new IllegalArgumentException(
                    "ledger head: expected a sequence number >= -1, got " + seq);
        }
        if (hash == null || !HEX.matcher(hash).matches()) {
            throw new IllegalArgumentException(
                    "ledger head: expected 64 lowercase hex digits as the hash, got "
                            + (hash == null ? "null" : hash.length() + " characters"));
        }
    }

    /**
     * Parses {@code SEQ:HASH}, as {@link #toString()} writes it; spaces around either part are
     * ignored.
     *
     * @param text the head as text
     * @return the head
     * @throws IllegalArgumentException if the text is null, has no colon, or either part is
     *     malformed
     */
    public static LedgerHead parse(String text) {
        int colon = text == null ? -1 : text.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(
                    "ledger head: expected SEQ:HASH, got "
                            + (text == null ? "null" : "'" + text + "'"));
        }
        long seq;
        try {
            seq = Long.parseLong(text.substring(0, colon).strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "ledger head: expected a number before ':', got '"
                            + text.substring(0, colon)
                            + "'");
        }
        return new LedgerHead(seq, text.substring(colon + 1).strip());
    }

    /**
     * The form an outside witness records and {@link #parse} reads.
     *
     * @return {@code SEQ:HASH}
     */
    @Override
    public String toString() {
        return seq + ":" + hash;
    }
}
