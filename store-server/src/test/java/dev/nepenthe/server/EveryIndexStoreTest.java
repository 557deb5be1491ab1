package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Datasets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every index kind behind a real store: records go in through the collection, searches are compared
 * with an exact collection over the same records, a subject is deleted, the store is reopened
 * (indexes rebuilt from the encrypted segments), and every integrity check is clean.
 */
class EveryIndexStoreTest {

    static List<IndexSpec> kinds() {
        return List.of(
                IndexSpec.exact(),
                IndexSpec.of("hnsw", Map.of("M", "16", "efConstruction", "100", "efSearch", "64")),
                // Trains at 2,000 vectors; retrains at once when a removal touches its training
                // set.
                IndexSpec.of(
                        "ivfpq",
                        Map.of(
                                "nlist",
                                "32",
                                "m",
                                "8",
                                "trainSize",
                                "2000",
                                "nprobe",
                                "8",
                                "rerank",
                                "100",
                                "autoRetrain",
                                "1")));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void searchesMatchTheExactIndexBeforeAndAfterDeletesAndReopen(IndexSpec kind, @TempDir Path tmp)
            throws Exception {
        int dim = 32;
        float[][] data = Datasets.clustered(11, 4000, dim, 40, 0.3);
        float[][] queries = Datasets.clustered(12, 50, dim, 40, 0.3);
        StoreOptions opts = StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", dim, Metric.L2, kind));
            VectorCollection oracle =
                    store.createCollection(CollectionSpec.of("oracle", dim, Metric.L2));
            for (int start = 0; start < data.length; start += 500) {
                List<VectorRecord> batch = new ArrayList<>();
                for (int i = start; i < start + 500; i++) {
                    batch.add(
                            VectorRecord.builder("r" + i)
                                    .subject("s" + (i % 20))
                                    .vector(data[i])
                                    .build());
                }
                c.upsertAll(batch);
                oracle.upsertAll(batch);
            }
            assertTrue(recall(c, oracle, queries) >= 0.9, kind + " recall before deletes");
            assertEquals(200, c.deleteSubject(VectorRecord.DEFAULT_TENANT, "s3"));
            oracle.deleteSubject(VectorRecord.DEFAULT_TENANT, "s3");
            assertNoneOf(c, queries, "s3");
            assertTrue(
                    recall(c, oracle, queries) >= 0.9, kind + " recall after deleting a subject");
            assertClean(c);
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c = store.collection("c");
            assertEquals(3800, c.size());
            assertNoneOf(c, queries, "s3");
            assertTrue(
                    recall(c, store.collection("oracle"), queries) >= 0.9,
                    kind + " recall after reopen");
            assertClean(c);
        }
    }

    private static double recall(VectorCollection c, VectorCollection oracle, float[][] queries) {
        int hit = 0;
        int total = 0;
        for (float[] q : queries) {
            Set<String> truth = new HashSet<>();
            for (SearchHit h : oracle.search(SearchRequest.of(q, 10))) {
                truth.add(h.id());
            }
            for (SearchHit h : c.search(SearchRequest.of(q, 10))) {
                hit += truth.contains(h.id()) ? 1 : 0;
            }
            total += truth.size();
        }
        return hit / (double) total;
    }

    private static void assertNoneOf(VectorCollection c, float[][] queries, String subject) {
        for (float[] q : queries) {
            for (SearchHit h : c.search(SearchRequest.of(q, 50))) {
                assertFalse(
                        subject.equals(h.record().subject()),
                        "a deleted subject's record was returned");
            }
        }
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }
}
