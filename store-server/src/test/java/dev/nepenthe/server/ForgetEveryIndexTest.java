package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.io.ForensicScan;
import dev.nepenthe.core.testing.Datasets;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The forget protocol over the graph and quantized indexes: after a subject's operation seals,
 * the index's own integrity checker is clean, its surface reports what erasure left behind, a
 * rebuild of the index and a reopen of the store do not bring the subject back, and no file
 * holds its text.
 */
class ForgetEveryIndexTest {

    static List<IndexSpec> kinds() {
        return List.of(
                IndexSpec.of("hnsw", Map.of("M", "12", "efConstruction", "80", "efSearch", "64")),
                // autoRetrain=0: the removal taints the codebooks, and only the forget's purge of the
                // index surface retrains them; sealing proves it did.
                IndexSpec.of("ivfpq", Map.of("nlist", "16", "m", "8", "trainSize", "1500", "nprobe", "8",
                        "rerank", "100", "autoRetrain", "0")));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aSealedForgetLeavesACleanIndexThatARebuildDoesNotRefill(IndexSpec kind, @TempDir Path tmp) throws Exception {
        int dim = 24;
        float[][] data = Datasets.clustered(21, 3000, dim, 30, 0.3);
        StoreOptions opts = StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
        String canary = "CANARY-S3-TEXT-91ab";
        ForgetOperation done;
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c = store.createCollection(new CollectionSpec("c", dim, Metric.COSINE, kind));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(VectorRecord.builder("r" + i).subject("s" + (i % 20)).vector(data[i])
                        .text(i % 20 == 3 ? canary : "text " + i).build());
            }
            c.upsertAll(batch);
            // Clustered data puts many survivors near the subject's vectors; only near-duplicates
            // count as residue here (the default threshold is exercised in store-core's tests).
            done = store.awaitOperation(store.forget(new ForgetRequest(VectorRecord.DEFAULT_TENANT,
                    ForgetScope.subject("s3"), "req-1", "gdpr-art17", 0.9999)).id(), Duration.ofSeconds(120));
            assertEquals(OperationState.SEALED, done.state(), done.note() + " " + done.suspects());
            assertEquals(150, done.totalForgotten());
            SurfaceOutcome index = done.surfaces().stream().filter(s -> s.surface().startsWith("collection:c/index:"))
                    .findFirst().orElseThrow();
            assertTrue(index.clean(), index.toString());
            assertTrue(index.residual() != null && !index.residual().isBlank(), "the receipt states what remains");
            assertTrue(done.receipt().contains(index.residual()));
            assertNoneOf(c, data, "s3");
            assertClean(c);
            c.rebuildIndex();
            assertNoneOf(c, data, "s3");
            assertClean(c);
            assertEquals(2850, c.size());
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c = store.collection("c");
            assertNoneOf(c, data, "s3");
            assertClean(c);
        }
        assertEquals(List.of(), ForensicScan.filesContaining(List.of(tmp.resolve("data"), tmp.resolve("keys")),
                List.of(canary.getBytes(StandardCharsets.UTF_8))));
    }

    /**
     * k smaller than the marked set, on the graph and quantized indexes: the subject owns the
     * twelve records nearest the query; right after {@code forget} returns (marked, cleanup
     * running or done) a search for 5 still gets 5 visible records and none of hers, because
     * marked records are left out of what the index may return rather than dropped after it.
     */
    @ParameterizedTest
    @MethodSource("kinds")
    void aSearchRightAfterTheMarkStillGetsKVisibleRecords(IndexSpec kind, @TempDir Path tmp) throws Exception {
        int dim = 24;
        float[][] data = Datasets.clustered(41, 2000, dim, 30, 0.3);
        float[] query = data[0];
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.createCollection(new CollectionSpec("c", dim, Metric.COSINE, kind));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 1; i < data.length; i++) { // data[0] is the query: not stored
                batch.add(VectorRecord.builder("r" + i).subject("other").vector(data[i]).build());
            }
            for (int i = 0; i < 12; i++) { // the subject: twelve near-copies of the query
                float[] v = query.clone();
                v[i % dim] += 0.001f * (i + 1);
                batch.add(VectorRecord.builder("near" + i).subject("alice").vector(v).build());
            }
            c.upsertAll(batch);
            List<SearchHit> before = c.search(SearchRequest.of(query, 5));
            assertTrue(before.stream().allMatch(h -> h.record().subject().equals("alice")),
                    "control: the subject's records are the nearest before the forget");
            ForgetOperation op = store.forget(new ForgetRequest(VectorRecord.DEFAULT_TENANT, ForgetScope.subject("alice"),
                    "req-k", "gdpr-art17", 0.85));
            List<SearchHit> hits = c.search(SearchRequest.of(query, 5));
            assertEquals(5, hits.size(), "k=5 with 1999 visible records, right after the mark (" + op.state() + ")");
            assertTrue(hits.stream().noneMatch(h -> h.record().subject().equals("alice")));
            store.awaitOperation(op.id(), Duration.ofSeconds(120));
        }
    }

    @org.junit.jupiter.api.Test
    void theRebuildLevelRebuildsTheGraphAndTheReceiptSaysNoInfluenceRemains(@TempDir Path tmp) throws Exception {
        int dim = 16;
        float[][] data = Datasets.clustered(31, 1500, dim, 20, 1.0);
        StoreOptions opts = StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c = store.createCollection(new CollectionSpec("c", dim, Metric.COSINE,
                    IndexSpec.of("hnsw", Map.of("M", "8", "efConstruction", "60"))));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(VectorRecord.builder("r" + i).subject("s" + (i % 20)).vector(data[i]).build());
            }
            c.upsertAll(batch);
            ForgetOperation repaired = store.awaitOperation(store.forget(new ForgetRequest(VectorRecord.DEFAULT_TENANT,
                    ForgetScope.subject("s1"), "req-repair", "gdpr-art17", 0.99)).id(), Duration.ofSeconds(60));
            ForgetOperation rebuilt = store.awaitOperation(store.forget(new ForgetRequest(VectorRecord.DEFAULT_TENANT,
                    ForgetScope.subject("s2"), "req-rebuild", "gdpr-art17", 0.99,
                    dev.nepenthe.core.forget.ErasureLevel.REBUILD)).id(), Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, repaired.state(), repaired.note());
            assertEquals(OperationState.SEALED, rebuilt.state(), rebuilt.note());
            assertTrue(repaired.receipt().contains("second-order influence"), "a repair says what remains");
            assertTrue(rebuilt.receipt().contains("\"level\":\"REBUILD\""));
            assertTrue(rebuilt.receipt().contains("no influence of the forgotten records remains"));
            assertTrue(!rebuilt.receipt().contains("second-order influence"));
            assertNoneOf(c, data, "s2");
            assertClean(c);
        }
    }

    private static void assertNoneOf(VectorCollection c, float[][] data, String subject) {
        // Subject "sN" owns the records i with i % 20 == N.
        for (int i = Integer.parseInt(subject.substring(1)); i < 400; i += 20) {
            for (SearchHit h : c.search(SearchRequest.of(data[i], 10))) {
                assertTrue(!subject.equals(h.record().subject()), "search returned a forgotten record");
            }
            assertTrue(c.get("r" + i).isEmpty());
        }
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }
}
