package dev.nepenthe.adapter;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.UnknownCollectionException;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * What every Nepenthe framework adapter (LangChain4j's embedding store, Spring AI's vector store)
 * is beyond its framework's interface: one collection of an embedded {@link Nepenthe} store, seen
 * in one tenant, with a metadata key whose value names each record's subject, and forgets that
 * erase with a signed receipt. Both adapters extend it, so a segment and a document behave alike:
 * the same subject values are accepted (String, UUID, Integer, Long), a null filter or null ids are
 * refused the same way, a forget of another tenant is refused with the same words. Safe for
 * concurrent use, as the collection is.
 *
 * <p>Plain deletes ({@link #deleteIds}, {@link #deleteWhere}, {@link #deleteTenant}) leave the
 * index and the files before they return, but nothing is verified, no receipt is issued and the
 * subjects' keys stay. {@link #forgetSubject} and {@link #forget} run the forget protocol: marked
 * (hidden from every search) when the store accepts the request, then removed from every surface of
 * the tenant (every collection, snapshots, caches), verified, the keys destroyed, and a signed
 * receipt issued.
 *
 * <p>Scores are relevance, {@code (cosine + 1) / 2} in [0, 1] ({@link #relevance}), so the
 * collection must use {@link Metric#COSINE}.
 */
public abstract class NepentheAdapter {

    /** The metadata key whose value names a record's subject unless the builder names another. */
    public static final String DEFAULT_SUBJECT_KEY = "subject";

    private final Nepenthe store;
    private final VectorCollection collection;
    private final String tenant;
    private final String subjectKey;

    /**
     * Binds the builder's settings.
     *
     * @param b the builder
     * @throws IllegalArgumentException if the collection does not use the cosine metric, or is not
     *     the store's collection of that name
     */
    protected NepentheAdapter(Builder<?> b) {
        if (b.collection.spec().metric() != Metric.COSINE) {
            throw new IllegalArgumentException(
                    "collection '"
                            + b.collection.name()
                            + "': expected the COSINE metric (the adapter's scores are cosine"
                            + " relevance), got "
                            + b.collection.spec().metric());
        }
        VectorCollection own;
        try {
            own = b.store.collection(b.collection.name());
        } catch (UnknownCollectionException e) {
            own = null;
        }
        if (own != b.collection) {
            throw new IllegalArgumentException(
                    "collection '"
                            + b.collection.name()
                            + "': expected a collection of the store given (forgets run through"
                            + " it), got one it does not hold");
        }
        this.store = b.store;
        this.collection = b.collection;
        this.tenant = b.tenant;
        this.subjectKey = b.subjectKey;
    }

    /**
     * The store this adapter writes through.
     *
     * @return the store
     */
    public Nepenthe store() {
        return store;
    }

    /**
     * The collection records go to.
     *
     * @return the collection
     */
    public VectorCollection collection() {
        return collection;
    }

    /**
     * The tenant every record, search, delete and forget of this adapter is in.
     *
     * @return the tenant
     */
    public String tenant() {
        return tenant;
    }

    /**
     * The metadata key whose value names a record's subject.
     *
     * @return the key
     */
    public String subjectKey() {
        return subjectKey;
    }

    /**
     * Forgets a subject with the forget protocol and waits for it to settle: every record of the
     * subject in the tenant, in every collection of the store (not only this one), is hidden at
     * once, then removed from every surface, verified, its key destroyed, and a signed receipt
     * issued.
     *
     * @param subject the subject, as the subject key's value names it ({@code UUID} and integer
     *     values by their string form)
     * @param idempotencyKey the caller's request id: the same key returns the same operation
     * @param reasonCode why, as a code ("gdpr-art17"): letters, digits, '.', '_', '-'
     * @param timeout how long to wait for the operation to settle
     * @return the operation: SEALED with {@link ForgetOperation#receipt()} holding the signed
     *     receipt, or NEEDS_REVIEW (verification found suspects; no receipt) or
     *     COMPLETED_WITH_EXCEPTION (a legal hold; no receipt)
     * @throws IllegalArgumentException if the subject is blank, the key blank or the reason code
     *     malformed
     * @throws IllegalStateException if it has not settled within the timeout (it goes on; follow it
     *     with {@link Nepenthe#awaitOperation})
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation forgetSubject(
            String subject, String idempotencyKey, String reasonCode, Duration timeout)
            throws InterruptedException {
        return forget(
                new ForgetRequest(
                        tenant, ForgetScope.subject(subject), idempotencyKey, reasonCode, null),
                timeout);
    }

    /**
     * Runs a forget request of this adapter's tenant (any scope: subject, record ids, source,
     * metadata filter; a tighter probe threshold, identifiers, a rebuild) and waits for it to
     * settle.
     *
     * @param request the request; its tenant must be this adapter's
     * @param timeout how long to wait for the operation to settle
     * @return the operation, SEALED with its receipt unless verification or a hold stopped it
     * @throws IllegalArgumentException if the request names another tenant, or the store refuses it
     * @throws IllegalStateException if it has not settled within the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation forget(ForgetRequest request, Duration timeout)
            throws InterruptedException {
        Objects.requireNonNull(request, "forget request");
        Objects.requireNonNull(timeout, "timeout");
        if (!request.tenant().equals(tenant)) {
            throw new IllegalArgumentException(
                    "forget: expected a request in the adapter's tenant '"
                            + tenant
                            + "', got one in tenant '"
                            + request.tenant()
                            + "'");
        }
        return store.awaitOperation(store.forget(request).id(), timeout);
    }

    /**
     * Forgets, with the forget protocol, the records of the tenant (in every collection) whose
     * metadata the filter accepts when the forget is marked, and waits for it to settle.
     *
     * @param filter the store's filter, translated from the framework's
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param timeout how long to wait
     * @return the settled operation
     * @throws IllegalStateException if it has not settled within the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    protected ForgetOperation forgetWhere(
            Filter filter, String idempotencyKey, String reasonCode, Duration timeout)
            throws InterruptedException {
        return forget(
                new ForgetRequest(
                        tenant, ForgetScope.metadata(filter), idempotencyKey, reasonCode, null),
                timeout);
    }

    /**
     * The subject an item's metadata names under the subject key: a String as it is, a UUID, an
     * Integer or a Long by its string form (the form a forget of that subject names it by).
     *
     * @param metadata the item's metadata
     * @param item what the item is called in the adapter's framework ("segment", "document")
     * @param position the item's place in its batch, for the message
     * @return the subject, or null if the key is absent
     * @throws IllegalArgumentException if the value has another type
     */
    protected String subjectOf(Map<String, ?> metadata, String item, int position) {
        Object v = metadata.get(subjectKey);
        return switch (v) {
            case null -> null;
            case String s -> s;
            case UUID u -> u.toString();
            case Integer i -> i.toString();
            case Long l -> l.toString();
            default ->
                    throw new IllegalArgumentException(
                            item
                                    + " "
                                    + position
                                    + ": metadata '"
                                    + subjectKey
                                    + "' names the record's subject: expected a String, UUID,"
                                    + " Integer or Long, got "
                                    + v.getClass().getName());
        };
    }

    /**
     * Deletes these records of the tenant (plain delete). Unknown ids are skipped; no ids, nothing
     * happens. Durable when it returns.
     *
     * @param ids the ids
     * @throws IllegalArgumentException if {@code ids} is null
     */
    protected void deleteIds(Collection<String> ids) {
        if (ids == null) {
            throw new IllegalArgumentException("ids cannot be null");
        }
        if (!ids.isEmpty()) {
            collection.deleteAll(tenant, List.copyOf(ids));
        }
    }

    /**
     * Deletes the records of the tenant whose metadata the filter accepts (plain delete). Costs a
     * pass over the tenant's records, reading each; a record written while it runs is judged as it
     * was read, or not at all.
     *
     * @param filter the store's filter, translated from the framework's
     */
    protected void deleteWhere(Filter filter) {
        Objects.requireNonNull(filter, "filter");
        List<String> matching = new ArrayList<>();
        for (String id : collection.ids(tenant)) {
            Optional<VectorRecord> r = collection.get(tenant, id);
            if (r.isPresent() && filter.test(r.get().metadata())) {
                matching.add(id);
            }
        }
        deleteIds(matching);
    }

    /** Deletes every record of the tenant in this collection (plain delete). */
    protected void deleteTenant() {
        deleteIds(collection.ids(tenant));
    }

    /**
     * Checks that a framework's filter was given, before the adapter translates it.
     *
     * @param <F> the framework's filter type
     * @param filter the filter
     * @return the filter
     * @throws IllegalArgumentException if it is null (LangChain4j's contract for {@code
     *     removeAll(Filter)} asks for this exception and these words; Spring AI's stores refuse a
     *     null expression with the same exception)
     */
    protected static <F> F requireFilter(F filter) {
        if (filter == null) {
            throw new IllegalArgumentException("filter cannot be null");
        }
        return filter;
    }

    /**
     * A cosine as a relevance score, {@code (cosine + 1) / 2}, held in [0, 1] (float rounding can
     * put a cosine a hair outside [-1, 1]).
     *
     * @param cosine the cosine similarity
     * @return the relevance
     */
    protected static double relevance(float cosine) {
        return Math.clamp((cosine + 1.0) / 2.0, 0.0, 1.0);
    }

    /** Names the adapter, the collection and the tenant, nothing more. */
    @Override
    public String toString() {
        return getClass().getSimpleName()
                + "[collection="
                + collection.name()
                + ", tenant="
                + tenant
                + "]";
    }

    /**
     * Configures an adapter. Not safe for concurrent use.
     *
     * @param <B> the adapter's own builder
     */
    public abstract static class Builder<B extends Builder<B>> {
        private final Nepenthe store;
        private final VectorCollection collection;
        private final Set<String> reservedKeys;
        private String tenant = VectorRecord.DEFAULT_TENANT;
        private String subjectKey = DEFAULT_SUBJECT_KEY;

        /**
         * Starts a builder in the default tenant with subject key {@value #DEFAULT_SUBJECT_KEY}.
         *
         * @param store the open store the collection belongs to (forgets run through it)
         * @param collection the collection records go to
         * @param reservedKeys metadata keys the adapter keeps for itself (none may name the
         *     subject)
         * @throws NullPointerException if the store or collection is null
         */
        protected Builder(Nepenthe store, VectorCollection collection, Set<String> reservedKeys) {
            this.store = Objects.requireNonNull(store, "store");
            this.collection = Objects.requireNonNull(collection, "collection");
            this.reservedKeys = Set.copyOf(reservedKeys);
        }

        /**
         * This builder, as its own type.
         *
         * @return this
         */
        protected abstract B self();

        /**
         * The tenant every record and search goes to.
         *
         * @param tenant the tenant, not blank
         * @return this builder
         * @throws IllegalArgumentException if it is null or blank
         */
        public B tenant(String tenant) {
            if (tenant == null || tenant.isBlank()) {
                throw new IllegalArgumentException(
                        "tenant: expected a non-blank tenant, got "
                                + (tenant == null ? "null" : "a blank one"));
            }
            this.tenant = tenant;
            return self();
        }

        /**
         * The metadata key whose value names a record's subject.
         *
         * @param key the key, not blank and not one the adapter keeps for itself
         * @return this builder
         * @throws IllegalArgumentException if it is null, blank or reserved
         */
        public B subjectKey(String key) {
            if (key == null || key.isBlank() || reservedKeys.contains(key)) {
                throw new IllegalArgumentException(
                        "subject key: expected a non-blank metadata key"
                                + (reservedKeys.isEmpty() ? "" : " other than " + reservedKeys)
                                + ", got "
                                + (key == null ? "null" : "'" + key + "'"));
            }
            this.subjectKey = key;
            return self();
        }

        /**
         * Builds the adapter.
         *
         * @return the adapter
         * @throws IllegalArgumentException if the collection does not use the cosine metric, or is
         *     not this store's collection of that name
         */
        public abstract NepentheAdapter build();
    }
}
