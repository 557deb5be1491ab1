package dev.nepenthe.core.audit;

import dev.nepenthe.core.internal.evidence.SigningKey;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.util.Base64;

/**
 * A signed document a data subject or auditor can keep and verify offline: the canonical JSON of
 * the receipt's fields, a separator line, and the Ed25519 signature of the JSON bytes.
 *
 * <pre>
 * {"erasureClass":...,"operation":"...","scope":"...","sealedAt":...,...}
 * --
 * signature ed25519 BASE64
 * </pre>
 */
public final class Receipt {
    /** What separates the signed JSON from the signature line. */
    public static final String SEPARATOR = "\n--\nsignature ed25519 ";

    private Receipt() {}

    /**
     * The signed JSON of a document whose signature verifies under {@code key}. Checks the
     * signature only; {@link LedgerAudit#checkReceipt} also checks the ledger holds the entry.
     *
     * @param document the receipt as issued
     * @param key the store's Ed25519 public key
     * @return the JSON part, or null when there is no separator, the signature is not base64 or it
     *     does not verify
     */
    public static String verify(String document, PublicKey key) {
        int at = document.lastIndexOf(SEPARATOR);
        if (at < 0) {
            return null;
        }
        String json = document.substring(0, at);
        byte[] sig;
        try {
            sig = Base64.getDecoder().decode(document.substring(at + SEPARATOR.length()).trim());
        } catch (IllegalArgumentException e) {
            return null;
        }
        return SigningKey.verify(key, json.getBytes(StandardCharsets.UTF_8), sig) ? json : null;
    }
}
