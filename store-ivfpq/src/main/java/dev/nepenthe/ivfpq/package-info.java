/**
 * An IVF-PQ index whose trained structures forget: codebooks kept as exact functions of the
 * training vectors that survive, inverted lists whose removals are physical, scalar codes beside
 * PQ, its checker and its file format; registered through the index SPI. May use store-core's index
 * SPI, vector kernels, internal.index and internal.io, and Lucene's scalar quantizer; never another
 * index module.
 */
package dev.nepenthe.ivfpq;
