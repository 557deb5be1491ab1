/**
 * The contract every vector index keeps ({@link dev.nepenthe.testing.index.VectorIndexContract}),
 * for an index here or in another project to prove itself with one JUnit subclass, and the recall
 * measure it uses. May use store-core's index SPI and its exact index (the oracle), JUnit and the
 * fixtures.
 */
package dev.nepenthe.testing.index;
