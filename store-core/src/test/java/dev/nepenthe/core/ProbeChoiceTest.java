package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.testing.Datasets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which negative-space probe a forget runs is the store's policy and the request's choice, and the
 * receipt and the ledger say which ran in each collection and why. (The approximate probe itself,
 * through the HNSW and IVF-PQ indexes, is measured against the exact one in store-server's {@code
 * ApproximateProbeTest}: store-core holds only the exact index.)
 */
class ProbeChoiceTest {

    @TempDir Path tmp;

    /**
     * Random directions in 32-d: two are at cosine 0.85 with a chance of about 1e-8, so no suspect
     * turns up.
     */
    private static final int DIM = 32;

    private static final Duration WAIT = Duration.ofSeconds(60);

    private static float[] vector(long seed) {
        return Datasets.gaussian(seed, DIM);
    }

    private Nepenthe open(ProbePolicy policy) throws Exception {
        return Nepenthe.open(
                tmp.resolve("data"),
                StoreOptions.defaults().withKeystore(tmp.resolve("keys")).withProbePolicy(policy));
    }

    private static void populate(Nepenthe store, String name, Metric metric, int n) {
        VectorCollection c = store.createCollection(CollectionSpec.of(name, DIM, metric));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(
                    VectorRecord.builder("r" + i)
                            .subject(i % 10 == 0 ? "alice" : "bob")
                            .vector(vector(i))
                            .build());
        }
        c.upsertAll(batch);
    }

    private static String sealedEntry(Nepenthe store, ForgetOperation op) throws Exception {
        List<LedgerEntry> entries = store.evidence().entriesOf(op.id());
        return entries.get(entries.size() - 1).body();
    }

    @Test
    void eachCollectionsProbeIsNamedWithWhyItWasExact() throws Exception {
        try (Nepenthe store = open(ProbePolicy.DEFAULT.withApproximateAbove(20))) {
            populate(
                    store,
                    "big",
                    Metric.COSINE,
                    60); // 54 survivors: above the policy's 20, but an exact index
            populate(store, "small", Metric.COSINE, 20); // 18 survivors: at or below 20
            ForgetOperation done =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("alice"),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note() + " " + done.suspects());
            String big =
                    "{\"collection\":\"big\",\"index\":\"exact\",\"mode\":\"exact\",\"scored\":54,\"survivors\":54,\"why\":\"the"
                        + " index is exact: searching it costs what the exact probe costs\"}";
            String small =
                    "{\"collection\":\"small\",\"index\":\"exact\",\"mode\":\"exact\",\"scored\":18,\"survivors\":18,\"why\":\"the"
                        + " tenant has 18 records here; the policy searches the index above 20\"}";
            String probe =
                    "\"probe\":{\"approximateAbove\":20,\"collections\":["
                            + big
                            + ","
                            + small
                            + "],"
                            + "\"exactForced\":false,\"threshold\":\"0.85\"}";
            assertTrue(done.receipt().contains(probe), done.receipt());
            assertTrue(sealedEntry(store, done).contains(probe), sealedEntry(store, done));
        }
    }

    @Test
    void aRequestMayForceTheExactProbeAndThatMakesItAnotherRequest() throws Exception {
        try (Nepenthe store = open(ProbePolicy.DEFAULT.withApproximateAbove(5))) {
            populate(store, "c", Metric.L2, 30);
            ForgetRequest plain =
                    ForgetRequest.of(ForgetScope.subject("alice"), "req-2", "gdpr-art17");
            ForgetOperation done =
                    store.awaitOperation(store.forget(plain.withExactProbe()).id(), WAIT);
            assertEquals(OperationState.SEALED, done.state(), done.note());
            assertTrue(done.receipt().contains("\"exactForced\":true"), done.receipt());
            assertTrue(
                    done.receipt().contains("\"why\":\"forced by the request\""), done.receipt());
            // The same key for the request that follows the policy is another request.
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> store.forget(plain));
            assertTrue(e.getMessage().contains("probe choice"), e.getMessage());
            assertEquals(
                    done.id(),
                    store.forget(plain.withExactProbe()).id(),
                    "the same request is the same operation");
        }
    }

    @Test
    void aPolicyMustApproximateAboveAtLeastOneRecord() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new ProbePolicy(0.85, 0.5, 0));
        assertEquals(
                "probe policy approximateAbove: expected 1 or more records (Integer.MAX_VALUE for"
                        + " an exact probe everywhere), got 0",
                e.getMessage());
        assertEquals(
                ProbePolicy.DEFAULT_APPROXIMATE_ABOVE,
                new ProbePolicy(0.85, 0.5).approximateAbove());
        assertEquals(100_000, ProbePolicy.DEFAULT.approximateAbove());
    }
}
