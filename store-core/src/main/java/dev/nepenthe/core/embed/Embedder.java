package dev.nepenthe.core.embed;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns text into vectors. The store uses one to ingest text and to probe for paraphrases of
 * forgotten text; the embedded default (all-MiniLM-L6-v2, in store-server) runs in-process and
 * sends nothing anywhere.
 */
public interface Embedder {

    /** Length of every vector this embedder returns. */
    int dimension();

    float[] embed(String text);

    default List<float[]> embedAll(List<String> texts) {
        List<float[]> out = new ArrayList<>(texts.size());
        for (String t : texts) {
            out.add(embed(t));
        }
        return out;
    }
}
