/**
 * Spring AI's {@code VectorStore} over one collection of an embedded store, in one tenant, with its
 * filter expressions translated to the store's, and a Nepenthe {@code Embedder} as Spring AI's
 * {@code EmbeddingModel}. May use store-core's API packages and Spring AI, nothing internal.
 */
package dev.nepenthe.springai;
