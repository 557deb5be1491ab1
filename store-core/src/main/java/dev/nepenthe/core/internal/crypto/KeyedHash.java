package dev.nepenthe.core.internal.crypto;

import dev.nepenthe.core.internal.io.Utf8;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
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

    /**
     * Where each part is encoded before the Mac reads it; zeros between uses (see {@link #update}).
     */
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[256]);

    public KeyedHash(MasterKey master) {
        byte[] k = master.derive("keyed-hash");
        this.key = new SecretKeySpec(k, "HmacSHA256");
        Arrays.fill(k, (byte) 0);
        this.mac =
                ThreadLocal.withInitial(
                        () -> {
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
     * The first 128 bits of the hash of ({@code kind}, {@code part}, {@code value}) into {@code
     * out[at]} and {@code out[at + 1]}: keys of the store's in-memory indexes, which need neither
     * the whole hash nor an object per call.
     */
    public void prefix(String kind, String part, String value, long[] out, int at) {
        Mac m = mac.get();
        update(m, kind);
        update(m, part);
        update(m, value);
        finish(m, out, at);
    }

    /**
     * {@link #prefix(String, String, String, long[], int)} with a number's 8 bytes as the value.
     */
    public void prefix(String kind, String part, long value, long[] out, int at) {
        Mac m = mac.get();
        update(m, kind);
        update(m, part);
        byte[] b = SCRATCH.get();
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (value >>> (56 - 8 * i));
        }
        m.update(b, 0, 8);
        Arrays.fill(b, 0, 8, (byte) 0);
        finish(m, out, at);
    }

    /** {@link #prefix(String, String, String, long[], int)} of a kind and one part. */
    public void prefix(String kind, String part, long[] out, int at) {
        Mac m = mac.get();
        update(m, kind);
        update(m, part);
        finish(m, out, at);
    }

    private static void finish(Mac m, long[] out, int at) {
        byte[] b = SCRATCH.get();
        try {
            m.doFinal(b, 0);
        } catch (ShortBufferException e) {
            throw new IllegalStateException(e); // the scratch buffer holds at least 256 bytes
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (b[i] & 0xff);
            lo = (lo << 8) | (b[8 + i] & 0xff);
        }
        Arrays.fill(b, 0, LENGTH, (byte) 0);
        out[at] = hi;
        out[at + 1] = lo;
    }

    /**
     * A part's bytes go through one buffer per thread, wiped after each part: an id or a subject's
     * name is plaintext, and {@code getBytes} would leave a copy of it on the heap for each hash
     * (two per record at an open). The length prefix is written by hand too: a ByteBuffer per part
     * was a tenth of the samples in a profile of a new JVM's open.
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
    // equals, hashCode and the accessor are overridden below to compare and copy the bytes.
    @SuppressWarnings("ArrayRecordComponent")
    public record Hash(byte[] bytes) {
        public Hash {
            if (bytes.length != LENGTH) {
                throw new IllegalArgumentException(
                        "hash: expected " + LENGTH + " bytes, got " + bytes.length);
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
