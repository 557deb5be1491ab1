package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.Durability;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.io.TestPoints;

/**
 * What every collection's storage shares within one store: keys, hashing, the tombstone journal,
 * the sealer (always AES-GCM in a store; benchmarks substitute their own), the write settings and
 * the read-only latch that the first failed write trips, and the store's test points.
 */
public record StoreContext(
        Keystore keystore,
        KeyedHash hashes,
        TombstoneJournal journal,
        RecordSealer sealer,
        Durability durability,
        long checkpointBytes,
        int shardBuckets,
        StorageFault fault,
        TestPoints testPoints) {

    /**
     * The keyed hash of one (collection, tenant, subject) scope: what its data key is filed under
     * and what its records' clear headers carry.
     */
    KeyedHash.Hash scopeHash(String collectionId, String tenant, String subject) {
        return hashes.of("subject", collectionId, tenant, subject == null ? "" : subject);
    }
}
