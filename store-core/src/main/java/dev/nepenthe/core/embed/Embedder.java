package dev.nepenthe.core.embed;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns text into vectors. store-core itself does not call one yet: callers embed text and
 * upsert the vectors (the server's demo and the benchmarks do), and text ingest with a probe for
 * paraphrases of forgotten text is planned on top of this interface. The bundled
 * implementation (all-MiniLM-L6-v2, in store-embed) runs in-process and sends nothing anywhere.
 */
public interface Embedder {

    /**
     * Length of every vector this embedder returns.
     *
     * @return the dimension, the same on every call
     */
    int dimension();

    /**
     * Embeds one text.
     *
     * @param text the text
     * @return a new vector of {@link #dimension()} floats
     */
    float[] embed(String text);

    /**
     * Embeds several texts; by default {@link #embed} one by one, so an implementation that can
     * batch should override it.
     *
     * @param texts the texts
     * @return one vector per text, in the same order
     */
    default List<float[]> embedAll(List<String> texts) {
        List<float[]> out = new ArrayList<>(texts.size());
        for (String t : texts) {
            out.add(embed(t));
        }
        return out;
    }
}
