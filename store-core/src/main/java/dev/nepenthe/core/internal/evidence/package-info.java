/**
 * Internal, not API: the append-only, hash-chained, signed evidence ledger, the store's Ed25519
 * signing key and the canonical JSON both sign. May use dev.nepenthe.core, internal.io and the
 * audit API whose formats it writes; never the engines.
 */
package dev.nepenthe.core.internal.evidence;
