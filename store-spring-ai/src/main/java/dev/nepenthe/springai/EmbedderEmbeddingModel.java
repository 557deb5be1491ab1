package dev.nepenthe.springai;

import dev.nepenthe.adapter.internal.EmbedderBatches;
import dev.nepenthe.core.embed.Embedder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.Embedding;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;

/**
 * A Nepenthe {@link Embedder} (such as store-embed's bundled all-MiniLM-L6-v2) as Spring AI's
 * {@link EmbeddingModel}, so the model a collection embeds with can also serve Spring AI's other
 * stores and clients. Request options are ignored: the embedder has none.
 */
public final class EmbedderEmbeddingModel implements EmbeddingModel {

    private final Embedder embedder;

    /**
     * Wraps an embedder.
     *
     * @param embedder the embedder
     * @throws NullPointerException if it is null
     */
    public EmbedderEmbeddingModel(Embedder embedder) {
        this.embedder = Objects.requireNonNull(embedder, "embedder");
    }

    /**
     * Embeds the request's texts with one {@link Embedder#embedAll} call.
     *
     * @param request the texts
     * @return one embedding per text, indexed in order
     */
    @Override
    public EmbeddingResponse call(EmbeddingRequest request) {
        List<String> texts = request.getInstructions();
        List<float[]> vectors = EmbedderBatches.embedAll(embedder, texts);
        List<Embedding> out = new ArrayList<>(vectors.size());
        for (int i = 0; i < vectors.size(); i++) {
            out.add(new Embedding(vectors.get(i), i));
        }
        return new EmbeddingResponse(out);
    }

    /**
     * Embeds a document's text (its metadata plays no part).
     *
     * @param document a text document
     * @return the vector
     */
    @Override
    public float[] embed(Document document) {
        return embedder.embed(document.getText());
    }

    /**
     * The embedder's dimension, without embedding anything.
     *
     * @return the dimension
     */
    @Override
    public int dimensions() {
        return embedder.dimension();
    }
}
