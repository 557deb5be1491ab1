/**
 * LangChain4j's {@code EmbeddingStore} over one collection of an embedded store, in one tenant,
 * with its metadata and filters translated to the store's, and a Nepenthe {@code Embedder} as
 * LangChain4j's {@code EmbeddingModel}. May use store-core's API packages and langchain4j-core,
 * nothing internal.
 */
package dev.nepenthe.langchain4j;
