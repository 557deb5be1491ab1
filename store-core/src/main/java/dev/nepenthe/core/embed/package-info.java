/**
 * The embedder SPI: an {@link dev.nepenthe.core.embed.Embedder} turns text into vectors for the
 * collections created with its name, and for their text queries (store-embed ships the bundled
 * model). API; JDK only.
 */
package dev.nepenthe.core.embed;
