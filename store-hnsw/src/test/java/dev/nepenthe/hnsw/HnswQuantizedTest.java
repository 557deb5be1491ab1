package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.Seeds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The int8 quantized search mode against its oracles: the exact index for recall, the metric's own
 * float score for every returned score (bit for bit), the float graph for the structure (building
 * and repairing never look at codes), and a byte scan of the code array for what a removal leaves
 * behind.
 */
class HnswQuantizedTest {

    private static final HnswParams.Quantization INT8 = HnswParams.Quantization.INT8;

    @TempDir Path dir;

    /** The score the metric gives the returned ordinal's vector, as the float index computes it. */
    private static void assertExactScores(
            Metric metric, float[] query, float[][] data, SearchResult r, String what) {
        float[] q = metric.prepare(query);
        for (int i = 0; i < r.size(); i++) {
            int ord = r.ordinals()[i];
            float[] v = metric.prepare(data[ord]);
            float exact = metric.score(Kernels.get(), q, v, 0, v.length);
            if (Float.floatToRawIntBits(exact) != Float.floatToRawIntBits(r.scores()[i])) {
                fail(
                        what
                                + ": ordinal "
                                + ord
                                + " returned with "
                                + r.scores()[i]
                                + ", its exact score is "
                                + exact);
            }
        }
    }

    /**
     * Recall@10 against the exact index, per metric, at the same efSearch as the float index over
     * the same graph. A narrow beam (ef 14, recall about 0.97) so that a difference can show.
     * Tolerance: at most 0.015 below float recall (the re-rank of the whole beam loses only true
     * neighbours that the code scores steered the walk away from; measured here 0 to 0.007 below,
     * and within 0.003 either way on 20k x 384, HnswQuantizedMeasurement), and at least 0.9 in
     * absolute terms. Every returned score is the exact one, bit for bit.
     */
    @Test
    void recallWithTheReRankMatchesFloatSearchForEveryMetric() {
        int n = 4_000;
        int dim = 96;
        float[][] all = Datasets.clustered(18, n + 100, dim, 40, 0.3);
        float[][] data = Arrays.copyOf(all, n);
        float[][] queries = Arrays.copyOfRange(all, n, n + 100);
        int ef = 14;
        for (Metric metric : Metric.values()) {
            HnswIndex flt = HnswFixtures.build(data, metric, HnswParams.of(12, 80));
            HnswIndex int8 =
                    HnswFixtures.build(data, metric, HnswParams.of(12, 80).withQuantization(INT8));
            ExactIndex exact = HnswFixtures.exact(data, metric, null);
            double floatRecall = HnswFixtures.recall(flt, exact, queries, 10, ef);
            double int8Recall = HnswFixtures.recall(int8, exact, queries, 10, ef);
            System.out.printf(
                    "[recall] %s ef %d: float %.4f, int8 re-ranking the beam %.4f%n",
                    metric, ef, floatRecall, int8Recall);
            assertTrue(
                    int8Recall >= floatRecall - 0.015,
                    metric + ": int8 recall " + int8Recall + ", float " + floatRecall);
            assertTrue(int8Recall >= 0.9, metric + ": int8 recall " + int8Recall);
            // A wider beam than 2k: the default re-ranks 2k of it, and loses next to nothing
            // against re-ranking all of it (measured here 0 to 0.002 below).
            SearchParams wide = SearchParams.of(HnswParams.EF_SEARCH, 60);
            double twiceK = HnswFixtures.recall(int8, exact, queries, 10, wide);
            double wholeBeam =
                    HnswFixtures.recall(int8, exact, queries, 10, wide.with(HnswParams.RERANK, 60));
            System.out.printf(
                    "[recall] %s ef 60: int8 re-ranking 2k %.4f, the whole beam %.4f%n",
                    metric, twiceK, wholeBeam);
            assertTrue(
                    twiceK >= wholeBeam - 0.01,
                    metric + ": re-ranking 2k " + twiceK + ", the beam " + wholeBeam);
            for (float[] q : queries) {
                SearchResult r =
                        int8.search(q, 10, Accept.ALL, SearchParams.of(HnswParams.EF_SEARCH, ef));
                assertEquals(10, r.size());
                assertExactScores(metric, q, data, r, metric.name());
            }
            // The walk did score codes: they are not the exact scores the re-rank returned.
            NodeScorer walker =
                    int8.graph().layout().searchScorers().queryScorer(metric.prepare(queries[0]));
            assertFalse(walker.isExact());
            SearchResult r = int8.search(queries[0], 10);
            int slot = int8.slotOf(r.ordinals()[0]);
            assertNotEquals(
                    Float.floatToRawIntBits(r.scores()[0]),
                    Float.floatToRawIntBits(walker.score(slot)),
                    metric
                            + ": the code score equals the exact one, so the test cannot tell a"
                            + " re-rank happened");
        }
    }

