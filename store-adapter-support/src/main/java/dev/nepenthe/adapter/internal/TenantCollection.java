package dev.nepenthe.adapter.internal;

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
 * One collection of an open store, seen in one tenant, with the metadata key that names a record's
 * subject: the part of a framework adapter that has nothing to do with the framework. Both adapters
 * (LangChain4j's embedding store, Spring AI's vector store) check their settings, read subjects,
 * delete and forget through this class, so a document or segment behaves the same in either: the
 * same subject values are accepted, a null filter is refused the same way, a request of another
 * tenant is refused with the same words. Safe for concurrent use, as the collection is.
 */
public final class TenantCollection {

    /** The metadata key whose value names a record's subject unless an adapter is told another. */
    public static final String DEFAULT_SUBJECT_KEY = "subject";

    private final Nepenthe store;
    private final VectorCollection collection;
    private final String tenant;
    private final String subjectKey;

    private TenantCollection(
            Nepenthe store, VectorCollection collection, String tenant, String subjectKey) {
        this.store = store;
        this.collection = collection;
        this.tenant = tenant;
        this.subjectKey = subjectKey;
    }

    /**
     * Checks the settings an adapter's builder gathered and binds them.
     *
     * @param store the open store the collection belongs to (forgets run through it)
     * @param collection the collection, which must be the store's and use the cosine metric
     * @param tenant the tenant, as {@link #requireTenant} accepts it
     * @param subjectKey the subject key, as {@link #requireSubjectKey} accepts it
     * @return the bound collection
     * @throws NullPointerException if the store or collection is null
     * @throws IllegalArgumentException if the collection does not use the cosine metric (adapters
     *     report cosine relevance), or is not the store's collection of that name
     */
    public static TenantCollection bind(
            Nepenthe store, VectorCollection collection, String tenant, String subjectKey) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(collection, "collection");
        requireTenant(tenant);
        Objects.requireNonNull(subjectKey, "subject key");
        if (collection.spec().metric() != Metric.COSINE) {
            throw new IllegalArgumentException(
                    "collection '"
                            + collection.name()
                            + "': expected the COSINE metric (the adapter's scores are cosine"
                            + " relevance), got "
                            + collection.spec().metric());
        }
        VectorCollection own;
        try {
            own = store.collection(collection.name());
        } catch (UnknownCollectionException e) {
            own = null;
        }
        if (own != collection) {
            throw new IllegalArgumentException(
                    "collection '"
                            + collection.name()
                            + "': expected a collection of the store given (forgets run through"
                            + " it), got one it does not hold");
        }
        return new TenantCollection(store, collection, tenant, subjectKey);
    }

    /**
     * Checks a tenant an adapter is given.
     *
     * @param tenant the tenant
     * @return the tenant
     * @throws IllegalArgumentException if it is null or blank
     */
    public static String requireTenant(String tenant) {
        if (tenant == null || tenant.isBlank()) {
            throw new IllegalArgumentException(
                    "tenant: expected a non-blank tenant, got "
                            + (tenant == null ? "null" : "a blank one"));
        }
        return tenant;
    }

    /**
     * Checks a subject key an adapter is given.
     *
     * @param key the metadata key
     * @param reserved keys the adapter keeps for itself (none may name the subject)
     * @return the key
     * @throws IllegalArgumentException if it is null, blank or reserved
     */
    public static String requireSubjectKey(String key, Set<String> reserved) {
        if (key == null || key.isBlank() || reserved.contains(key)) {
            throw new IllegalArgumentException(
                    "subject key: expected a non-blank metadata key"
                            + (reserved.isEmpty() ? "" : " other than " + reserved)
                            + ", got "
                            + (key == null ? "null" : "'" + key + "'"));
        }
        return key;
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
    public static <F> F requireFilter(F filter) {
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
    public static double relevance(float cosine) {
        return Math.clamp((cosine + 1.0) / 2.0, 0.0, 1.0);
    }

    /**
     * The store the collection belongs to.
     *
     * @return the store
     */
    public Nepenthe store() {
        return store;
    }

    /**
     * The collection.
     *
     * @return the collection
     */
    public VectorCollection collection() {
        return collection;
    }

    /**
     * The tenant every record, search, delete and forget is in.
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
     * The subject an item's metadata names under the subject key: a String as it is, a UUID, an
     * Integer or a Long by its string form (the form a forget of that subject names it by).
     *
     * @param metadata the item's metadata
     * @param item what the item is called in the adapter's framework ("segment", "document")
     * @param position the item's place in its batch, for the message
     * @return the subject, or null if the key is absent
     * @throws IllegalArgumentException if the value has another type
     */
    public String subjectOf(Map<String, ?> metadata, String item, int position) {
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
     * Deletes these records of the tenant (plain delete: no verification, no receipt). Unknown ids
     * are skipped; no ids, nothing happens. Durable when it returns.
     *
     * @param ids the ids
     * @throws IllegalArgumentException if {@code ids} is null
     */
    public void delete(Collection<String> ids) {
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
    public void deleteMatching(Filter filter) {
        Objects.requireNonNull(filter, "filter");
        List<String> matching = new ArrayList<>();
        for (String id : collection.ids(tenant)) {
            Optional<VectorRecord> r = collection.get(tenant, id);
            if (r.isPresent() && filter.test(r.get().metadata())) {
                matching.add(id);
            }
        }
        delete(matching);
    }

    /** Deletes every record of the tenant in this collection (plain delete). */
    public void deleteAll() {
        delete(collection.ids(tenant));
    }

    /**
     * Forgets a subject of the tenant with the forget protocol and waits for it to settle.
     *
     * @param subject the subject, as {@link #subjectOf} names it
     * @param idempotencyKey the caller's request id: the same key returns the same operation
     * @param reasonCode why, as a code
     * @param timeout how long to wait
     * @return the settled operation
     * @throws IllegalArgumentException if the store refuses the request
     * @throws IllegalStateException if it has not settled within the timeout
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
     * Forgets, with the forget protocol, the records of the tenant whose metadata the filter
     * accepts, and waits for it to settle.
     *
     * @param filter the store's filter, translated from the framework's
     * @param idempotencyKey the caller's request id
     * @param reasonCode why, as a code
     * @param timeout how long to wait
     * @return the settled operation
     * @throws IllegalStateException if it has not settled within the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public ForgetOperation forgetMatching(
            Filter filter, String idempotencyKey, String reasonCode, Duration timeout)
            throws InterruptedException {
        return forget(
                new ForgetRequest(
                        tenant, ForgetScope.metadata(filter), idempotencyKey, reasonCode, null),
                timeout);
    }

    /**
     * Runs a forget request of the tenant and waits for it to settle.
     *
     * @param request the request; its tenant must be this one
     * @param timeout how long to wait
     * @return the settled operation
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
     * An adapter's {@code toString}: its name, the collection and the tenant, nothing more.
     *
     * @param adapter the adapter's class name
     * @return the text
     */
    public String describe(String adapter) {
        return adapter + "[collection=" + collection.name() + ", tenant=" + tenant + "]";
    }
}
