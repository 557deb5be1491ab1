package dev.nepenthe.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cases every framework adapter must pass alike, one subclass per adapter (as LangChain4j ships
 * its embedding-store suites): the subject values it accepts and how a forget then finds them, a
 * null filter, a null or blank tenant or subject key, a forget of another tenant, a collection it
 * cannot serve. The oracle is the store itself: the records' subjects, and what is left after a
 * forget.
 */
public abstract class AdapterBehaviourContract {

    /** How long a forget may take to settle. */
    protected static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir protected Path tmp;

    /** An item to store: the id, the text and the metadata of a segment or document. */
    protected record Item(String id, String text, Map<String, Object> metadata) {}

    /** One adapter, built; each method calls the framework's own method of that name's meaning. */
    protected interface Adapter {
        /**
         * Stores the items as one batch.
         *
         * @param items the items
         */
        void add(List<Item> items);

        /** Calls the framework's delete-by-filter with a null filter. */
        void deleteMatchingNull();

        /**
         * Calls the adapter's forget-by-filter with a null filter.
         *
         * @throws InterruptedException if interrupted
         */
        void forgetMatchingNull() throws InterruptedException;

        /**
         * Calls the framework's delete-by-ids.
         *
         * @param ids the ids, possibly null
         */
        void delete(List<String> ids);

        /**
         * The adapter's forget of a subject.
         *
         * @param subject the subject
         * @param key the idempotency key
         * @return the settled operation
         * @throws InterruptedException if interrupted
         */
        ForgetOperation forgetSubject(String subject, String key) throws InterruptedException;

        /**
         * The adapter's forget of any request.
         *
         * @param request the request
         * @return the settled operation
         * @throws InterruptedException if interrupted
         */
        ForgetOperation forget(ForgetRequest request) throws InterruptedException;
    }

    /**
     * The options the store opens with (a subclass adds what its adapter needs, an embedder).
     *
     * @param defaults defaults with a keystore under the test's folder
     * @return the options
     */
    protected abstract StoreOptions options(StoreOptions defaults);

    /**
     * A collection spec the adapter can serve, but for the metric.
     *
     * @param name the name
     * @param metric the metric
     * @return the spec
     */
    protected abstract CollectionSpec spec(String name, Metric metric);

    /**
     * Builds the adapter, calling the builder's {@code tenant} and {@code subjectKey} with these.
     *
     * @param store the store
     * @param collection the collection
     * @param tenant the tenant
     * @param subjectKey the subject key
     * @return the adapter
     */
    protected abstract Adapter adapter(
            Nepenthe store, VectorCollection collection, String tenant, String subjectKey);

    private Nepenthe open(String name) throws IOException {
        return Nepenthe.open(
                tmp.resolve(name),
                options(StoreOptions.defaults().withKeystore(tmp.resolve(name + "-keys"))));
    }

