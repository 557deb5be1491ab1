package dev.nepenthe.core.embed;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns text into vectors. A collection created with an embedder's name ({@code
 * CollectionSpec.withEmbedder}) embeds the text of records stored without a vector, and text
 * queries, with the embedder of that name the store was opened with ({@code
 * StoreOptions.withEmbedder}). The bundled implementation (all-MiniLM-L6-v2, in store-embed) runs
 * in-process and sends nothing anywhere. Implementations must be safe for concurrent use.
 */
public interface Embedder {

    /**
     * The embedder's stable name, stored with every collection that uses it: a different model (or
     * a different version of one whose vectors differ) needs a different name.
     *
     * @return 1 to 64 characters of letters, digits, '.', '_' and '-'
     */
    String name();

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
