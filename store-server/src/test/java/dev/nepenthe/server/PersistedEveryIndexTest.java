package dev.nepenthe.server;

import static dev.nepenthe.testing.TestFiles.copyTree;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Datasets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Persisted index generations for the graph and IVF kinds (store-core's PersistedIndexTest covers
 * the key handling on the exact index): a reopened store loads the index it closed with and answers
 * exactly as before, a crash image catches up with the writes after the generation, and after a
 * forget the next generation is loaded without the forgotten records and passes the index's own
 * integrity checker.
 */
class PersistedEveryIndexTest {

    private static final int DIM = 24;

    static List<IndexSpec> kinds() {
        return List.of(
                IndexSpec.of("hnsw", Map.of("M", "12", "efConstruction", "80", "efSearch", "64")),
                IndexSpec.of(
                        "hnsw",
                        Map.of(
                                "M",
                                "12",
                                "efConstruction",
                                "80",
                                "efSearch",
                                "64",
                                "quantization",
                                "int8")),
                IndexSpec.of(
                        "hnsw",
                        Map.of(
                                "M",
                                "12",
                                "efConstruction",
                                "80",
                                "efSearch",
                                "64",
                                "vectors",
                                "offheap")),
                IndexSpec.of(
                        "ivfpq",
                        Map.of(
                                "nlist",
                                "16",
                                "m",
                                "8",
                                "trainSize",
                                "1500",
                                "nprobe",
                                "8",
                                "rerank",
                                "100")));
    }

    private static StoreOptions options(Path root) {
        return StoreOptions.defaults()
                .withKeystore(root.resolve("keys"))
                .withProbePolicy(new ProbePolicy(0.9999, 0.5));
    }

    private static List<VectorRecord> records(float[][] data, int from, int to) {
        List<VectorRecord> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(VectorRecord.builder("r" + i).subject("s" + (i % 20)).vector(data[i]).build());
        }
        return out;
    }

    private static List<String> answers(VectorCollection c, float[][] data, int from, int to) {
        List<String> out = new ArrayList<>();
        for (int q = from; q < to; q++) {
            for (SearchHit h : c.search(SearchRequest.of(data[q], 10))) {
                out.add(q + ":" + h.record().id() + "@" + h.score());
            }
        }
        return out;
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aReopenedStoreLoadsItsIndexAndAnswersExactlyAsBefore(IndexSpec kind, @TempDir Path tmp)
            throws Exception {
        float[][] data = Datasets.clustered(31, 3200, DIM, 30, 0.3);
        List<String> before;
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", DIM, Metric.COSINE, kind));
            c.upsertAll(records(data, 0, 3000));
            before = answers(c, data, 3000, 3050);
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertTrue(r.loaded(), kind + ": " + r);
            assertEquals(0, r.added() + r.removed(), r.toString());
            assertEquals(
                    before,
                    answers(c, data, 3000, 3050),
                    kind + ": the loaded index answers as the closed one");
            assertClean(c);
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aCrashImageLoadsTheGenerationAndAddsWhatCameAfter(IndexSpec kind, @TempDir Path tmp)
            throws Exception {
        float[][] data = Datasets.clustered(33, 3200, DIM, 30, 0.3);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            store.createCollection(new CollectionSpec("c", DIM, Metric.COSINE, kind))
                    .upsertAll(records(data, 0, 3000));
        }
        Path image = tmp.resolve("image");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            store.collection("c").upsertAll(records(data, 3000, 3200));
            copyTree(tmp.resolve("data"), image.resolve("data"));
            copyTree(tmp.resolve("keys"), image.resolve("keys"));
        }
        try (Nepenthe store = Nepenthe.open(image.resolve("data"), options(image))) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertTrue(r.loaded(), kind + ": " + r);
            assertEquals(200, r.added(), r.toString());
            assertEquals(3200, c.size());
            // Each of the 200 is found first by its own vector. A graph that took them in parallel
            // once left a few on an island no search from their neighbourhood reaches (see
            // HnswConcurrencyTest.everyNodeInsertedInParallelIsFoundByItsOwnVector).
            List<Integer> missed = new ArrayList<>();
            for (int i = 3000; i < 3200; i++) {
                if (!("r" + i)
                        .equals(c.search(SearchRequest.of(data[i], 1)).get(0).record().id())) {
                    missed.add(i);
                }
            }
            assertEquals(
                    List.of(),
                    missed,
                    kind
                            + ": records the catch-up added that a search for their own vector"
                            + " missed");
            assertClean(c);
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void afterAForgetTheNextGenerationHoldsNoneOfTheSubject(IndexSpec kind, @TempDir Path tmp)
            throws Exception {
        float[][] data = Datasets.clustered(35, 3000, DIM, 30, 0.3);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            store.createCollection(new CollectionSpec("c", DIM, Metric.COSINE, kind))
                    .upsertAll(records(data, 0, 3000));
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            VectorCollection c = store.collection("c");
            assertTrue(c.openReport().index().loaded());
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    VectorRecord.DEFAULT_TENANT,
                                                    ForgetScope.subject("s3"),
                                                    "req-1",
                                                    "gdpr-art17",
                                                    0.9999))
                                    .id(),
                            Duration.ofSeconds(120));
            assertEquals(OperationState.SEALED, op.state(), op.note() + " " + op.suspects());
            assertEquals(150, op.totalForgotten());
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options(tmp))) {
            VectorCollection c = store.collection("c");
            OpenReport.IndexRecovery r = c.openReport().index();
            assertTrue(r.loaded(), kind + ": the close after the forget wrote a generation: " + r);
            assertEquals(2850, c.size());
            for (int i = 3; i < 3000; i += 20) {
                for (SearchHit h : c.search(SearchRequest.of(data[i], 10))) {
                    assertTrue(
                            !"s3".equals(h.record().subject()),
                            kind + ": a forgotten record came back from the file");
                }
            }
            assertClean(c);
        }
    }
}
