package dev.nepenthe.adapter.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.core.embed.Embedder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A batch comes back in order when the embedder keeps count, and is refused when it does not. */
class EmbedderBatchesTest {

    /** Embeds a text as its length and first character; drops the last text when told to. */
    private record Lengths(boolean dropsOne) implements Embedder {
        @Override
        public String name() {
            return "lengths";
        }

        @Override
        public int dimension() {
            return 2;
        }

        @Override
        public float[] embed(String text) {
            return new float[] {text.length(), text.charAt(0)};
        }

        @Override
        public List<float[]> embedAll(List<String> texts) {
            List<float[]> all = Embedder.super.embedAll(texts);
            return dropsOne ? all.subList(0, all.size() - 1) : all;
        }
    }

    @Test
    void aBatchComesBackInOrderOrIsRefusedWhenTheCountIsWrong() {
        List<String> texts = List.of("ab", "cde", "f");
        List<float[]> vectors = EmbedderBatches.embedAll(new Lengths(false), texts);
        assertEquals(3, vectors.size());
        for (int i = 0; i < texts.size(); i++) {
            assertArrayEquals(
                    new float[] {texts.get(i).length(), texts.get(i).charAt(0)}, vectors.get(i));
        }
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class,
                        () -> EmbedderBatches.embedAll(new Lengths(true), texts));
        assertEquals("embedder 'lengths': expected 3 vectors, got 2", e.getMessage());
    }
}
