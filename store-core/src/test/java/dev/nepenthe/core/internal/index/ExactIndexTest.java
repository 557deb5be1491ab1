package dev.nepenthe.core.internal.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.testing.NaiveReference;
import dev.nepenthe.core.testing.NaiveReference.Scored;
import dev.nepenthe.testing.Datasets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.roaringbitmap.RoaringBitmap;

class ExactIndexTest {

    /**
     * The exact index must return the true top k. Float accumulation may reorder near-ties, so each
     * returned ordinal must score within a small tolerance of the reference k-th score, and each
     * returned score must match the reference score of that ordinal.
     */
    static void assertMatchesReference(
            Metric metric,
            float[] q,
            float[][] data,
            SearchResult got,
            int k,
            java.util.function.IntPredicate accept) {
        List<Scored> ref = NaiveReference.ranking(metric, q, data, accept);
        assertEquals(Math.min(k, ref.size()), got.size(), "result count");
        double scale = 0;
        for (Scored s : ref) {
            scale = Math.max(scale, Math.abs(s.score()));
        }
        double tol = 1e-4 * Math.max(1, scale);
        double kth = got.size() == 0 ? 0 : ref.get(got.size() - 1).score();
        for (int i = 0; i < got.size(); i++) {
            int ord = got.ordinals()[i];
            assertTrue(accept.test(ord), "ordinal " + ord + " is outside the accept set");
            double refScore = NaiveReference.score(metric, q, data[ord]);
            assertEquals(refScore, got.scores()[i], tol, "score of ordinal " + ord);
            assertTrue(
                    refScore >= kth - tol,
                    "ordinal " + ord + " scores " + refScore + " below the k-th " + kth);
            if (i > 0) {
                assertTrue(got.scores()[i] <= got.scores()[i - 1], "results are sorted best first");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Metric.class)
    void topKMatchesDoublePrecisionReference(Metric metric) {
        float[][] data = Datasets.clustered(7, 3000, 37, 12, 0.4);
        ExactIndex index = new ExactIndex(37, metric);
        for (int i = 0; i < data.length; i++) {
            index.add(i, data[i]);
        }
        float[][] queries = Datasets.clustered(8, 20, 37, 12, 0.4);
        for (float[] q : queries) {
            SearchResult r = index.search(q, 10);
            assertMatchesReference(metric, q, data, r, 10, i -> true);
        }
    }

    @ParameterizedTest
    @EnumSource(Metric.class)
    void filteredSearchReturnsOnlyAcceptedOrdinalsInTrueOrder(Metric metric) {
        float[][] data = Datasets.uniform(11, 2000, 16);
        ExactIndex index = new ExactIndex(16, metric);
        for (int i = 0; i < data.length; i++) {
            index.add(i, data[i]);
        }
        SplittableRandom rnd = new SplittableRandom(3);
        // A sparse filter (walks the bitmap) and a dense one (scans the block) take different
        // paths.
        for (double density : new double[] {0.01, 0.6}) {
            RoaringBitmap accept = new RoaringBitmap();
            for (int i = 0; i < data.length; i++) {
                if (rnd.nextDouble() < density) {
                    accept.add(i);
                }
            }
            float[] q = Datasets.uniform(rnd.nextLong(), 1, 16)[0];
            SearchResult r =
                    index.search(q, 15, Accept.of(accept.toArray()), SearchParams.DEFAULTS);
            assertMatchesReference(metric, q, data, r, 15, accept::contains);
        }
    }

    @Test
    void removeMovesLastSlotAndZeroesTheVacatedOne() {
        float[][] data = Datasets.uniform(5, 100, 8);
        ExactIndex index = new ExactIndex(8, Metric.L2);
        for (int i = 0; i < data.length; i++) {
            index.add(i, data[i]);
        }
        SplittableRandom rnd = new SplittableRandom(9);
        for (int n = 0; n < 60; n++) {
            int victim = rnd.nextInt(data.length);
            boolean live = data[victim] != null;
            assertEquals(live, index.remove(victim));
            data[victim] = null;
            assertNull(index.vector(victim));
            assertFalse(index.contains(victim));
        }
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report.toString());
        int live = 0;
        for (float[] v : data) {
            live += v == null ? 0 : 1;
        }
        assertEquals(live, index.size());
        float[] q = Datasets.uniform(1, 1, 8)[0];
        assertMatchesReference(Metric.L2, q, data, index.search(q, 10), 10, i -> true);
        // Removed ordinals can be reused.
        for (int i = 0; i < data.length; i++) {
            if (data[i] == null) {
                data[i] = Datasets.uniform(100 + i, 1, 8)[0];
                index.add(i, data[i]);
            }
        }
        assertEquals(data.length, index.size());
        assertMatchesReference(Metric.L2, q, data, index.search(q, 10), 10, i -> true);
    }

    @Test
    void integrityCheckDetectsALeftoverVector() {
        ExactIndex index = new ExactIndex(4, Metric.DOT);
        index.add(0, new float[] {1, 2, 3, 4});
        index.add(1, new float[] {5, 6, 7, 8});
        index.remove(1);
        assertTrue(index.verifyIntegrity().isClean());
        // Plant the removed vector's bytes back into the freed slot: the checker must see it.
        float[] block = index.store.block(); // BlockBackedIndex's, visible in its package
        block[4] = 5f;
        IntegrityReport report = index.verifyIntegrity();
        assertFalse(report.isClean());
        assertEquals(1, report.violations("freed-slot-not-zeroed"));
    }

    @Test
    void cosineNormalisesAndRefusesZeroVectors() {
        ExactIndex index = new ExactIndex(3, Metric.COSINE);
        index.add(0, new float[] {10, 0, 0});
        assertArrayEquals(new float[] {1, 0, 0}, index.vector(0), 1e-7f);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> index.add(1, new float[3]));
        assertTrue(e.getMessage().contains("non-zero"), e.getMessage());
        assertEquals(1.0f, index.search(new float[] {3, 0, 0}, 1).scores()[0], 1e-6f);
    }

