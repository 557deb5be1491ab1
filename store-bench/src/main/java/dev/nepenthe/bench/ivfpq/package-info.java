/**
 * Nepenthe's IVF-PQ beside FAISS {@code IndexIVFPQ} on the same data: build time, QPS and recall at
 * several nprobe, and the tables and plot docs/BENCHMARKS.md carries. May use store-ivfpq,
 * store-core's exact index as ground truth and the seeded fixtures.
 */
package dev.nepenthe.bench.ivfpq;
