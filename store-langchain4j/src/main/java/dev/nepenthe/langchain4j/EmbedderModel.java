package dev.nepenthe.langchain4j;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import dev.nepenthe.adapter.internal.EmbedderBatches;
import dev.nepenthe.core.embed.Embedder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A Nepenthe {@link Embedder} (such as store-embed's bundled all-MiniLM-L6-v2) as LangChain4j's
 * {@link EmbeddingModel}, so one embedder serves both sides: LangChain4j's ingestor and retriever,
 * and a collection that embeds text itself (keyword and hybrid search, text-only records). Embeds a
 * batch with one {@link Embedder#embedAll} call; reports no token usage.
 */
public final class EmbedderModel implements EmbeddingModel {

    private final Embedder embedder;

    /**
     * Wraps an embedder.
     *
     * @param embedder the embedder; shared, so it must be safe for concurrent use if the model is
     * @throws NullPointerException if it is null
     */
    public EmbedderModel(Embedder embedder) {
        this.embedder = Objects.requireNonNull(embedder, "embedder");
    }

    /**
     * Embeds the segments' texts (their metadata plays no part).
     *
     * @param segments the segments
     * @return one embedding per segment, in order
     */
    @Override
    public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
        List<String> texts = new ArrayList<>(segments.size());
        for (TextSegment s : segments) {
            texts.add(s.text());
        }
        List<float[]> vectors = EmbedderBatches.embedAll(embedder, texts);
        List<Embedding> out = new ArrayList<>(vectors.size());
        for (float[] v : vectors) {
            out.add(Embedding.from(v));
        }
        return Response.from(out);
    }

    /**
     * The embedder's dimension, without embedding anything.
     *
     * @return the dimension
     */
    @Override
    public int dimension() {
        return embedder.dimension();
    }

    /**
     * The embedder's name, as collections record it.
     *
     * @return the name
     */
    @Override
    public String modelName() {
        return embedder.name();
    }
}
