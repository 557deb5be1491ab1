/**
 * The bundled embedder (all-MiniLM-L6-v2 run in-process with ONNX Runtime, loaded on first use) and
 * a chunker that splits text to fit it. Implements store-core's {@code Embedder} SPI on
 * langchain4j's embeddings and DJL's tokenizer; of store-core's internals it uses only {@code
 * NoPhoneHome}, so those libraries never report usage.
 */
package dev.nepenthe.embed;
