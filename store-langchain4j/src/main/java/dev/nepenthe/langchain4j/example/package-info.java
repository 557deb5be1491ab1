/**
 * A runnable example, not API: the retrieval half of a RAG pipeline on LangChain4j's own classes
 * over Nepenthe. May use the adapter, store-core's API and store-embed's bundled model.
 */
package dev.nepenthe.langchain4j.example;
