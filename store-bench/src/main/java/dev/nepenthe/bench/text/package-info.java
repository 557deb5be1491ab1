/**
 * What text costs on a real corpus: embedding, ingest, BM25 and hybrid search beside Lucene used
 * directly, and forgets with and without a text index. May use store-core's API, store-embed,
 * Lucene and the data package.
 */
package dev.nepenthe.bench.text;
