package dev.nepenthe.core.internal.crypto;

import dev.nepenthe.core.internal.io.Utf8;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 under a key derived from the master key: what stands in for a tenant, subject or
 * record id wherever the store must name one on disk or in evidence without revealing it. A
 * dictionary attack on the hashes needs the master key.
 */
public final class KeyedHash {

    public static final int LENGTH = 32;
    private final SecretKeySpec key;
    /** An initialised Mac per thread: getInstance and init cost more than hashing a short id. */
    private final ThreadLocal<Mac> mac;
    /** Where each part is encoded before the Mac reads it; zeros between uses (see {@link #update}). */
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[256]);

    public KeyedHash(MasterKey master) {
        byte[] k = master.derive("keyed-hash");
        this.key = new SecretKeySpec(k, "HmacSHA256");
        Arrays.fill(k, (byte) 0);
        this.mac = ThreadLocal.withInitial(() -> {
            try {
                Mac m = Mac.getInstance("HmacSHA256");
                m.init(key);
                return m;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("HmacSHA256 unavailable", e);
            }
        });
    }

    /** Hash of a tuple of strings; each part is length-prefixed, so ("ab","c") != ("a","bc"). */
    public Hash of(String kind, String... parts) {
        Mac m = mac.get();
        // doFinal resets the Mac, so the next call on this thread starts clean.
        update(m, kind);
        for (String p : parts) {
            update(m, p == null ? "" : p);
        }
        return new Hash(m.doFinal());
    }

    /**
     * A part's bytes go through one buffer per thread, wiped after each part: an id or a
     * subject's name is plaintext, and {@code getBytes} would leave a copy of it on the heap
     * for each hash (two per record at an open). The length prefix is written by hand too: a
     * ByteBuffer per part was a tenth of the samples in a profile of a new JVM's open.
     */
    private static void update(Mac mac, String s) {
        byte[] b = SCRATCH.get();
        int room = 4 + Utf8.maxLength(s);
        if (b.length < room) {
            b = new byte[Math.max(room, 2 * b.length)];
            SCRATCH.set(b); // the old one was wiped after its last use
        }
        int n = Utf8.encode(s, b, 4);
        b[0] = (byte) (n >>> 24);
        b[1] = (byte) (n >>> 16);
        b[2] = (byte) (n >>> 8);
        b[3] = (byte) n;
        mac.update(b, 0, 4 + n);
        Arrays.fill(b, 0, 4 + n, (byte) 0);
    }

    /** Hash of (tenant, subject); a record about nobody uses the empty subject. */
    public Hash subject(String tenant, String subject) {
        return of("subject", tenant, subject);
    }

    /** Hash of (tenant, record id). */
    public Hash record(String tenant, String id) {
        return of("record", tenant, id);
    }

    public Hash tenant(String tenant) {
        return of("tenant", tenant);
    }

    /** 32 bytes with value equality; prints as hex. */
    public record Hash(byte[] bytes) {
        public Hash {
            if (bytes.length != LENGTH) {
                throw new IllegalArgumentException("hash: expected " + LENGTH + " bytes, got " + bytes.length);
            }
            bytes = bytes.clone();
        }

        @Override
        public byte[] bytes() {
            return bytes.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Hash h && Arrays.equals(bytes, h.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return HexFormat.of().formatHex(bytes);
        }
    }
}
