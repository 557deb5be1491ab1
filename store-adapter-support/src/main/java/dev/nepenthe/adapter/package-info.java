/**
 * What Nepenthe's framework adapters (store-langchain4j, store-spring-ai) share: {@link
 * dev.nepenthe.adapter.NepentheAdapter}, the tenant, subject, delete and forget behaviour each
 * adapter's store extends. Uses store-core's public API only, and no framework: each adapter
 * translates its framework's types (filters, documents, embeddings) itself.
 */
package dev.nepenthe.adapter;
