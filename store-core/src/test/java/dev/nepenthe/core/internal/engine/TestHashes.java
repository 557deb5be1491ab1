package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.MasterKey;
import java.security.SecureRandom;

/** A keyed hash under a key of its own, for catalogues a test builds without a store. */
final class TestHashes {

    private TestHashes() {}

    static KeyedHash fresh() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return new KeyedHash(MasterKey.of(key));
    }
}
