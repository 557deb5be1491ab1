package dev.nepenthe.bench.text;

import static dev.nepenthe.bench.text.TextBenchHelpers.log;
import static dev.nepenthe.bench.text.TextBenchHelpers.secondsSince;

import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.embed.MiniLmEmbedder;

/**
 * The MiniLM embedder, loaded on first use and once only, so that a run whose sections never embed
 * never loads the model, and the sections that do share one.
 */
final class LazyEmbedder {

    private MiniLmEmbedder embedder;
    private double loadSeconds;

    Embedder get() {
        if (embedder == null) {
            long t0 = System.nanoTime();
            embedder = new MiniLmEmbedder();
            embedder.embed(
                    "warm the model up"); // loading is lazy in parts; a first call finishes it
            loadSeconds = secondsSince(t0);
            log("embedder %s loaded in %.1f s", MiniLmEmbedder.NAME, loadSeconds);
        }
        return embedder;
    }

    /** Seconds the model took to load and answer its first call. */
    double loadSeconds() {
        return loadSeconds;
    }
}
