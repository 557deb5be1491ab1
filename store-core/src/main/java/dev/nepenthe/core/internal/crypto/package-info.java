/**
 * Internal, not API: the store's keys and ciphers. The master key, per-subject data keys in the
 * fixed-slot keystore, AES-GCM sealing of records, AES-CTR for files read at random offsets, and
 * the keyed hashes that stand in for tenants, subjects and ids on disk. May use internal.io and the
 * JDK's JCE; never the engines (internal.engine, internal.forget).
 */
package dev.nepenthe.core.internal.crypto;
