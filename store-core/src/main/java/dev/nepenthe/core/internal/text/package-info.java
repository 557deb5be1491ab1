/**
 * Internal, not API: a collection's text index on Lucene (BM25) in a directory whose every file is
 * encrypted under a key of its own, the analyzers a collection may name, and the opener that
 * rebuilds the index from the records when its files cannot be read. May use Lucene,
 * internal.crypto and internal.io; never the engines.
 */
package dev.nepenthe.core.internal.text;
