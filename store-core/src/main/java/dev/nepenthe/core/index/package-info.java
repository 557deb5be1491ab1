/**
 * The vector index SPI: {@link dev.nepenthe.core.index.VectorIndex} and {@link
 * dev.nepenthe.core.index.VectorIndexFactory} (found with the service loader, so store-core never
 * depends on an index module) and the values they exchange with the store: configs, accept filters,
 * search parameters and results, integrity reports. API; may use dev.nepenthe.core, nothing
 * internal.
 */
package dev.nepenthe.core.index;