    @Test
    void rejectsBadArguments() {
        ExactIndex index = new ExactIndex(3, Metric.L2);
        index.add(0, new float[] {1, 2, 3});
        assertTrue(
                assertThrows(
                                IllegalArgumentException.class,
                                () -> index.add(0, new float[] {1, 2, 3}))
                        .getMessage()
                        .contains("already live"));
        assertTrue(
                assertThrows(IllegalArgumentException.class, () -> index.add(1, new float[] {1, 2}))
                        .getMessage()
                        .contains("expected dimension 3, got 2"));
        assertTrue(
                assertThrows(
                                IllegalArgumentException.class,
                                () -> index.search(new float[] {1, 2, 3}, 0))
                        .getMessage()
                        .contains("k: expected > 0, got 0"));
    }

    @Test
    void saveLoadRoundTripAndCorruptionIsDetected(@TempDir Path dir) throws Exception {
        float[][] data = Datasets.uniform(21, 500, 24);
        ExactIndex index = new ExactIndex(24, Metric.DOT);
        for (int i = 0; i < data.length; i++) {
            index.add(i * 3, data[i]);
        }
        index.remove(3);
        Path file = dir.resolve("exact.idx");
        index.save(file);
        IndexConfig cfg = new IndexConfig(24, Metric.DOT);
        ExactIndex loaded = ExactIndex.load(cfg, file);
        assertEquals(index.size(), loaded.size());
        for (int i = 0; i < data.length; i++) {
            assertArrayEquals(index.vector(i * 3), loaded.vector(i * 3));
        }
        float[] q = Datasets.uniform(2, 1, 24)[0];
        SearchResult a = index.search(q, 10);
        SearchResult b = loaded.search(q, 10);
        assertArrayEquals(a.ordinals(), b.ordinals());
        assertArrayEquals(a.scores(), b.scores());

        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x10;
        Files.write(file, bytes);
        CorruptFileException e =
                assertThrows(CorruptFileException.class, () -> ExactIndex.load(cfg, file));
        assertTrue(e.getMessage().contains("checksum failed"), e.getMessage());
        assertTrue(
                e.getMessage().contains(file.toString()),
                "the message names the file: " + e.getMessage());

        IndexConfig wrong = new IndexConfig(12, Metric.DOT);
        index.save(file);
        assertTrue(
                assertThrows(CorruptFileException.class, () -> ExactIndex.load(wrong, file))
                        .getMessage()
                        .contains("collection expects dimension 12"));
    }

    @Test
    void topKKeepsTheBestAndBreaksTiesByOrdinal() {
        TopK top = new TopK(3);
        float[] scores = {0.5f, 0.9f, 0.9f, 0.1f, 0.7f, 0.9f};
        for (int i = 0; i < scores.length; i++) {
            top.offer(i, scores[i]);
        }
        SearchResult r = top.drain(6);
        assertArrayEquals(new int[] {1, 2, 5}, r.ordinals());
        assertArrayEquals(new float[] {0.9f, 0.9f, 0.9f}, r.scores());
    }

    @Test
    void factoryIsFoundByKindAndRejectsUnknownParameters() {
        VectorIndexFactory f = VectorIndexes.factory("exact");
        assertEquals("exact", f.create(new IndexConfig(4, Metric.L2)).kind());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                f.create(
                                        new IndexConfig(
                                                4, Metric.L2, java.util.Map.of("M", "16"), 1)));
        assertTrue(e.getMessage().contains("unknown parameter 'M'"), e.getMessage());
        IllegalArgumentException k =
                assertThrows(IllegalArgumentException.class, () -> VectorIndexes.factory("annoy"));
        assertTrue(
                k.getMessage().contains("got 'annoy'") && k.getMessage().contains("exact"),
                k.getMessage());
    }
}
