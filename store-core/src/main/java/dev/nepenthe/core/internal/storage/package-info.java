/**
 * Internal, not API: a collection's durable, encrypted records. The write-ahead log, the segments
 * and their manifest, the record codec and sealer, the tombstone journal and the id map on
 * Chronicle Map. May use internal.crypto, internal.io, internal.record, Chronicle Map and
 * RoaringBitmap; never the engines.
 */
package dev.nepenthe.core.internal.storage;
