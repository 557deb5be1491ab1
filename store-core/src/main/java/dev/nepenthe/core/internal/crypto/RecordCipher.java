package dev.nepenthe.core.internal.crypto;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * AES-256-GCM with a fresh 96-bit random nonce per message. Sealed form: {@code nonce (12) ||
 * ciphertext || tag (16)}. The associated data binds the ciphertext to where it belongs (tenant,
 * subject, record id and version, as keyed hashes), so a record's ciphertext cannot be replayed
 * under another id or version.
 */
public final class RecordCipher {
    public static final int NONCE = 12;
    public static final int TAG = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * Cipher.getInstance walks the provider list on every call; one instance per thread is reused.
     */
    private static final ThreadLocal<Cipher> GCM =
            ThreadLocal.withInitial(
                    () -> {
                        try {
                            return Cipher.getInstance("AES/GCM/NoPadding");
                        } catch (GeneralSecurityException e) {
                            throw new IllegalStateException(
                                    "AES/GCM/NoPadding unavailable in this JVM", e);
                        }
                    });

    private RecordCipher() {}

    public static byte[] seal(DataKey key, byte[] aad, byte[] plaintext) {
        byte[] nonce = new byte[NONCE];
        RANDOM.nextBytes(nonce);
        try {
            Cipher c = GCM.get();
            c.init(Cipher.ENCRYPT_MODE, key.secretKey(), new GCMParameterSpec(TAG * 8, nonce));
            c.updateAAD(aad);
            byte[] out = new byte[NONCE + c.getOutputSize(plaintext.length)];
            System.arraycopy(nonce, 0, out, 0, NONCE);
            c.doFinal(plaintext, 0, plaintext.length, out, NONCE);
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM encryption failed", e);
        }
    }

    /**
     * Opens a record sealed by {@link #seal} under {@code key} and {@code aad}.
     *
     * @throws AEADBadTagException if the ciphertext, its associated data or the key is wrong
     */
    public static byte[] open(DataKey key, byte[] aad, byte[] sealed) throws AEADBadTagException {
        byte[] out = new byte[sealed.length];
        try {
            return Arrays.copyOf(out, openInto(key, aad, sealed, sealed.length, out));
        } finally {
            Arrays.fill(out, (byte) 0);
        }
    }

    /**
     * Decrypts the sealed message in the first {@code length} bytes of {@code sealed} into {@code
     * out} from its start and returns the plaintext's length: what an open does for every stored
     * record, reading each into one buffer and decrypting it into another, instead of two arrays
     * per record. {@code out} must hold at least {@code length} bytes; on a failure it may hold
     * part of a plaintext, so the caller zeros it either way.
     *
     * @throws AEADBadTagException if the ciphertext, its associated data or the key is wrong
     */
    public static int openInto(DataKey key, byte[] aad, byte[] sealed, int length, byte[] out)
            throws AEADBadTagException {
        if (length < 0 || length > sealed.length) {
            throw new IllegalArgumentException(
                    "sealed length "
                            + length
                            + " for a buffer of "
                            + sealed.length
                            + " bytes (expected 0 to the buffer's length)");
        }
        if (length < NONCE + TAG) {
            throw new AEADBadTagException(
                    "sealed message of " + length + " bytes is shorter than nonce and tag");
        }
        if (out.length < length) {
            throw new IllegalArgumentException(
                    "output buffer of "
                            + out.length
                            + " bytes for a sealed message of "
                            + length
                            + " (expected at least as many)");
        }
        try {
            Cipher c = GCM.get();
            c.init(
                    Cipher.DECRYPT_MODE,
                    key.secretKey(),
                    new GCMParameterSpec(TAG * 8, sealed, 0, NONCE));
            c.updateAAD(aad);
            return c.doFinal(sealed, NONCE, length - NONCE, out, 0);
        } catch (AEADBadTagException e) {
            throw e;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM decryption failed", e);
        }
    }

    /** Associated data from hashes and a version: fixed layout, so nothing is ambiguous. */
    public static byte[] aad(KeyedHash.Hash subject, KeyedHash.Hash record, long version) {
        return ByteBuffer.allocate(KeyedHash.LENGTH * 2 + 8)
                .put(subject.bytes())
                .put(record.bytes())
                .putLong(version)
                .array();
    }
}
