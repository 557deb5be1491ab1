package dev.nepenthe.core.internal.crypto;

import java.util.Arrays;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * One (tenant, subject)'s AES-256 data key, unwrapped in memory. {@link #wipe()} zeroes the bytes
 * this object holds; the JCE may keep its own copies until they are collected, which is why
 * destruction that counts happens in the keystore file.
 */
public final class DataKey {
    public static final int LENGTH = 32;

    private final byte[] bytes;
    private volatile boolean wiped;

    DataKey(byte[] bytes) {
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException(
                    "data key: expected " + LENGTH + " bytes, got " + bytes.length);
        }
        this.bytes = bytes.clone();
    }

    SecretKey secretKey() {
        if (wiped) {
            throw new IllegalStateException("data key was destroyed");
        }
        return new SecretKeySpec(bytes, "AES");
    }

    /** The raw key; only tests use it, to prove the key's bytes are gone from disk. */
    public byte[] exportForTest() {
        return bytes.clone();
    }

    void wipe() {
        wiped = true;
        Arrays.fill(bytes, (byte) 0);
    }

    public boolean isWiped() {
        return wiped;
    }

    @Override
    public String toString() {
        return "DataKey[" + (wiped ? "wiped" : "live") + "]";
    }
}
