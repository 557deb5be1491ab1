/**
 * Nepenthe's HNSW beside its peers (Lucene, jvector, and hnswlib and FAISS through Python), each
 * run the way its users run it: build time, recall against QPS, memory, scaling, and what deletes
 * cost and keep. May use store-hnsw, store-core's exact index as ground truth, Lucene, jvector and
 * the seeded fixtures.
 */
package dev.nepenthe.bench.hnsw;
