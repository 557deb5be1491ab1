package dev.nepenthe.core.internal.crypto;

import java.security.GeneralSecurityException;
import javax.crypto.Cipher;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.IvParameterSpec;

/**
 * AES-256 in counter mode over a whole file, positioned at any byte: what a file that is read at
 * random offsets (a Lucene segment) is encrypted with. Counter mode gives confidentiality only; the
 * files it protects carry their own checksums of the plaintext (Lucene's footers), and the key of
 * each file is used for that one file, with a random initial counter.
 */
public final class CounterCipher {

    public static final int IV_LENGTH = 16;
    private static final int BLOCK = 16;

    /**
     * The most bytes one call into the cipher takes (see {@link #crypt}). In a new JVM, counter
     * mode runs as plain Java until C2 compiles the cipher's inner method, which it does after some
     * thousands of calls, and only then uses the AES instructions: small calls reach that count
     * within the first megabytes of a file, large ones only after hundreds. Measured in
     * docs/BENCHMARKS.md, "The index file is decrypted 2 KiB per call into the cipher".
     */
    static final int SLICE = 2048;

    /**
     * Cipher.getInstance walks the provider list on every call: one instance per thread is
     * re-initialised instead.
     */
    private static final ThreadLocal<Cipher> PER_THREAD =
            ThreadLocal.withInitial(CounterCipher::newCipher);

    private CounterCipher() {}

    private static Cipher newCipher() {
        try {
            return Cipher.getInstance("AES/CTR/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES/CTR/NoPadding unavailable in this JVM", e);
        }
    }

    /**
     * This thread's cipher, positioned at byte {@code position} of the stream whose first byte sits
     * at counter {@code iv}: for a short run of work on this thread (one buffer), since the next
     * call on the thread re-initialises it.
     */
    public static Cipher forThisThread(DataKey key, byte[] iv, long position) {
        Cipher c = PER_THREAD.get();
        init(c, key, iv, position);
        return c;
    }

    /**
     * A cipher that encrypts or decrypts (the same operation in counter mode) the stream whose
     * first byte sits at counter {@code iv}, starting at byte {@code position}.
     */
    public static Cipher at(DataKey key, byte[] iv, long position) {
        Cipher c = newCipher();
        init(c, key, iv, position);
        return c;
    }

    /**
     * Encrypts or decrypts {@code length} bytes of {@code in} into {@code out} with a counter-mode
     * cipher, in calls of at most {@link #SLICE} bytes, so that a new JVM reaches the compiled
     * cipher within the first megabytes of a large file. {@code in} and {@code out} must not be the
     * same array (asked to work in place, the JCE copies its input first).
     *
     * @throws IllegalArgumentException if {@code in} and {@code out} are the same array
     */
    // Identity on purpose: the same array, not equal contents, is what cannot work.
    @SuppressWarnings("ReferenceEquality")
    public static void crypt(
            Cipher c, byte[] in, int offset, int length, byte[] out, int outOffset) {
        if (in == out) {
            throw new IllegalArgumentException(
                    "expected distinct input and output arrays, got the same array");
        }
        try {
            for (int done = 0; done < length; ) {
                int n = Math.min(SLICE, length - done);
                int wrote = c.update(in, offset + done, n, out, outOffset + done);
                if (wrote != n) {
                    throw new IllegalStateException(
                            "counter mode returned " + wrote + " bytes for " + n);
                }
                done += n;
            }
        } catch (ShortBufferException e) {
            throw new IllegalArgumentException(
                    "output of "
                            + out.length
                            + " bytes, expected room for "
                            + length
                            + " at offset "
                            + outOffset,
                    e);
        }
    }

    /** Re-initialises {@code c} (from {@link #at}) at another position. */
    public static void init(Cipher c, DataKey key, byte[] iv, long position) {
        byte[] counter = iv.clone();
        long block = position / BLOCK;
        // Add the block number to the 128-bit big-endian counter, as the cipher itself counts.
        for (int i = BLOCK - 1; i >= 0 && block != 0; i--) {
            long sum = (counter[i] & 0xFFL) + (block & 0xFF);
            counter[i] = (byte) sum;
            block = (block >>> 8) + (sum >>> 8);
        }
        try {
            c.init(Cipher.ENCRYPT_MODE, key.secretKey(), new IvParameterSpec(counter));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-CTR initialisation failed", e);
        }
        int skip = (int) (position % BLOCK);
        if (skip > 0) {
            c.update(new byte[skip]);
        }
    }
}
