/**
 * Internal, not API: the store's way into a {@code VectorRecord}'s own arrays without copies, for
 * the engine, the forget engine and the storage. May use dev.nepenthe.core only.
 */
package dev.nepenthe.core.internal.record;
