package dev.nepenthe.core.storage;

import dev.nepenthe.core.crypto.KeyedHash;
import dev.nepenthe.core.crypto.Keystore;

/** What every collection's storage shares within one store: keys, hashing, the tombstone journal. */
public record StoreContext(Keystore keystore, KeyedHash hashes, TombstoneJournal journal, Durability durability,
        long checkpointBytes, int shardBuckets) {}
