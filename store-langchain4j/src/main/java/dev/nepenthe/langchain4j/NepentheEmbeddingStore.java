package dev.nepenthe.langchain4j;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.EmbeddingSearchResult;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.filter.Filter;
import dev.nepenthe.adapter.NepentheAdapter;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * LangChain4j's {@link EmbeddingStore} of {@link TextSegment}s over one collection of an embedded
 * {@link Nepenthe} store, in one tenant. Safe for concurrent use, as the collection is.
 *
 * <p>A segment becomes one record: the embedding is its vector, the segment's text its text and its
 * metadata the record's metadata (see {@link MetadataCodec} for how UUID, Integer and Float values
 * keep their types). The value under the subject key ({@code "subject"} unless the builder names
 * another) also becomes the record's subject: a forget of that subject reaches the record, and its
 * data is sealed under that subject's own key. The value stays in the metadata as well, so a filter
 * on the subject key works like any other.
 *
 * <p><b>Two kinds of removal.</b> {@code remove}, {@code removeAll(ids)}, {@code removeAll(filter)}
 * and {@code removeAll()} are plain deletes ({@link VectorCollection#deleteAll}): the records leave
 * the index, the bitmaps and the files before the call returns, but nothing is verified, no receipt
 * is issued and the subjects' keys stay. {@link #forgetSubject}, {@link #forgetMatching} and {@link
 * #forget} run the forget protocol instead: marked (hidden from every search) when the store
 * accepts the request, then removed from every surface of the tenant (this and every other
 * collection, snapshots, caches), verified, the keys destroyed, and a signed receipt issued.
 *
 * <p>Scores are LangChain4j relevance scores, {@code (cosine + 1) / 2} in [0, 1]; the collection
 * must therefore use {@link Metric#COSINE}.
 */
public final class NepentheEmbeddingStore extends NepentheAdapter
        implements EmbeddingStore<TextSegment> {

    private NepentheEmbeddingStore(Builder b) {
        super(b);
    }

    /**
     * Starts an embedding store over {@code collection}, which must belong to {@code store} and use
     * the cosine metric.
     *
     * @param store the open store the collection belongs to (forgets run through it)
     * @param collection the collection records go to
     * @return a builder, in the default tenant with subject key {@value
     *     NepentheAdapter#DEFAULT_SUBJECT_KEY}
     * @throws NullPointerException if either is null
     */
    public static Builder builder(Nepenthe store, VectorCollection collection) {
        return new Builder(store, collection);
    }

    @Override
    public String add(Embedding embedding) {
        String id = UUID.randomUUID().toString();
        add(id, embedding);
        return id;
    }

    @Override
    public void add(String id, Embedding embedding) {
        requireId(id);
        upsert(List.of(id), List.of(requireEmbedding(embedding, 0)), null);
    }

    @Override
    public String add(Embedding embedding, TextSegment segment) {
        String id = UUID.randomUUID().toString();
        upsert(
                List.of(id),
                List.of(requireEmbedding(embedding, 0)),
                Collections.singletonList(segment));
        return id;
    }

    @Override
    public List<String> addAll(List<Embedding> embeddings) {
        Objects.requireNonNull(embeddings, "embeddings");
        List<String> ids = generateIds(embeddings.size());
        addAll(ids, embeddings, null);
        return ids;
    }

    /**
     * Stores the embeddings (with their segments, when given) under the given ids as one batch:
     * every record is checked first and a batch with one bad record stores none of it. Durable when
     * this returns. An id that exists in the tenant is replaced.
     *
     * @param ids one id per embedding, none blank
     * @param embeddings the embeddings, of the collection's dimension, none all zero
     * @param segments one segment per embedding (a null one stores the embedding alone), or null
     *     for none at all
     * @throws IllegalArgumentException if the lists differ in size, an id is blank, an embedding is
     *     null or does not fit the collection, or a segment's metadata cannot be stored (the
     *     reserved key {@value MetadataCodec#TYPES_KEY}, a non-finite number, a subject value that
     *     is not a String, UUID, Integer or Long)
     * @throws dev.nepenthe.core.forget.ForgottenScopeException if a record falls in a scope being
     *     forgotten
     */
    @Override
    public void addAll(List<String> ids, List<Embedding> embeddings, List<TextSegment> segments) {
        Objects.requireNonNull(ids, "ids");
        Objects.requireNonNull(embeddings, "embeddings");
        if (ids.size() != embeddings.size()
                || (segments != null && segments.size() != embeddings.size())) {
            throw new IllegalArgumentException(
                    "addAll: expected as many ids and segments as embeddings, got "
                            + ids.size()
                            + " ids, "
                            + embeddings.size()
                            + " embeddings and "
                            + (segments == null ? "no" : segments.size())
                            + " segments");
        }
        for (int i = 0; i < ids.size(); i++) {
            requireId(ids.get(i));
            requireEmbedding(embeddings.get(i), i);
        }
        upsert(ids, embeddings, segments);
    }

    private void upsert(List<String> ids, List<Embedding> embeddings, List<TextSegment> segments) {
        if (ids.isEmpty()) {
            return;
        }
        List<VectorRecord> batch = new ArrayList<>(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            VectorRecord.Builder r =
                    VectorRecord.builder(ids.get(i))
                            .tenant(tenant())
                            .vector(embeddings.get(i).vector());
            TextSegment segment = segments == null ? null : segments.get(i);
            if (segment != null) {
                r.text(segment.text()).metadata(MetadataCodec.encode(segment.metadata()));
                r.subject(subjectOf(segment.metadata().toMap(), "segment", i));
            }
            batch.add(r.build());
        }
        collection().upsertAll(batch);
    }

    private static void requireId(String id) {
        if (id == null || id.isBlank()) {
            throw new IllegalArgumentException("id cannot be null or blank");
        }
    }

    private static Embedding requireEmbedding(Embedding e, int position) {
        if (e == null) {
            throw new IllegalArgumentException(
                    "embedding " + position + ": expected an embedding, got null");
        }
        return e;
    }

    /**
     * The records nearest the query embedding in this tenant, best first: at most {@code
     * maxResults}, none below {@code minScore}, only those the filter accepts. The filter is
     * translated into the store's own and narrows the candidates the index sees, so {@code
     * maxResults} matching records come back when that many exist. Records a forget has marked are
     * never returned.
     *
     * @param request the query embedding, maxResults, minScore and an optional filter
     * @return the matches; each has the record's id, its relevance score {@code (cosine + 1) / 2},
     *     its embedding and its segment (null for a record stored without one)
     * @throws IllegalArgumentException if the query does not fit the collection, or a filter value
     *     has a type metadata cannot hold
     * @throws UnsupportedOperationException for a filter the store has no equivalent of (a class of
     *     your own, an order comparison on a UUID)
     */
    @Override
    public EmbeddingSearchResult<TextSegment> search(EmbeddingSearchRequest request) {
        Objects.requireNonNull(request, "request");
        SearchRequest q =
                SearchRequest.of(request.queryEmbedding().vector(), request.maxResults())
                        .tenant(tenant());
        if (request.filter() != null) {
            q = q.filter(FilterTranslator.toStore(request.filter()));
        }
        List<EmbeddingMatch<TextSegment>> matches = new ArrayList<>();
        for (SearchHit hit : collection().search(q)) {
            double score = relevance(hit.score());
            if (score < request.minScore()) {
                break; // hits come best first
            }
            VectorRecord r = hit.record();
            String text = r.text();
            TextSegment segment =
                    text == null
                            ? null
                            : TextSegment.from(text, MetadataCodec.decode(r.metadata()));
            matches.add(new EmbeddingMatch<>(score, r.id(), Embedding.from(r.vector()), segment));
        }
        return new EmbeddingSearchResult<>(matches);
    }

    /**
     * Deletes these records of the tenant (plain delete: no verification, no receipt; see the class
     * comment). Unknown ids are skipped. Durable when it returns.
     *
     * @param ids the ids, at least one
     * @throws IllegalArgumentException if {@code ids} is null or empty
     */
    @Override
    public void removeAll(Collection<String> ids) {
        if (ids == null || ids.isEmpty()) {
            // LangChain4j's contract (EmbeddingStoreWithRemovalIT) asks for these words.
            throw new IllegalArgumentException("ids cannot be null or empty");
        }
        deleteIds(ids);
    }

    /**
     * Deletes the records of the tenant whose metadata the filter accepts (plain delete: no
     * verification, no receipt). Costs a pass over the tenant's records, reading each; a record
     * written while it runs is judged as it was read, or not at all. For erasure with proof use
     * {@link #forgetMatching}.
     *
     * @param filter the filter, translated as {@link #search} translates it
     * @throws IllegalArgumentException if the filter is null
     * @throws UnsupportedOperationException for a filter the store has no equivalent of
     */
    @Override
    public void removeAll(Filter filter) {
        deleteWhere(FilterTranslator.toStore(requireFilter(filter)));
    }

    /**
     * Deletes every record of the tenant in this collection (plain delete: no verification, no
     * receipt).
     */
    @Override
    public void removeAll() {
        deleteTenant();
    }

    /**
     * Forgets, with the forget protocol, the records of the tenant whose metadata the filter
     * accepts when the forget is marked, in every collection of the store; see {@link
     * #forgetSubject} for what follows and what comes back.
     *
     * @param filter a LangChain4j metadata filter, translated as {@link #search} translates it
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param timeout how long to wait for the operation to settle
     * @return the operation, SEALED with its receipt unless verification or a hold stopped it
     * @throws IllegalArgumentException if the filter is null, the key blank or the reason code
     *     malformed
     * @throws UnsupportedOperationException for a filter the store has no equivalent of
     * @throws IllegalStateException if it has not settled within the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation forgetMatching(
            Filter filter, String idempotencyKey, String reasonCode, Duration timeout)
            throws InterruptedException {
        return forgetWhere(
                FilterTranslator.toStore(requireFilter(filter)),
                idempotencyKey,
                reasonCode,
                timeout);
    }

    /** Configures a {@link NepentheEmbeddingStore}. Not safe for concurrent use. */
    public static final class Builder extends NepentheAdapter.Builder<Builder> {

        private Builder(Nepenthe store, VectorCollection collection) {
            super(store, collection, Set.of(MetadataCodec.TYPES_KEY));
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * Builds the embedding store.
         *
         * @return the embedding store
         * @throws IllegalArgumentException if the collection does not use the cosine metric, or is
         *     not this store's collection of that name
         */
        @Override
        public NepentheEmbeddingStore build() {
            return new NepentheEmbeddingStore(this);
        }
    }
}
