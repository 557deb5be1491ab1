package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.CorruptFileException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.zip.CRC32C;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The journal's record format, in one place. A record is, big-endian:
 *
 * <ul>
 *   <li>the log index (8 bytes), which is also the record's additional authenticated data, so a
 *       record copied to another index does not decrypt;
 *   <li>the ciphertext's length (4), the GCM tag included;
 *   <li>the nonce (12), random per record;
 *   <li>the AES-256-GCM ciphertext of the payload and its 16-byte tag;
 *   <li>a CRC32C (4) of everything before it, which tells a torn or damaged record from a wrong key
 *       before any decryption is tried.
 * </ul>
 *
 * A random nonce per record is safe for the number of records one key sees here: a segment rolls at
 * {@link PayloadJournal#ROLL_BYTES}, long before one key has sealed enough records for random GCM
 * nonces to risk a collision (NIST SP 800-38D bounds them at 2^32 per key).
 */
final class JournalSegmentRecords {

    static final int INDEX_BYTES = 8;
    static final int LENGTH_BYTES = 4;
    static final int NONCE_BYTES = 12;
    static final int TAG_BYTES = 16;
    static final int CRC_BYTES = 4;

    /** Index, length and nonce. */
    static final int HEADER_BYTES = INDEX_BYTES + LENGTH_BYTES + NONCE_BYTES;

    /** What a record adds to its payload. */
    static final int OVERHEAD = HEADER_BYTES + TAG_BYTES + CRC_BYTES;

    /** The largest payload whose record length still fits an int. */
    static final int MAX_PAYLOAD = Integer.MAX_VALUE - 64;

    private static final int TAG_BITS = TAG_BYTES * 8;

    private JournalSegmentRecords() {}

    /** A cipher for {@link #seal} and {@link #open}; not thread-safe. */
    static Cipher newCipher() {
        try {
            return Cipher.getInstance("AES/GCM/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM offers no AES/GCM/NoPadding cipher", e);
        }
    }

    /** The whole record holding {@code payload} encrypted under {@code key}. */
    static byte[] seal(Cipher cipher, byte[] key, SecureRandom random, long index, byte[] payload) {
        int ctLength = payload.length + TAG_BYTES;
        byte[] record = new byte[HEADER_BYTES + ctLength + CRC_BYTES];
        ByteBuffer buf = ByteBuffer.wrap(record);
        buf.putLong(index).putInt(ctLength);
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        buf.put(nonce);
        try {
            cipher.init(
                    Cipher.ENCRYPT_MODE,
                    new SecretKeySpec(key, "AES"),
                    new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(record, 0, INDEX_BYTES);
            int n = cipher.doFinal(payload, 0, payload.length, record, HEADER_BYTES);
            if (n != ctLength) {
                throw new IllegalStateException(
                        "AES-GCM wrote " + n + " bytes of ciphertext, expected " + ctLength);
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("encrypting the record for index " + index, e);
        }
        CRC32C crc = new CRC32C();
        crc.update(record, 0, record.length - CRC_BYTES);
        buf.putInt(record.length - CRC_BYTES, (int) crc.getValue());
        return record;
    }

    /**
     * Why {@code record} is not a whole, undamaged record for {@code index}, or null when it is:
     * its length field, its checksum and its index field are checked, nothing is decrypted.
     */
    static String damage(byte[] record, long index) {
        if (record.length < OVERHEAD) {
            return "expected at least " + OVERHEAD + " bytes, found " + record.length;
        }
        ByteBuffer buf = ByteBuffer.wrap(record);
        int ctLength = buf.getInt(INDEX_BYTES);
        if (ctLength != record.length - HEADER_BYTES - CRC_BYTES) {
            return "length field says "
                    + ctLength
                    + " bytes of ciphertext, the record holds "
                    + (record.length - HEADER_BYTES - CRC_BYTES);
        }
        int stored = buf.getInt(record.length - CRC_BYTES);
        int actual = checksum(record, record.length - CRC_BYTES);
        if (stored != actual) {
            return "CRC32C expected " + hex(stored) + ", computed " + hex(actual);
        }
        long found = buf.getLong(0);
        if (found != index) {
            return "expected index " + index + ", the record carries " + found;
        }
        return null;
    }

    /**
     * The payload of {@code record}, which holds {@code index} in {@code file}.
     *
     * @throws CorruptFileException when the record is damaged or does not decrypt under {@code key}
     */
    static byte[] open(Cipher cipher, byte[] key, Path file, long index, byte[] record)
            throws CorruptFileException {
        String damage = damage(record, index);
        if (damage != null) {
            throw new CorruptFileException(
                    file,
                    "payload journal: the record for index "
                            + index
                            + " is damaged: "
                            + damage
                            + " (hardware problem or the file was modified?)");
        }
        try {
            cipher.init(
                    Cipher.DECRYPT_MODE,
                    new SecretKeySpec(key, "AES"),
                    new GCMParameterSpec(
                            TAG_BITS, record, INDEX_BYTES + LENGTH_BYTES, NONCE_BYTES));
            cipher.updateAAD(record, 0, INDEX_BYTES);
            return cipher.doFinal(record, HEADER_BYTES, record.length - HEADER_BYTES - CRC_BYTES);
        } catch (AEADBadTagException e) {
            throw new CorruptFileException(
                    file,
                    "payload journal: the record for index "
                            + index
                            + " does not decrypt under its segment's key: expected a valid"
                            + " AES-GCM tag, found a mismatch (the key file or the record was"
                            + " modified?)",
                    e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("decrypting the record for index " + index, e);
        }
    }

    /** CRC32C of the first {@code length} bytes, as stored. */
    static int checksum(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }

    static String hex(int value) {
        return String.format("%08x", value);
    }
}
