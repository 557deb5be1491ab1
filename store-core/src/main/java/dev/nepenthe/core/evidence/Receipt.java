package dev.nepenthe.core.evidence;

import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.util.Base64;
import java.util.Map;

/**
 * A signed document a data subject or auditor can keep and verify offline: the canonical JSON
 * of the receipt's fields, a separator line, and the Ed25519 signature of the JSON bytes.
 *
 * <pre>
 * {"erasureClass":...,"operation":"...","scope":"...","sealedAt":...,...}
 * --
 * signature ed25519 BASE64
 * </pre>
 */
public final class Receipt {
    static final String SEPARATOR = "\n--\nsignature ed25519 ";

    private Receipt() {}

    /** Signs {@code fields} and returns the document. */
    public static String issue(Map<String, Object> fields, SigningKey key) {
        String json = CanonicalJson.encode(fields);
        byte[] sig = key.sign(json.getBytes(StandardCharsets.UTF_8));
        return json + SEPARATOR + Base64.getEncoder().encodeToString(sig) + "\n";
    }

    /** The signed JSON of a document whose signature verifies under {@code key}, or null. */
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