    private static Map<String, Object> meta(Object subject) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("who", subject);
        m.put("kind", "note");
        return m;
    }

    private static void refused(String expected, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void subjectsAreStringsUuidsIntegersAndLongsAndAForgetFindsThemByTheirStringForm()
            throws Exception {
        try (Nepenthe store = open("subjects")) {
            VectorCollection c = store.createCollection(spec("c", Metric.COSINE));
            Adapter a = adapter(store, c, VectorRecord.DEFAULT_TENANT, "who");
            UUID uuid = UUID.fromString("1b4e28ba-2fa1-11d2-883f-0016d3cca427");
            a.add(
                    List.of(
                            new Item("s", "Alice moved to Lisbon.", meta("alice")),
                            new Item("u", "Bob likes the night train.", meta(uuid)),
                            new Item("i", "Carol grows tomatoes.", meta(42)),
                            new Item("l", "Dan reads at night.", meta(7L)),
                            new Item("n", "The kitchen closes at ten.", Map.of("kind", "note"))));
            Map<String, String> expected =
                    Map.of("s", "alice", "u", uuid.toString(), "i", "42", "l", "7");
            for (String id : List.of("s", "u", "i", "l", "n")) {
                assertEquals(
                        expected.get(id),
                        c.get(id).orElseThrow().subject(),
                        "record " + id + "'s subject");
            }

            refused(
                    "metadata 'who' names the record's subject: expected a String, UUID, Integer"
                            + " or Long, got java.lang.Double",
                    () ->
                            a.add(
                                    List.of(
                                            new Item("ok", "Fine.", meta("erin")),
                                            new Item("bad", "Not fine.", meta(1.5)))));
            assertEquals(5, c.size(), "nothing of a refused batch is stored");

            ForgetOperation op = a.forgetSubject(uuid.toString(), "ticket-uuid");
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertNotNull(op.receipt());
            assertEquals(1, op.totalForgotten());
            op = a.forgetSubject("42", "ticket-int");
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertEquals(1, op.totalForgotten());
            assertEquals(Set.of("s", "l", "n"), new HashSet<>(c.ids(VectorRecord.DEFAULT_TENANT)));
        }
    }

    @Test
    void aNullFilterOrNullIdsAreRefusedAlikeAndRemoveNothing() throws Exception {
        try (Nepenthe store = open("filters")) {
            VectorCollection c = store.createCollection(spec("c", Metric.COSINE));
            Adapter a = adapter(store, c, VectorRecord.DEFAULT_TENANT, "who");
            a.add(List.of(new Item("x", "Alice moved to Lisbon.", meta("alice"))));
            refused("filter cannot be null", a::deleteMatchingNull);
            refused("filter cannot be null", a::forgetMatchingNull);
            refused("ids cannot be null", () -> a.delete(null));
            assertEquals(1, c.size());
            assertTrue(store.operations(o -> true).isEmpty(), "no forget was started");
            a.delete(List.of("x"));
            assertEquals(0, c.size(), "a delete by id is a plain delete");
        }
    }

    @Test
    void tenantsAndSubjectKeysAreCheckedAlike() throws Exception {
        try (Nepenthe store = open("tenants")) {
            VectorCollection c = store.createCollection(spec("c", Metric.COSINE));
            refused(
                    "tenant: expected a non-blank tenant, got null",
                    () -> adapter(store, c, null, "who"));
            refused(
                    "tenant: expected a non-blank tenant, got a blank one",
                    () -> adapter(store, c, " ", "who"));
            refused(
                    "subject key: expected a non-blank metadata key",
                    () -> adapter(store, c, "t1", null));
            refused(
                    "subject key: expected a non-blank metadata key",
                    () -> adapter(store, c, "t1", "  "));

            Adapter t1 = adapter(store, c, "t1", "who");
            t1.add(List.of(new Item("x", "Alice moved to Lisbon.", meta("alice"))));
            assertEquals(List.of("x"), c.ids("t1"));
            assertTrue(c.ids(VectorRecord.DEFAULT_TENANT).isEmpty());
            refused(
                    "forget: expected a request in the adapter's tenant 't1', got one in tenant"
                            + " 'elsewhere'",
                    () ->
                            t1.forget(
                                    ForgetRequest.of(ForgetScope.subject("alice"), "k", "r")
                                            .inTenant("elsewhere")));
            ForgetOperation op = t1.forgetSubject("alice", "ticket-t1");
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertTrue(c.ids("t1").isEmpty());
        }
    }

    @Test
    void aCollectionItCannotServeIsRefusedAlike() throws Exception {
        try (Nepenthe store = open("mine");
                Nepenthe other = open("other")) {
            VectorCollection dot = store.createCollection(spec("dot", Metric.DOT));
            refused(
                    "collection 'dot': expected the COSINE metric (the adapter's scores are cosine"
                            + " relevance), got DOT",
                    () -> adapter(store, dot, VectorRecord.DEFAULT_TENANT, "who"));
            VectorCollection foreign = other.createCollection(spec("c", Metric.COSINE));
            refused(
                    "collection 'c': expected a collection of the store given",
                    () -> adapter(store, foreign, VectorRecord.DEFAULT_TENANT, "who"));
        }
    }
}
