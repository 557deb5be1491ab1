package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.Seeds;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The approximate negative-space probe against the exact one, on seeded clustered data where each
 * forgotten vector has about a hundred cluster mates around the threshold: two stores hold the same
 * records, one forget forces the exact probe and the other lets the policy search the index. The
 * exact probe's suspects are the oracle: the approximate ones must be among them (its candidates
 * are scored exactly), and must find at least the recall floor measured below. The ledger entry and
 * the receipt must say which probe ran, with its parameters.
 */
class ApproximateProbeTest {

    private static final int DIM = 32;
    private static final int N = 6000;

    /** One record in 300 is the subject's: 20 forgotten vectors. */
    private static final int EVERY = 300;

    /**
     * Measured on seeds 1 to 8 (6,000 clustered 32-d records: 30 clusters, spread 0.33, so each
     * forgotten vector has about a hundred cluster mates at cosine 0.9 or more; 1,069 to 2,049
     * exact suspects per seed): recall 1.0000 for HNSW (M 12, efConstruction 80) and for IVF-PQ
     * (128 lists, m 8; the probe searches 64 of them, re-ranking 512) on every seed, and for HNSW
     * 1.0000 on 20 more seeds of sparser data (60 clusters). The candidates must grow past the
     * first 64 for that: with the growth switched off, recall was 0.52 to 0.54 on seeds 1 and 2,
     * which this floor fails. The floor leaves room for a miss near the threshold on a seed not
     * tried.
     */
    private static final double RECALL_FLOOR = 0.99;

    static List<IndexSpec> kinds() {
        return List.of(
                IndexSpec.of("hnsw", Map.of("M", "12", "efConstruction", "80")),
                IndexSpec.of("ivfpq", Map.of("nlist", "128", "m", "8", "trainSize", "6000")));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void theApproximateProbeFindsWhatTheExactProbeFindsAboveTheMeasuredRecall(
            IndexSpec kind, @TempDir Path tmp) throws Exception {
        long seed = Seeds.draw("ApproximateProbeTest-" + kind.kind());
        float[][] data = Datasets.clustered(seed, N, DIM, 30, 0.33);
        Set<String> exact = suspects(kind, data, tmp.resolve("exact"), true);
        Set<String> approximate = suspects(kind, data, tmp.resolve("approximate"), false);
        Set<String> falseSuspects = new HashSet<>(approximate);
        falseSuspects.removeAll(exact);
        assertEquals(
                Set.of(),
                falseSuspects,
                "seed " + seed + ": a suspect the exact probe did not find");
        double recall = (double) approximate.size() / exact.size();
        System.out.printf(
                "ApproximateProbeTest %s seed %d: exact %d suspects, approximate %d, recall %.4f%n",
                kind.kind(), seed, exact.size(), approximate.size(), recall);
        assertTrue(
                exact.size() >= 200,
                "seed "
                        + seed
                        + ": the data must put enough survivors near the forgotten"
                        + " vectors to measure anything, got "
                        + exact.size());
        assertTrue(
                recall >= RECALL_FLOOR,
                "seed "
                        + seed
                        + ": recall "
                        + recall
                        + " below "
                        + RECALL_FLOOR
                        + " ("
                        + Seeds.replay(seed)
                        + ")");
    }

    /**
     * An index ranks by its collection's metric: under L2 its nearest records are not the ones
     * nearest in angle, so the probe stays exact above the policy's size, and the receipt says why.
     */
    @org.junit.jupiter.api.Test
    void aCollectionThatDoesNotRankByCosineKeepsTheExactProbeAndSaysWhy(@TempDir Path tmp)
            throws Exception {
        float[][] data = Datasets.clustered(5, 1500, DIM, 30, 0.33);
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("keys"))
                        .withProbePolicy(new ProbePolicy(0.9999, 0.5, 1000));
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", DIM, Metric.L2, kinds().get(0)));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject(i % EVERY == 7 ? "gone" : "other")
                                .vector(data[i])
                                .build());
            }
            c.upsertAll(batch);
            ForgetOperation done =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("gone"),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            Duration.ofSeconds(120));
            assertEquals(OperationState.SEALED, done.state(), done.note() + " " + done.suspects());
            assertTrue(
                    done.receipt()
                            .contains(
                                    "{\"collection\":\"c\",\"index\":\"hnsw\",\"mode\":\"exact\",\"scored\":1495,\"survivors\":1495,\"why\":\"metric"
                                        + " L2: the index does not rank by cosine\"}"),
                    done.receipt());
        }
    }

    /**
     * The vector-residue suspects of the subject's forget in a fresh store, by record id, after
     * checking that the evidence and the receipt name the probe that ran.
     */
    private static Set<String> suspects(
            IndexSpec kind, float[][] data, Path dir, boolean forceExact) throws Exception {
        // The policy searches the index above 1,000 records, so 6,000 qualify; the request's
        // threshold (0.9) is within what the policy lets a request ask for.
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(dir.resolve("keys"))
                        .withProbePolicy(new ProbePolicy(0.95, 0.5, 1000));
        try (Nepenthe store = Nepenthe.open(dir.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", DIM, Metric.COSINE, kind));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject(i % EVERY == 7 ? "gone" : "s" + (i % 50))
                                .vector(data[i])
                                .build());
            }
            c.upsertAll(batch);
            ForgetRequest request =
                    new ForgetRequest(
                            VectorRecord.DEFAULT_TENANT,
                            ForgetScope.subject("gone"),
                            "req-1",
                            "gdpr-art17",
                            0.9);
            ForgetOperation review =
                    store.awaitOperation(
                            store.forget(forceExact ? request.withExactProbe() : request).id(),
                            Duration.ofSeconds(120));
            assertEquals(OperationState.NEEDS_REVIEW, review.state(), review.note());
            LedgerEntry entry = store.evidence().entriesOf(review.id()).get(0);
            String mode =
                    forceExact
                            ? "{\"collection\":\"c\",\"index\":\""
                                    + kind.kind()
                                    + "\",\"mode\":\"exact\","
                            : "{\"collection\":\"c\",\"exactFallbacks\":";
            assertTrue(entry.body().contains(mode), entry.body());
            if (forceExact) {
                assertTrue(
                        entry.body().contains("\"why\":\"forced by the request\""), entry.body());
                assertTrue(entry.body().contains("\"exactForced\":true"), entry.body());
            } else {
                assertTrue(
                        entry.body()
                                .contains(
                                        "\"index\":\""
                                                + kind.kind()
                                                + "\",\"mode\":\"approximate\",\"params\":"
                                                + "{\"candidates\":64,\"efSearch\":512,\"nprobe\":64,\"rerank\":512}"),
                        entry.body());
                assertTrue(
                        entry.body().contains("\"approximateAbove\":1000,\"collections\":"),
                        entry.body());
            }
            // The receipt says the same once the operator seals over the suspects.
            ForgetOperation sealed = store.override(review.id(), "test-data");
            assertEquals(OperationState.SEALED, sealed.state());
            assertTrue(
                    sealed.receipt()
                            .contains(
                                    forceExact ? "\"mode\":\"exact\"" : "\"mode\":\"approximate\""),
                    sealed.receipt());
            assertTrue(store.verifyLedger().ok());
            Set<String> ids = new HashSet<>();
            for (Suspect s : review.suspects()) {
                assertEquals("vector-residue", s.reason());
                assertTrue(s.score() >= 0.9, s.toString());
                ids.add(s.recordId());
            }
            return ids;
        }
    }
}
