package dev.nepenthe.springai;

import dev.nepenthe.adapter.NepentheAdapter;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * Spring AI's {@link VectorStore} over one collection of an embedded {@link Nepenthe} store, in one
 * tenant. Safe for concurrent use, as the collection is.
 *
 * <p>A document becomes one record: its id, its text, its metadata, and a vector from the builder's
 * {@link EmbeddingModel} or, without one, from the collection's own embedder (the collection is
 * then created {@code withEmbedder(...)} and the store opened with that embedder). The metadata
 * value under the subject key ({@code "subject"} unless the builder names another) also becomes the
 * record's subject and stays in the metadata.
 *
 * <p>{@code delete(ids)} and {@code delete(filter)} are plain deletes: gone from the index and the
 * files when they return, but nothing is verified, no receipt is issued and the subjects' keys
 * stay. {@link #forgetSubject}, {@link #forgetMatching} and {@link #forget} run the forget protocol
 * and return the operation with its signed receipt.
 *
 * <p>Scores are {@code (cosine + 1) / 2}, in [0, 1], so Spring AI's "accept all" threshold of 0
 * accepts every document; the collection must use {@link Metric#COSINE}.
 */
public final class NepentheVectorStore extends NepentheAdapter implements VectorStore {

    private final EmbeddingModel embeddingModel;

    private NepentheVectorStore(Builder b) {
        super(b);
        if (b.embeddingModel == null && collection().spec().embedder() == null) {
            throw new IllegalArgumentException(
                    "collection '"
                            + collection().name()
                            + "': expected an embedding model (Builder.embeddingModel) or a"
                            + " collection with an embedder of its own"
                            + " (CollectionSpec.withEmbedder), got neither");
        }
        this.embeddingModel = b.embeddingModel;
    }

    /**
     * Starts a vector store over {@code collection}, which must belong to {@code store} and use the
     * cosine metric.
     *
     * @param store the open store the collection belongs to (forgets run through it)
     * @param collection the collection documents go to
     * @return a builder, in the default tenant, subject key {@value
     *     NepentheAdapter#DEFAULT_SUBJECT_KEY}, embedding with the collection's own embedder
     * @throws NullPointerException if either is null
     */
    public static Builder builder(Nepenthe store, VectorCollection collection) {
        return new Builder(store, collection);
    }

    /**
     * Stores the documents as one batch (every record is checked first; a batch with one bad record
     * stores none of it). A document whose id exists in the tenant is replaced.
     *
     * @param documents text documents; metadata values String, Boolean, UUID (kept as its string
     *     form, as Spring AI's JSON-backed stores keep it) or numbers (integral ones are kept as
     *     Long, the others as Double)
     * @throws IllegalArgumentException if a document has no text, a metadata value of another type,
     *     or a subject value that is not a String, UUID, Integer or Long
     */
    @Override
    public void add(List<Document> documents) {
        Objects.requireNonNull(documents, "documents");
        if (documents.isEmpty()) {
            return;
        }
        List<String> texts = new ArrayList<>(documents.size());
        for (int i = 0; i < documents.size(); i++) {
            Document d = Objects.requireNonNull(documents.get(i), "document " + i);
            if (!d.isText() || d.getText() == null) {
                throw new IllegalArgumentException(
                        "document " + i + ": expected a text document, got one without text");
            }
            texts.add(d.getText());
        }
        List<float[]> vectors = embeddingModel == null ? null : embeddingModel.embed(texts);
        List<VectorRecord> batch = new ArrayList<>(documents.size());
        for (int i = 0; i < documents.size(); i++) {
            Document d = documents.get(i);
            VectorRecord.Builder r =
                    VectorRecord.builder(d.getId())
                            .tenant(tenant())
                            .text(texts.get(i))
                            .metadata(storedMetadata(d.getMetadata(), i))
                            .subject(subjectOf(d.getMetadata(), "document", i));
            if (vectors != null) {
                r.vector(vectors.get(i));
            }
            batch.add(r.build());
        }
        collection().upsertAll(batch);
    }

    private static Map<String, Object> storedMetadata(Map<String, Object> metadata, int position) {
        Map<String, Object> out = new LinkedHashMap<>();
        metadata.forEach(
                (k, v) ->
                        out.put(
                                k,
                                switch (v) {
                                    case String s -> s;
                                    case Boolean b -> b;
                                    case UUID u -> u.toString();
                                    case Integer n -> n.longValue();
                                    case Long n -> n;
                                    case Short n -> n.longValue();
                                    case Byte n -> n.longValue();
                                    case Double n -> n;
                                    case Float n -> n.doubleValue();
                                    case null, default ->
                                            throw new IllegalArgumentException(
                                                    "document "
                                                            + position
                                                            + ": metadata '"
                                                            + k
                                                            + "' expected a String, Boolean,"
                                                            + " UUID or number, got "
                                                            + (v == null
                                                                    ? "null"
                                                                    : v.getClass().getName()));
                                }));
        return out;
    }

    /**
     * Deletes these documents of the tenant (plain delete). Unknown ids are skipped.
     *
     * @param ids the ids; none, nothing happens
     * @throws IllegalArgumentException if {@code ids} is null
     */
    @Override
    public void delete(List<String> ids) {
        deleteIds(ids);
    }

    /**
     * Deletes the documents of the tenant whose metadata the expression accepts (plain delete).
     * Costs a pass over the tenant's records, reading each.
     *
     * @param filterExpression the expression
     * @throws IllegalArgumentException if the expression is null
     * @throws UnsupportedOperationException for an expression the store has no equivalent of
     */
    @Override
    public void delete(Filter.Expression filterExpression) {
        deleteWhere(ExpressionTranslator.toStore(requireFilter(filterExpression)));
    }

    /**
     * The documents nearest the query's embedding, best first: at most {@code topK}, none scoring
     * below the similarity threshold, only those the filter accepts (the filter narrows the
     * candidates the index sees).
     *
     * @param request the query text, topK, threshold and optional filter
     * @return documents with their id, text, metadata and score
     */
    @Override
    public List<Document> similaritySearch(SearchRequest request) {
        Objects.requireNonNull(request, "request");
        String query = request.getQuery();
        dev.nepenthe.core.SearchRequest q =
                embeddingModel == null
                        ? dev.nepenthe.core.SearchRequest.semantic(query, request.getTopK())
                        : dev.nepenthe.core.SearchRequest.of(
                                embeddingModel.embed(query), request.getTopK());
        q = q.tenant(tenant());
        if (request.hasFilterExpression()) {
            q = q.filter(ExpressionTranslator.toStore(request.getFilterExpression()));
        }
        List<Document> out = new ArrayList<>();
        for (SearchHit hit : collection().search(q)) {
            double score = relevance(hit.score());
            if (score < request.getSimilarityThreshold()) {
                break; // hits come best first
            }
            VectorRecord r = hit.record();
            out.add(
                    Document.builder()
                            .id(r.id())
                            .text(r.text())
                            .metadata(new LinkedHashMap<>(r.metadata()))
                            .score(score)
                            .build());
        }
        return out;
    }

    /**
     * Forgets, with the forget protocol, the records of the tenant (in every collection) whose
     * metadata the expression accepts when the forget is marked.
     *
     * @param filterExpression the expression
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param timeout how long to wait for the operation to settle
     * @return the operation, SEALED with its receipt unless verification or a hold stopped it
     * @throws IllegalArgumentException if the expression is null
     * @throws IllegalStateException if it has not settled within the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation forgetMatching(
            Filter.Expression filterExpression,
            String idempotencyKey,
            String reasonCode,
            Duration timeout)
            throws InterruptedException {
        return forgetWhere(
                ExpressionTranslator.toStore(requireFilter(filterExpression)),
                idempotencyKey,
                reasonCode,
                timeout);
    }

    /** Configures a {@link NepentheVectorStore}. Not safe for concurrent use. */
    public static final class Builder extends NepentheAdapter.Builder<Builder> {
        private EmbeddingModel embeddingModel;

        private Builder(Nepenthe store, VectorCollection collection) {
            super(store, collection, Set.of());
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * Embeds documents and queries with this model instead of the collection's own embedder.
         *
         * @param model the model; its dimension must be the collection's
         * @return this builder
         */
        public Builder embeddingModel(EmbeddingModel model) {
            this.embeddingModel = Objects.requireNonNull(model, "embedding model");
            return this;
        }

        /**
         * Builds the vector store.
         *
         * @return the vector store
         * @throws IllegalArgumentException if the collection does not use the cosine metric, is not
         *     this store's, or has no embedder and no model was given
         */
        @Override
        public NepentheVectorStore build() {
            return new NepentheVectorStore(this);
        }
    }
}