    /**
     * The rerank depth is honoured: the walk is the same whatever it is, so the scored count grows
     * by exactly the extra candidates re-ranked; fewer than k is raised to k; 0, the default, means
     * 2k; the beam's size or more means the whole beam; a negative value is refused with what was
     * expected.
     */
    @Test
    void theRerankDepthIsWhatWasAskedFor() {
        float[][] all = Datasets.clustered(19, 2_050, 32, 10, 0.3);
        float[][] data = Arrays.copyOf(all, 2_000);
        HnswIndex index =
                HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 60).withQuantization(INT8));
        SearchParams ef40 = SearchParams.of(HnswParams.EF_SEARCH, 40);
        for (int q = 2_000; q < 2_050; q++) {
            SearchResult beam = index.search(all[q], 5, Accept.ALL, ef40);
            SearchResult zero =
                    index.search(all[q], 5, Accept.ALL, ef40.with(HnswParams.RERANK, 0));
            SearchResult twelve =
                    index.search(all[q], 5, Accept.ALL, ef40.with(HnswParams.RERANK, 12));
            SearchResult one = index.search(all[q], 5, Accept.ALL, ef40.with(HnswParams.RERANK, 1));
            SearchResult huge =
                    index.search(all[q], 5, Accept.ALL, ef40.with(HnswParams.RERANK, 1_000));
            SearchResult whole =
                    index.search(all[q], 5, Accept.ALL, ef40.with(HnswParams.RERANK, 40));
            assertEquals(beam.visited(), zero.visited(), "0 is the default");
            assertEquals(
                    whole.visited(), huge.visited(), "a depth beyond the beam re-ranks the beam");
            assertEquals(
                    whole.visited() - 40 + 10,
                    beam.visited(),
                    "the default re-ranks 2k = 10 of 40");
            assertEquals(whole.visited() - 40 + 12, twelve.visited(), "12 re-ranked instead of 40");
            assertEquals(whole.visited() - 40 + 5, one.visited(), "a depth below k re-ranks k");
            assertEquals(5, one.size());
            assertExactScores(Metric.L2, all[q], data, one, "rerank 1");
            assertExactScores(Metric.L2, all[q], data, twelve, "rerank 12");
        }
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                index.search(
                                        all[2_000],
                                        5,
                                        Accept.ALL,
                                        ef40.with(HnswParams.RERANK, -2)));
        assertTrue(
                e.getMessage().contains("rerank: expected >= 0")
                        && e.getMessage().contains("got -2"),
                e.getMessage());
        // The index's own default applies when the query names none.
        HnswIndex shallow =
                HnswFixtures.build(
                        data,
                        Metric.L2,
                        HnswParams.of(8, 60).withQuantization(INT8).withRerank(12));
        SearchResult r = shallow.search(all[2_001], 5, Accept.ALL, ef40);
        assertEquals(
                index.search(all[2_001], 5, Accept.ALL, ef40.with(HnswParams.RERANK, 12)).visited(),
                r.visited());
    }

    /**
     * Building and repairing score floats in both modes, so the quantized graph is the float graph,
     * list for list, after a build and after removals and re-adds.
     */
    @Test
    void theQuantizedGraphIsTheFloatGraph() {
        float[][] all = Datasets.clustered(20, 1_500, 24, 8, 0.3);
        HnswIndex flt = HnswFixtures.build(all, Metric.COSINE, HnswParams.of(6, 40));
        HnswIndex int8 =
                HnswFixtures.build(all, Metric.COSINE, HnswParams.of(6, 40).withQuantization(INT8));
        assertSameGraph(flt, int8, all.length, "after the build");
        int[] order = HnswDeleteRepairTest.shuffled(all.length, 20);
        for (HnswIndex index : new HnswIndex[] {flt, int8}) {
            index.removeAll(Arrays.copyOf(order, 100));
            for (int i = 100; i < 130; i++) {
                index.remove(order[i]);
            }
            index.remove(index.entryOrdinal());
            for (int i = 0; i < 50; i++) {
                if (!index.contains(order[i])) {
                    index.add(order[i], all[order[i]]);
                }
            }
        }
        assertSameGraph(flt, int8, all.length, "after removals and re-adds");
        assertTrue(int8.verifyIntegrity().isClean(), int8.verifyIntegrity().toString());
    }

    private static void assertSameGraph(HnswIndex a, HnswIndex b, int n, String when) {
        assertEquals(a.entryOrdinal(), b.entryOrdinal(), when);
        for (int ord = 0; ord < n; ord++) {
            assertEquals(a.levelOf(ord), b.levelOf(ord), when + ", ordinal " + ord);
            for (int l = 0; l <= a.levelOf(ord); l++) {
                assertArrayEquals(
                        a.neighborOrdinals(ord, l),
                        b.neighborOrdinals(ord, l),
                        when + ", ordinal " + ord + " layer " + l);
            }
        }
    }

    /**
     * Seeded removals (batches and singles, then re-adds of some) from an int8 index: no search
     * returns a removed ordinal, even with the removed vector itself as the query, every score is
     * exact, and the checker (full and scoped) is clean after each round.
     */
    @Test
    void forgetThenSearchNeverReturnsARemovedOrdinal() {
        long seed = Seeds.draw("HnswQuantizedTest.forget");
        SplittableRandom rnd = new SplittableRandom(seed);
        Metric metric = Metric.values()[rnd.nextInt(3)];
        int n = 2_500;
        float[][] all = Datasets.clustered(seed, n + 30, 32, 12, 0.3);
        HnswIndex index =
                HnswFixtures.build(
                        Arrays.copyOf(all, n),
                        metric,
                        HnswParams.of(8, 50).withQuantization(INT8).withSeed(seed));
        Set<Integer> removed = new HashSet<>();
        List<Integer> live = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            live.add(i);
        }
        SearchParams sp = SearchParams.of(HnswParams.EF_SEARCH, 48);
        for (int round = 0; round < 6; round++) {
            int[] batch = new int[round % 2 == 0 ? 60 : 1];
            for (int i = 0; i < batch.length; i++) {
                batch[i] = live.remove(rnd.nextInt(live.size()));
                removed.add(batch[i]);
            }
            index.removeAll(batch);
            if (round == 3) {
                // Some come back with new vectors; they may be found again, their old selves not.
                for (int i = 0; i < 10; i++) {
                    int ord = batch.length > 1 ? batch[i] : removed.iterator().next();
                    if (removed.remove(ord)) {
                        all[ord] = all[n + i];
                        index.add(ord, all[ord]);
                        live.add(ord);
                    }
                }
            }
            for (int ord : batch) {
                if (!removed.contains(ord)) {
                    continue;
                }
                SearchResult r = index.search(all[ord], 10, Accept.ALL, sp);
                for (int got : r.ordinals()) {
                    assertFalse(
                            removed.contains(got),
                            "removed ordinal " + got + " returned" + Seeds.replay(seed));
                }
                assertExactScores(metric, all[ord], all, r, "round " + round + Seeds.replay(seed));
            }
            for (int q = n; q < n + 30; q++) {
                SearchResult r = index.search(all[q], 10, Accept.ALL, sp);
                assertEquals(10, r.size());
                for (int got : r.ordinals()) {
                    assertFalse(
                            removed.contains(got),
                            "removed ordinal " + got + " returned" + Seeds.replay(seed));
                }
            }
            IntegrityReport full = index.verifyIntegrity();
            assertTrue(full.isClean(), () -> full + Seeds.replay(seed));
            assertEquals(16 + 32, index.describe().stats().get("codeBytesPerVector").intValue());
            assertEquals(index.size(), full.checked().get("codes-recomputed").intValue());
            IntegrityReport scoped = index.verifyRemoval(batch);
            assertTrue(scoped.isClean(), () -> scoped + Seeds.replay(seed));
        }
    }

    /**
     * A forensic scan: the code of a vector, as the encoder makes it, is found in the code array
     * before the vector is removed (the control) and nowhere after, and the slot's bytes are zero.
     */
    @ParameterizedTest
    @EnumSource(HnswParams.VectorStorage.class)
    void aRemovedVectorsCodeIsNowhereInTheCodes(HnswParams.VectorStorage storage) {
        float[][] data = Datasets.clustered(21, 800, 20, 6, 0.3);
        HnswIndex index =
                HnswFixtures.build(
                        data,
                        Metric.DOT,
                        HnswParams.of(6, 30).withQuantization(INT8).withStorage(storage));
        HnswGraph g = index.graph();
        Int8Codes codec = g.store().codec();
        int[] victims = {0, 17, 401, 799};
        byte[][] codes = new byte[victims.length][codec.stride()];
        int[] slots = new int[victims.length];
        byte[] before = g.store().codesCopy();
        for (int i = 0; i < victims.length; i++) {
            codec.encode(Metric.DOT.prepare(data[victims[i]]), 0, codes[i], 0);
            slots[i] = index.slotOf(victims[i]);
            assertEquals(
                    slots[i] * codec.stride(),
                    find(before, codes[i]),
                    "control: the code is where its slot is");
        }
        index.removeAll(victims);
        byte[] after = g.store().codesCopy();
        for (int i = 0; i < victims.length; i++) {
            assertEquals(
                    -1,
                    find(after, codes[i]),
                    "the code of removed ordinal " + victims[i] + " is still there");
            for (int b = 0; b < codec.stride(); b++) {
                assertEquals(
                        0, after[slots[i] * codec.stride() + b], "slot " + slots[i] + " byte " + b);
            }
        }
        assertTrue(index.verifyIntegrity().isClean());
    }

    /** First offset of {@code pattern} in {@code a}, or -1: a plain byte scan. */
    private static int find(byte[] a, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= a.length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (a[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * A filter small enough for the exact scan and one wide enough to walk: both return exact
     * scores.
     */
    @Test
    void filteredSearchesReturnExactScores() {
        float[][] all = Datasets.clustered(22, 3_020, 24, 10, 0.3);
        float[][] data = Arrays.copyOf(all, 3_000);
        HnswIndex index =
                HnswFixtures.build(data, Metric.L2, HnswParams.of(8, 50).withQuantization(INT8));
        SplittableRandom rnd = new SplittableRandom(22);
        int[] wide = rnd.ints(1_000, 0, 3_000).toArray();
        int[] narrow = Arrays.copyOf(wide, 20);
        for (int q = 3_000; q < 3_020; q++) {
            for (int[] allowed : new int[][] {wide, narrow}) {
                SearchResult r =
                        index.search(
                                all[q],
                                10,
                                Accept.of(allowed),
                                SearchParams.of(HnswParams.EF_SEARCH, 32));
                Set<Integer> ok = new HashSet<>();
                for (int a : allowed) {
                    ok.add(a);
                }
                for (int o : r.ordinals()) {
                    assertTrue(ok.contains(o), "ordinal " + o + " is not in the filter");
                }
                assertExactScores(Metric.L2, all[q], data, r, "filter of " + allowed.length);
            }
        }
    }

    @Test
    void parametersParseAndBadValuesAreRefusedWithWhatWasExpected() {
        HnswParams p =
                HnswParams.parse(
                        new IndexConfig(
                                8, Metric.L2, Map.of("quantization", "int8", "rerank", "24"), 3));
        assertEquals(INT8, p.quantization());
        assertEquals(24, p.rerank());
        HnswParams d = HnswParams.parse(new IndexConfig(8, Metric.L2, Map.of(), 3));
        assertEquals(HnswParams.Quantization.NONE, d.quantization());
        assertEquals(0, d.rerank());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                HnswParams.parse(
                                        new IndexConfig(
                                                8, Metric.L2, Map.of("quantization", "int16"), 3)));
        assertTrue(
                e.getMessage().contains("'quantization' expected none or int8, got 'int16'"),
                e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                HnswParams.parse(
                                        new IndexConfig(8, Metric.L2, Map.of("rerank", "-1"), 3)));
        assertTrue(
                e.getMessage().contains("'rerank'") && e.getMessage().contains("got -1"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> HnswParams.of(8, 40).withRerank(-5));
        assertTrue(
                e.getMessage().contains("rerank expected >= 0")
                        && e.getMessage().contains("got -5"),
                e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> HnswParams.of(8, 40).withQuantization(null));
        assertTrue(e.getMessage().contains("expected none or int8, got null"), e.getMessage());
        // Where the vectors live: heap by default, offheap on request, anything else refused.
        assertEquals(HnswParams.VectorStorage.HEAP, d.storage());
        assertEquals(
                HnswParams.VectorStorage.OFF_HEAP,
                HnswParams.parse(new IndexConfig(8, Metric.L2, Map.of("vectors", "offheap"), 3))
                        .storage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                HnswParams.parse(
                                        new IndexConfig(
                                                8, Metric.L2, Map.of("vectors", "mmap"), 3)));
        assertTrue(
                e.getMessage().contains("'vectors' expected heap or offheap, got 'mmap'"),
                e.getMessage());
    }

    /**
     * Save and load keep the mode and the depth and the codes, the same bytes in the same slots
     * (freed slots zero), and searches answer bit for bit as before.
     */
    @ParameterizedTest
    @CsvSource({"heap, heap", "heap, offheap", "offheap, heap"})
    void saveAndLoadKeepTheModeAndTheCodes(String savedFrom, String loadedInto) throws Exception {
        float[][] all = Datasets.clustered(23, 1_020, 16, 6, 0.3);
        HnswIndex index =
                HnswFixtures.build(
                        Arrays.copyOf(all, 1_000),
                        Metric.COSINE,
                        HnswParams.of(6, 30)
                                .withQuantization(INT8)
                                .withRerank(15)
                                .withStorage(HnswParams.VectorStorage.fromParam(savedFrom)));
        index.removeAll(new int[] {3, 99, 500, 501});
        Path file = dir.resolve("int8.hnsw");
        index.save(file);
        HnswIndex loaded =
                HnswIndex.load(
                        new IndexConfig(
                                16, Metric.COSINE, Map.of(HnswParams.VECTORS, loadedInto), 0),
                        file);
        assertEquals(index.params().withStorage(loaded.params().storage()), loaded.params());
        assertEquals(loadedInto.equals("offheap"), loaded.graph().store().codesOffHeap());
        assertSameCodesAndAnswers(index, loaded, Arrays.copyOfRange(all, 1_000, 1_020));
        IntegrityReport r = loaded.verifyIntegrity();
        assertTrue(r.isClean(), r::toString);
    }

    /**
     * A version 1 file (no quantization byte, no rerank, no labels) still loads, as a float graph:
     * made here from a version 4 file (a float graph's has no codes, so it reads as version 3) by
     * cutting those five bytes and the labels at the end, and writing version 1 in the header.
     */
    @Test
    void aVersion1FileLoadsAsAFloatGraph() throws Exception {
        float[][] all = Datasets.clustered(24, 310, 8, 4, 0.3);
        HnswIndex index =
                HnswFixtures.build(Arrays.copyOf(all, 300), Metric.L2, HnswParams.of(6, 30));
        Path v4 = dir.resolve("v4.hnsw");
        index.save(v4);
        byte[] bytes = Files.readAllBytes(v4);
        int versionAt = 4 + 2 + HnswIndex.FORMAT.length();
        int body = versionAt + 4 + 16;
        int quantizationAt =
                body + 37; // dim, metric, M, efConstruction, efSearch, levelMultiplier,
        // repairEf, seed
        int labelsAt =
                bytes.length - 12 - 4 * 300 - 1; // the flag, one label per node, then the footer
        assertEquals(HnswIndex.VERSION, java.nio.ByteBuffer.wrap(bytes, versionAt, 4).getInt());
        assertEquals(0, bytes[quantizationAt], "a float graph's quantization byte");
        assertEquals(1, bytes[labelsAt], "the labels flag");
        byte[] v1 = new byte[labelsAt - 5 + 12];
        System.arraycopy(bytes, 0, v1, 0, quantizationAt);
        System.arraycopy(
                bytes, quantizationAt + 5, v1, quantizationAt, labelsAt - quantizationAt - 5);
        System.arraycopy(bytes, bytes.length - 12, v1, v1.length - 12, 12);
        java.nio.ByteBuffer.wrap(v1, versionAt, 4).putInt(1);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(v1, 0, v1.length - 12);
        java.nio.ByteBuffer.wrap(v1, v1.length - 8, 8).putLong(crc.getValue());
        Path file = dir.resolve("v1.hnsw");
        Files.write(file, v1);
        HnswIndex loaded = HnswIndex.load(new IndexConfig(8, Metric.L2), file);
        assertEquals(index.params(), loaded.params());
        assertEquals(HnswParams.Quantization.NONE, loaded.params().quantization());
        for (int q = 300; q < 310; q++) {
            assertArrayEquals(
                    index.search(all[q], 5).ordinals(), loaded.search(all[q], 5).ordinals());
        }
        assertTrue(loaded.verifyIntegrity().isClean());
    }

    /**
     * A loaded graph holds the saved graph's codes, the same bytes in the same slots (freed slots
     * zero), and answers every query bit for bit as it does.
     */
    private static void assertSameCodesAndAnswers(
            HnswIndex saved, HnswIndex loaded, float[][] queries) {
        int used = saved.graph().highWater() * saved.graph().store().codec().stride();
        assertArrayEquals(
                Arrays.copyOf(saved.graph().store().codesCopy(), used),
                Arrays.copyOf(loaded.graph().store().codesCopy(), used));
        for (float[] q : queries) {
            SearchResult a = saved.search(q, 10);
            SearchResult b = loaded.search(q, 10);
            assertArrayEquals(a.ordinals(), b.ordinals());
            assertArrayEquals(a.scores(), b.scores());
        }
    }

    /** Where a saved file's version and body start (see ChecksummedFiles). */
    private static final int VERSION_AT = 4 + 2 + HnswIndex.FORMAT.length();

    private static final int BODY_AT = VERSION_AT + 4 + 16;

    /** Body offsets: the high-water mark, and the first slot's state byte (see HnswIndex.save). */
    private static final int HIGH_WATER = 46;

    private static final int FIRST_SLOT = 58;

    private static void freshChecksum(byte[] file) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(file, 0, file.length - 12);
        java.nio.ByteBuffer.wrap(file, file.length - 8, 8).putLong(crc.getValue());
    }

    /**
     * The version 3 form of a saved quantized graph: every live slot's code cut from between its
     * vector and its lists, and version 3 in the header.
     */
    private static byte[] withoutCodes(byte[] bytes, int dim, int stride) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
        int hw = b.getInt(BODY_AT + HIGH_WATER);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(bytes.length);
        int at = BODY_AT + FIRST_SLOT;
        out.write(bytes, 0, at);
        for (int s = 0; s < hw; s++) {
            if (bytes[at] == 0) {
                out.write(0);
                at++;
                continue;
            }
            int level = bytes[at + 5];
            int vectorEnd = at + 6 + 4 * dim; // state, ordinal, level, floats
            out.write(bytes, at, vectorEnd - at);
            int lists = vectorEnd + stride;
            at = lists;
            for (int l = 0; l <= level; l++) {
                at += 4 + 4 * b.getInt(at);
            }
            out.write(bytes, lists, at - lists);
        }
        out.write(bytes, at, bytes.length - at); // the free list, the labels, the footer
        byte[] v3 = out.toByteArray();
        java.nio.ByteBuffer.wrap(v3, VERSION_AT, 4).putInt(3);
        freshChecksum(v3);
        return v3;
    }

    /**
     * A version 3 file carries no codes: the load encodes them again, to the bytes the save held.
     */
    @Test
    void aVersion3FileHasItsCodesEncodedAgainAtLoad() throws Exception {
        float[][] all = Datasets.clustered(25, 620, 16, 5, 0.3);
        HnswIndex index =
                HnswFixtures.build(
                        Arrays.copyOf(all, 600),
                        Metric.COSINE,
                        HnswParams.of(6, 30).withQuantization(INT8).withRerank(15));
        index.removeAll(new int[] {4, 77, 300});
        Path file = dir.resolve("v4.hnsw");
        index.save(file);
        byte[] bytes = Files.readAllBytes(file);
        assertEquals(HnswIndex.VERSION, java.nio.ByteBuffer.wrap(bytes, VERSION_AT, 4).getInt());
        int stride = index.graph().store().codec().stride();
        byte[] v3 = withoutCodes(bytes, 16, stride);
        assertEquals(bytes.length - 597 * stride, v3.length, "one code per live node cut");
        Path old = dir.resolve("v3.hnsw");
        Files.write(old, v3);
        HnswIndex loaded = HnswIndex.load(new IndexConfig(16, Metric.COSINE), old);
        assertSameCodesAndAnswers(index, loaded, Arrays.copyOfRange(all, 600, 620));
        assertTrue(loaded.verifyIntegrity().isClean());
    }

    /**
     * A load takes the stored codes as the file gives them (the file is authenticated whole); a
     * code that is not its vector's is what the integrity checker finds, naming it.
     */
    @Test
    void aStoredCodeUnlikeItsVectorIsFoundByTheChecker() throws Exception {
        float[][] all = Datasets.clustered(26, 200, 16, 4, 0.3);
        HnswIndex index =
                HnswFixtures.build(all, Metric.COSINE, HnswParams.of(6, 30).withQuantization(INT8));
        Path file = dir.resolve("int8.hnsw");
        index.save(file);
        byte[] bytes = Files.readAllBytes(file);
        assertEquals(1, bytes[BODY_AT + FIRST_SLOT], "slot 0 is live");
        int level = BODY_AT + FIRST_SLOT + 6 + 4 * 16 + Int8Codes.LEVELS_AT + 5;
        IntegrityReport control =
                HnswIndex.load(new IndexConfig(16, Metric.COSINE), file).verifyIntegrity();
        assertTrue(control.isClean(), control::toString);
        bytes[level] ^= 1;
        freshChecksum(bytes);
        Files.write(file, bytes);
        IntegrityReport r =
                HnswIndex.load(new IndexConfig(16, Metric.COSINE), file).verifyIntegrity();
        assertEquals(1, r.violations(HnswIntegrityChecker.CODE_MISMATCH), r::toString);
    }
}
