package dev.nepenthe.testing.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.internal.index.VectorIndexes;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.roaringbitmap.RoaringBitmap;

/**
 * The contract every {@link VectorIndex} kind keeps, in the spirit of Lucene's {@code
 * BaseKnnVectorsFormatTestCase}: an empty index, k above the size, null parameters, bad input,
 * accept filters, removed ordinals never returned, recall against the exact index, save and load,
 * and searches running beside a writer. The exact index is the oracle throughout; a kind states the
 * recall it promises at the test-sized parameters it gives.
 *
 * <p>An index kind, here or in another project, proves itself with one JUnit 5 subclass on its test
 * class path (the {@code dev.nepenthe:store-testing} artifact, test scope):
 *
 * <pre>{@code
 * class MyIndexContractTest extends VectorIndexContract {
 *     protected String kind() { return "my-index"; }
 *     protected Map<String, String> params() { return Map.of("width", "8"); }
 *     protected double minRecall() { return 0.9; }
 * }
 * }</pre>
 *
 * <p>What the subclass provides:
 *
 * <ul>
 *   <li>{@link #kind()}: the name its {@link VectorIndexFactory} registers under ({@code
 *       META-INF/services/dev.nepenthe.core.index.VectorIndexFactory}); or override {@link
 *       #factory()} to hand the factory over directly;
 *   <li>{@link #params()}: parameters small enough for a few hundred vectors of {@value #DIM}
 *       dimensions (an IVF-PQ that trains on 200 vectors, say);
 *   <li>{@link #minRecall()} (optional, 0.9 by default): the mean recall@10 against the exact index
 *       the kind promises at those parameters.
 * </ul>
 *
 * <p>The tests draw their data from seeds: a failure message ends with the seed and how to replay
 * it ({@link Seeds}).
 */
public abstract class VectorIndexContract {

    /** The dimension of every vector the contract adds. */
    protected static final int DIM = 16;

    /** Subclasses name the kind under test and its parameters; JUnit constructs them. */
    protected VectorIndexContract() {}

    /**
     * The kind under test, as its factory registers it.
     *
     * @return the kind's name
     */
    protected abstract String kind();

    /**
     * Test-sized parameters (an IVF-PQ that trains on a few hundred vectors, say).
     *
     * @return the parameters by name
     */
    protected abstract Map<String, String> params();

    /**
     * Mean recall@10 against the exact index the kind reaches with {@link #params()}.
     *
     * @return the least mean recall the tests accept, 0.9 unless overridden
     */
    protected double minRecall() {
        return 0.9;
    }

    /**
     * The factory under test: the one registered for {@link #kind()} on the class path, unless
     * overridden.
     *
     * @return the factory
     */
    protected VectorIndexFactory factory() {
        return VectorIndexes.factory(kind());
    }

    /**
     * A new, empty index of the kind under test.
     *
     * @param metric how it scores
     * @return the index, which the caller closes
     */
    protected VectorIndex create(Metric metric) {
        return factory().create(new IndexConfig(DIM, metric, params(), 7));
    }

    /**
     * Reads back an index of the kind under test that {@link VectorIndex#save} wrote.
     *
     * @param metric how it scores (as at creation)
     * @param file the saved file
     * @return the index, which the caller closes
     * @throws IOException if the file cannot be read
     */
    protected VectorIndex load(Metric metric, Path file) throws IOException {
        return factory().load(new IndexConfig(DIM, metric, params(), 7), file);
    }

    /**
     * The integrity check after removals, as the forget protocol runs it: an index that reports
     * residue (IVF-PQ codebooks trained on a removed vector) purges it first.
     *
     * @param index the index to check
     * @return its integrity report after any purge
     */
    protected static IntegrityReport purgedAndChecked(VectorIndex index) {
        if (index.hasResidue()) {
            index.purgeResidue();
        }
        assertFalse(index.hasResidue(), "residue left after purgeResidue()");
        return index.verifyIntegrity();
    }

    private static float[][] data(long seed, int n) {
        return Datasets.clustered(seed, n, DIM, 12, 0.4);
    }

