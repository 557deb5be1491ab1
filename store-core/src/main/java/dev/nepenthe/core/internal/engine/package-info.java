/**
 * Internal, not API: the engine behind each {@code VectorCollection}: the record catalogue and its
 * bitmaps, the metadata index, the off-heap vector column, search (vector, text and fused) and the
 * persisted index generations. May use storage, text, index, crypto, io, memory, record and the
 * kernels; never internal.forget (which drives it) nor the {@code Nepenthe} facade.
 */
package dev.nepenthe.core.internal.engine;
