package dev.nepenthe.langchain4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bundled embedder seen through LangChain4j's {@code EmbeddingModel}: the vectors are the
 * embedder's own, one by one and in a batch, in order.
 */
class EmbedderModelTest {

    @Test
    void givesTheEmbeddersOwnVectorsInOrder() {
        MiniLmEmbedder embedder = new MiniLmEmbedder();
        EmbedderModel model = new EmbedderModel(embedder);
        List<String> texts =
                List.of(
                        "Alice moved to Lisbon in May.",
                        "The night train leaves at ten.",
                        "Tomatoes need sun.");

        assertEquals(MiniLmEmbedder.DIMENSION, model.dimension());
        assertEquals(MiniLmEmbedder.NAME, model.modelName());
        assertArrayEquals(
                embedder.embed(texts.get(0)), model.embed(texts.get(0)).content().vector());
        List<Embedding> batch =
                model.embedAll(texts.stream().map(TextSegment::from).toList()).content();
        assertEquals(texts.size(), batch.size());
        for (int i = 0; i < texts.size(); i++) {
            // The oracle: the embedder asked directly, one text at a time.
            assertArrayEquals(
                    embedder.embed(texts.get(i)), batch.get(i).vector(), 1e-6f, "text " + i);
        }
    }
}