    /** No duplicates, best first, each ordinal live in the oracle and accepted. */
    private static void assertWellFormed(
            SearchResult r, ExactIndex oracle, RoaringBitmap accept, String what) {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < r.size(); i++) {
            int o = r.ordinals()[i];
            assertTrue(seen.add(o), what + ": ordinal " + o + " returned twice");
            assertTrue(oracle.contains(o), what + ": ordinal " + o + " is not live");
            assertTrue(
                    accept == null || accept.contains(o),
                    what + ": ordinal " + o + " is outside the accept filter");
            if (i > 0) {
                assertTrue(
                        r.scores()[i - 1] >= r.scores()[i],
                        what + ": results not best first at rank " + i);
            }
        }
    }

    @Test
    void anEmptyIndexAnswersWithNothing() {
        try (VectorIndex index = create(Metric.L2)) {
            assertEquals(0, index.size());
            assertEquals(0, index.search(new float[DIM], 5).size());
            assertEquals(
                    0, index.search(new float[DIM], 5, Accept.of(), SearchParams.DEFAULTS).size());
            assertFalse(index.contains(0));
            assertFalse(index.remove(0));
            assertTrue(index.verifyIntegrity().isClean(), index.verifyIntegrity().toString());
        }
    }

    @ParameterizedTest
    @EnumSource(Metric.class)
    void kAboveTheSizeReturnsEveryLiveVector(Metric metric) {
        try (VectorIndex index = create(metric)) {
            ExactIndex oracle = new ExactIndex(DIM, metric);
            float[][] v = data(3, 7);
            for (int i = 0; i < v.length; i++) {
                index.add(i * 3, v[i]);
                oracle.add(i * 3, v[i]);
            }
            SearchResult r = index.search(v[0], 20);
            assertEquals(7, r.size());
            assertWellFormed(r, oracle, null, "k=20 of 7");
        }
    }

    @Test
    void nullParamsMeanTheIndexDefaults() {
        try (VectorIndex index = create(Metric.COSINE)) {
            float[][] v = data(4, 300);
            for (int i = 0; i < v.length; i++) {
                index.add(i, v[i]);
            }
            SearchResult withNull = index.search(v[5], 10, Accept.ALL, null);
            SearchResult withDefaults = index.search(v[5], 10, Accept.ALL, SearchParams.DEFAULTS);
            assertArrayEquals(withDefaults.ordinals(), withNull.ordinals());
            assertArrayEquals(withDefaults.scores(), withNull.scores());
        }
    }

    @Test
    void badInputIsRefusedAndChangesNothing() {
        try (VectorIndex index = create(Metric.L2)) {
            index.add(1, data(5, 1)[0]);
            assertThrows(IllegalArgumentException.class, () -> index.add(2, new float[DIM + 1]));
            assertThrows(IllegalArgumentException.class, () -> index.add(1, new float[DIM]));
            assertEquals(1, index.size());
            assertTrue(index.contains(1));
            assertFalse(index.contains(2));
        }
    }

    /**
     * Add, remove a quarter, search with and without filters: removed ordinals never come back,
     * filters are honoured, a small filter is returned whole, and recall holds against the exact
     * index; then re-add some removed ordinals with new vectors.
     */
    @ParameterizedTest
    @EnumSource(Metric.class)
    void searchesMatchTheExactIndexThroughRemovalsAndFilters(Metric metric) {
        searchesMatchTheExactIndexThroughRemovalsAndFilters(
                metric, Seeds.draw(getClass().getSimpleName() + " " + metric));
    }

    /**
     * The seed that found HNSW re-inserts cutting nodes off after removals (4 nodes unreachable on
     * layer 0, dot product), run by every build.
     */
    @Test
    void searchesMatchTheExactIndexThroughRemovalsAndFiltersOnAFixedSeed() {
        searchesMatchTheExactIndexThroughRemovalsAndFilters(Metric.DOT, -6267717739531271196L);
    }

    private void searchesMatchTheExactIndexThroughRemovalsAndFilters(Metric metric, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        String why = Seeds.replay(seed);
        float[][] v = data(seed, 800);
        try (VectorIndex index = create(metric)) {
            ExactIndex oracle = new ExactIndex(DIM, metric);
            RoaringBitmap live = new RoaringBitmap();
            for (int i = 0; i < 600; i++) {
                index.add(i, v[i]);
                oracle.add(i, v[i]);
                live.add(i);
            }
            RoaringBitmap removed = new RoaringBitmap();
            while (removed.getCardinality() < 150) {
                int o = rnd.nextInt(600);
                if (!removed.contains(o)) {
                    assertTrue(index.remove(o), "remove " + o + why);
                    oracle.remove(o);
                    removed.add(o);
                    live.remove(o);
                }
            }
            assertEquals(450, index.size(), why);
            // Some removed ordinals come back with other vectors: the old ones must not.
            for (int i = 0; i < 30; i++) {
                int o = removed.select(i);
                index.add(o, v[600 + i]);
                oracle.add(o, v[600 + i]);
                live.add(o);
            }
            IntegrityReport report = purgedAndChecked(index);
            assertTrue(report.isClean(), report + why);
            double recall = 0;
            int queries = 60;
            for (int q = 0; q < queries; q++) {
                float[] query = v[rnd.nextInt(v.length)];
                SearchResult got = index.search(query, 10);
                assertWellFormed(got, oracle, null, "query " + q + why);
                assertEquals(10, got.size(), "query " + q + why);
                recall += Recall.of(oracle.search(query, 10), got);
                // A filter of half the live ordinals.
                RoaringBitmap half = new RoaringBitmap();
                live.forEach(
                        (int o) -> {
                            if (o % 2 == 0) {
                                half.add(o);
                            }
                        });
                SearchResult filtered =
                        index.search(query, 10, Accept.of(half.toArray()), SearchParams.DEFAULTS);
                assertWellFormed(filtered, oracle, half, "half filter, query " + q + why);
                assertEquals(10, filtered.size(), "half filter, query " + q + why);
                // A filter smaller than k (some of it removed): every live member comes back.
                RoaringBitmap few = new RoaringBitmap();
                for (int i = 0; i < 6; i++) {
                    few.add(rnd.nextInt(630));
                }
                SearchResult small =
                        index.search(query, 10, Accept.of(few.toArray()), SearchParams.DEFAULTS);
                assertWellFormed(small, oracle, few, "small filter, query " + q + why);
                long liveInFew = RoaringBitmap.and(few, live).getCardinality();
                assertEquals(liveInFew, small.size(), "small filter " + few + ", query " + q + why);
            }
            recall /= queries;
            assertTrue(
                    recall >= minRecall(),
                    kind() + " " + metric + ": recall@10 " + recall + " < " + minRecall() + why);
        }
    }

    @ParameterizedTest
    @EnumSource(Metric.class)
    void saveAndLoadGiveTheSameAnswers(Metric metric, @TempDir Path tmp) throws Exception {
        float[][] v = data(9, 500);
        Path file = tmp.resolve("index.bin");
        List<SearchResult> before = new ArrayList<>();
        try (VectorIndex index = create(metric)) {
            for (int i = 0; i < v.length; i++) {
                index.add(i, v[i]);
            }
            for (int i = 0; i < v.length; i += 5) {
                index.remove(i);
            }
            assertTrue(purgedAndChecked(index).isClean());
            for (int q = 0; q < 20; q++) {
                before.add(index.search(v[q * 7], 10));
            }
            index.save(file);
        }
        try (VectorIndex loaded = load(metric, file)) {
            assertEquals(400, loaded.size());
            for (int i = 0; i < v.length; i += 5) {
                assertFalse(loaded.contains(i), "a removed ordinal came back from the file: " + i);
            }
            assertTrue(loaded.verifyIntegrity().isClean(), loaded.verifyIntegrity().toString());
            for (int q = 0; q < 20; q++) {
                SearchResult after = loaded.search(v[q * 7], 10);
                // Scores are computed in one fixed order (see VectorKernels), so they match to the
                // bit.
                assertArrayEquals(before.get(q).ordinals(), after.ordinals(), "query " + q);
                assertArrayEquals(before.get(q).scores(), after.scores(), "query " + q);
            }
        }
    }

    /**
     * Two searchers run while a writer adds and removes: no search fails, and none returns an
     * ordinal removed before the searches started and never added again.
     */
    @Test
    void searchesBesideAWriterNeverReturnRemovedOrdinals() throws Exception {
        float[][] v = data(11, 1_200);
        try (VectorIndex index = create(Metric.COSINE)) {
            for (int i = 0; i < 600; i++) {
                index.add(i, v[i]);
            }
            RoaringBitmap goneForever = new RoaringBitmap();
            for (int i = 0; i < 600; i += 4) {
                index.remove(i);
                goneForever.add(i);
            }
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
            AtomicInteger searches = new AtomicInteger();
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int offset = t;
                Thread r =
                        new Thread(
                                () -> {
                                    SplittableRandom rnd = new SplittableRandom(offset);
                                    while (!stop.get()) {
                                        try {
                                            SearchResult res =
                                                    index.search(v[rnd.nextInt(v.length)], 10);
                                            for (int o : res.ordinals()) {
                                                if (goneForever.contains(o)) {
                                                    problems.add("returned removed ordinal " + o);
                                                }
                                            }
                                            searches.incrementAndGet();
                                        } catch (RuntimeException e) {
                                            problems.add(e.toString());
                                        }
                                    }
                                });
                r.start();
                readers.add(r);
            }
            // The writer starts once both searchers are searching, so the two really overlap (an
            // index whose adds are fast could otherwise finish before a searcher is scheduled).
            long started = System.nanoTime();
            while (searches.get() < 2
                    && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(30)) {
                Thread.onSpinWait();
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_500);
            for (int i = 600; i < 1_200 && System.nanoTime() < deadline; i++) {
                index.add(i, v[i]);
                if (i % 3 == 0) {
                    index.remove(i - 1); // a fresh ordinal: removals run beside the searches too
                }
            }
            stop.set(true);
            for (Thread r : readers) {
                r.join(30_000);
            }
            if (!problems.isEmpty()) {
                fail(kind() + ": " + problems.size() + " problems, first " + problems.peek());
            }
            assertTrue(searches.get() > 0, "no search ran");
            IntegrityReport report = purgedAndChecked(index);
            assertTrue(report.isClean(), report.toString());
        }
    }
}
