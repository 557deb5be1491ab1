package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a collection embeds text with: the store's embedder of the name the spec gives, or a refusal
 * that says why there is none (kept, so that the refusal names the cause when text arrives without
 * a vector, not when the collection opens).
 */
public record Embedding(Embedder embedder, String missing) {

    public static final Embedding NONE =
            new Embedding(
                    null, "it was created without an embedder" + " (CollectionSpec.withEmbedder)");

    /** The embedder {@code spec} names among the store's {@code embedders}, or why it has none. */
    public static Embedding of(CollectionSpec spec, Map<String, Embedder> embedders) {
        if (spec.embedder() == null) {
            return NONE;
        }
        Embedder e = embedders.get(spec.embedder());
        if (e == null) {
            return new Embedding(
                    null,
                    "it embeds with '"
                            + spec.embedder()
                            + "', and this store was opened without an embedder of that name"
                            + " (StoreOptions.withEmbedder); it has "
                            + embedders.keySet());
        }
        if (e.dimension() != spec.dimension()) {
            return new Embedding(
                    null,
                    "its embedder '"
                            + spec.embedder()
                            + "' gives vectors of "
                            + e.dimension()
                            + " dimensions, and the collection holds "
                            + spec.dimension());
        }
        return new Embedding(e, null);
    }

    /**
     * @throws IllegalStateException naming the cause when there is no embedder
     */
    Embedder require(String collection) {
        if (embedder == null) {
            throw new IllegalStateException(
                    "collection '" + collection + "' cannot embed text: " + missing);
        }
        return embedder;
    }

    /**
     * Records with text and no vector get their vector from the embedder, in one batch call
     * (outside the writer mutex: embedding is the slow part of a text ingest).
     */
    List<VectorRecord> embedMissingVectors(List<VectorRecord> batch, String collection) {
        if (batch == null) {
            return null; // the validator names the problem
        }
        List<Integer> positions = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            VectorRecord r = batch.get(i);
            if (r != null
                    && RecordAccess.vectorUnsafe(r) == null
                    && RecordAccess.textUtf8Length(r) > 0) {
                positions.add(i);
                texts.add(r.text());
            }
        }
        if (positions.isEmpty()) {
            return batch;
        }
        if (embedder == null) {
            throw new IllegalArgumentException(
                    "record at batch position "
                            + positions.get(0)
                            + ": expected a vector,"
                            + " got text only, and collection '"
                            + collection
                            + "' cannot embed text: "
                            + missing);
        }
        List<float[]> vectors = embedder.embedAll(texts);
        if (vectors.size() != texts.size()) {
            throw new IllegalStateException(
                    "embedder '"
                            + embedder.name()
                            + "' returned "
                            + vectors.size()
                            + " vectors for "
                            + texts.size()
                            + " texts");
        }
        List<VectorRecord> out = new ArrayList<>(batch);
        for (int j = 0; j < positions.size(); j++) {
            int i = positions.get(j);
            out.set(i, batch.get(i).toBuilder().vector(vectors.get(j)).build());
        }
        return out;
    }
}
