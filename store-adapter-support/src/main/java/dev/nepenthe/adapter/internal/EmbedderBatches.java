package dev.nepenthe.adapter.internal;

import dev.nepenthe.core.embed.Embedder;
import java.util.List;
import java.util.Objects;

/**
 * Embeds a batch of texts through an {@link Embedder} and checks that one vector came back per
 * text. Both adapters wrap an embedder as their framework's embedding model; an embedder that drops
 * or adds a vector would otherwise pair texts with the wrong vectors without a word.
 */
public final class EmbedderBatches {

    private EmbedderBatches() {}

    /**
     * Embeds the texts with one {@link Embedder#embedAll} call.
     *
     * @param embedder the embedder
     * @param texts the texts
     * @return one vector per text, in order
     * @throws IllegalStateException if the embedder returned another number of vectors
     */
    public static List<float[]> embedAll(Embedder embedder, List<String> texts) {
        Objects.requireNonNull(embedder, "embedder");
        Objects.requireNonNull(texts, "texts");
        List<float[]> vectors = embedder.embedAll(texts);
        if (vectors.size() != texts.size()) {
            throw new IllegalStateException(
                    "embedder '"
                            + embedder.name()
                            + "': expected "
                            + texts.size()
                            + " vectors, got "
                            + vectors.size());
        }
        return vectors;
    }
}
