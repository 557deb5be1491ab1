/**
 * What Nepenthe's framework adapters (store-langchain4j, store-spring-ai) do alike: one collection
 * seen in one tenant with a subject key ({@link dev.nepenthe.adapter.internal.TenantCollection}),
 * and batch embedding checked for its count ({@link
 * dev.nepenthe.adapter.internal.EmbedderBatches}). Uses store-core's public API only, and no
 * framework: each adapter translates its framework's types (filters, documents, embeddings) itself
 * and hands the store's own types here. Internal: it may change at any commit, and is for the
 * adapters, not for users.
 */
package dev.nepenthe.adapter.internal;
