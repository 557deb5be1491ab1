package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.Durability;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;

/**
 * What every collection's storage shares within one store: keys, hashing, the tombstone
 * journal, the sealer (always AES-GCM in a store; benchmarks substitute their own) and the
 * write settings.
 */
public record StoreContext(Keystore keystore, KeyedHash hashes, TombstoneJournal journal, RecordSealer sealer,
        Durability durability, long checkpointBytes, int shardBuckets) {}
