package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.internal.crypto.DataKey;
import dev.nepenthe.core.internal.crypto.RecordCipher;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;

/**
 * How record bytes are sealed before they reach a file. The store always uses {@link #AES_GCM}; the
 * interface exists so the ingest benchmark can measure, in the same run, what encryption costs
 * against a pass-through of its own (which never ships in the store).
 */
public interface RecordSealer {

    byte[] seal(DataKey key, byte[] aad, byte[] plaintext);

    byte[] open(DataKey key, byte[] aad, byte[] sealed) throws AEADBadTagException;

    /**
     * Opens the sealed message in the first {@code length} bytes of {@code sealed} (a buffer reused
     * from record to record) into {@code out} (at least {@code length} bytes) and returns the
     * plaintext's length. The caller zeros {@code out} after use, whatever happened.
     */
    default int openInto(DataKey key, byte[] aad, byte[] sealed, int length, byte[] out)
            throws AEADBadTagException {
        byte[] plain =
                open(key, aad, length == sealed.length ? sealed : Arrays.copyOf(sealed, length));
        try {
            System.arraycopy(plain, 0, out, 0, plain.length);
            return plain.length;
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
    }

    /** AES-256-GCM with a fresh nonce per record (see {@link RecordCipher}). */
    RecordSealer AES_GCM =
            new RecordSealer() {
                @Override
                public byte[] seal(DataKey key, byte[] aad, byte[] plaintext) {
                    return RecordCipher.seal(key, aad, plaintext);
                }

                @Override
                public byte[] open(DataKey key, byte[] aad, byte[] sealed)
                        throws AEADBadTagException {
                    return RecordCipher.open(key, aad, sealed);
                }

                @Override
                public int openInto(DataKey key, byte[] aad, byte[] sealed, int length, byte[] out)
                        throws AEADBadTagException {
                    return RecordCipher.openInto(key, aad, sealed, length, out);
                }
            };
}
