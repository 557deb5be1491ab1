/**
 * JMH benchmarks of the vector kernels (pairs, batches, nearest centroid, PQ tables, normalising on
 * read), ours on the Vector API and in plain Java beside Lucene's. May use store-core's kernels,
 * jdk.incubator.vector and Lucene.
 */
package dev.nepenthe.bench.kernels;
