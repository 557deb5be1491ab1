package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.testing.Datasets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class HnswConcurrencyTest {

    @Test
    void concurrentInsertsWithConcurrentSearchesBuildAGoodCleanGraph() throws Exception {
        float[][] all = Datasets.clustered(21, 8_100, 64, 40, 0.3);
        float[][] data = Arrays.copyOf(all, 8_000);
        float[][] queries = Arrays.copyOfRange(all, 8_000, 8_100);
        HnswIndex index =
                new HnswIndex(
                        64,
                        Metric.L2,
                        HnswParams.of(12, 80),
                        dev.nepenthe.core.vector.Kernels.get(),
                        16);
        AtomicBoolean done = new AtomicBoolean();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> inserters = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int start = t;
                inserters.add(
                        pool.submit(
                                () -> {
                                    for (int i = start; i < data.length; i += 2) {
                                        index.add(i, data[i]);
                                    }
                                }));
            }
            Future<?> searcher =
                    pool.submit(
                            () -> {
                                int i = 0;
                                while (!done.get()) {
                                    try {
                                        SearchResult r =
                                                index.search(queries[i++ % queries.length], 10);
                                        for (int o : r.ordinals()) {
                                            if (o < 0 || o >= data.length) {
                                                throw new AssertionError(
                                                        "ordinal out of range: " + o);
                                            }
                                        }
                                    } catch (Throwable e) {
                                        errors.add(e);
                                        return;
                                    }
                                }
                            });
            for (Future<?> f : inserters) {
                f.get();
            }
            done.set(true);
            searcher.get();
        } finally {
            pool.shutdown();
        }
        assertTrue(errors.isEmpty(), () -> "search failed: " + errors.peek());
        assertEquals(8_000, index.size());
        // Racing prunes may strand a handful of nodes; the reachability walk links them back.
        long before = index.verifyIntegrity().violations(HnswIntegrityChecker.UNREACHABLE);
        assertTrue(before <= 40, "unreachable after a concurrent build: " + before);
        int linked = index.connectUnreachable();
        assertTrue(
                before == 0 ? linked == 0 : linked >= 1 && linked <= before,
                "linked " + linked + " of " + before);
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);
        ExactIndex exact = HnswFixtures.exact(data, Metric.L2, null);
        double recall = HnswFixtures.recall(index, exact, queries, 10, 64);
        assertTrue(recall >= 0.95, "recall@10 after a two-thread build: " + recall);
    }

    /**
     * A node that a search can reach on some layer has its lists on every layer below, so an insert
     * whose descent ends on it searches layer 0 from a node that leads on. Linked back top-down, a
     * new node was reachable on layer 1 while its layer-0 list was still empty; an insert that
     * descended onto it took only it (and the nodes being linked beside them) as neighbours, an
     * island the rest of the graph did not link into. With 32 threads adding 2,000 nodes to a graph
     * of 3,000, 20 rounds left 16 to 66 of the 40,000 outside their own top ten; linked back from
     * layer 0 up, none in 300,000. Reachability alone misses this: the island is linked to from
     * somewhere, just not from near its nodes.
     */
    @Test
    void everyNodeInsertedInParallelIsFoundByItsOwnVector() throws Exception {
        float[][] data = Datasets.clustered(33, 5_000, 24, 30, 0.3);
        HnswParams params = HnswParams.of(12, 80).withQuantization(HnswParams.Quantization.INT8);
        ForkJoinPool pool = new ForkJoinPool(32);
        List<String> missed = new ArrayList<>();
        try {
            for (int round = 0; round < 20; round++) {
                HnswIndex index =
                        new HnswIndex(
                                24,
                                Metric.COSINE,
                                params,
                                dev.nepenthe.core.vector.Kernels.get(),
                                16);
                for (int i = 0; i < 3_000; i++) {
                    index.add(i, data[i]);
                }
                pool.submit(
                                () ->
                                        IntStream.range(3_000, 5_000)
                                                .parallel()
                                                .forEach(i -> index.add(i, data[i])))
                        .get();
                index.afterBulkLoad();
                for (int i = 3_000; i < 5_000; i++) {
                    int[] top = index.search(data[i], 10).ordinals();
                    int self = i;
                    if (Arrays.stream(top).noneMatch(o -> o == self)) {
                        missed.add("round " + round + ": " + i);
                    }
                }
            }
        } finally {
            pool.shutdown();
        }
        assertTrue(
                missed.isEmpty(),
                () -> missed.size() + " nodes outside their own top ten: " + missed);
    }

    /**
     * Two searching threads and one removing thread. A search that starts after remove(x) returned
     * must not return x; no search may fail.
     */
    @Test
    void searchesDuringRemovalsNeverReturnARemovedOrdinalAndNeverFail() throws Exception {
        int n = 6_000;
        float[][] all = Datasets.clustered(22, n + 64, 48, 30, 0.3);
        float[][] data = Arrays.copyOf(all, n);
        float[][] queries = Arrays.copyOfRange(all, n, n + 64);
        HnswIndex index = HnswFixtures.build(data, Metric.COSINE, HnswParams.of(10, 60));
        int[] order = HnswDeleteRepairTest.shuffled(n, 5);
        AtomicLong clock = new AtomicLong();
        AtomicLongArray removedAt = new AtomicLongArray(n); // 0 = not removed
        AtomicBoolean done = new AtomicBoolean();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        long[] searchCount = new long[2];
        try {
            List<Future<?>> searchers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                searchers.add(
                        pool.submit(
                                () -> {
                                    int i = id;
                                    while (!done.get()) {
                                        long started = clock.get();
                                        SearchResult r;
                                        try {
                                            r =
                                                    index.search(
                                                            queries[i++ % queries.length],
                                                            10,
                                                            Accept.ALL,
                                                            SearchParams.of("efSearch", 40));
                                        } catch (Throwable e) {
                                            errors.add("search threw " + e);
                                            return;
                                        }
                                        searchCount[id]++;
                                        for (int o : r.ordinals()) {
                                            long at = removedAt.get(o);
                                            if (at != 0 && at <= started) {
                                                errors.add(
                                                        "ordinal "
                                                                + o
                                                                + " removed at tick "
                                                                + at
                                                                + " returned by a search started at"
                                                                + " "
                                                                + started);
                                            }
                                        }
                                    }
                                }));
            }
            Future<?> remover =
                    pool.submit(
                            () -> {
                                // Remove 60%: singles and batches, stamping each after its removal
                                // returned.
                                int i = 0;
                                int target = n * 6 / 10;
                                while (i < target) {
                                    int count = (i / 7) % 3 == 0 ? 25 : 1;
                                    int[] batch =
                                            Arrays.copyOfRange(
                                                    order, i, Math.min(target, i + count));
                                    index.removeAll(batch);
                                    long tick = clock.incrementAndGet();
                                    for (int o : batch) {
                                        removedAt.set(o, tick);
                                    }
                                    i += batch.length;
                                }
                            });
            remover.get();
            done.set(true);
            for (Future<?> f : searchers) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        assertTrue(errors.isEmpty(), () -> errors.size() + " errors, first: " + errors.peek());
        assertTrue(
                searchCount[0] + searchCount[1] > 100,
                "searches ran: " + (searchCount[0] + searchCount[1]));
        assertEquals(n - n * 6 / 10, index.size());
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);
    }

    /**
     * Searches take no lock, so a slot can be freed and handed to another vector under a running
     * search, and the arrays can grow under it. One thread keeps removing ordinals and adding them
     * back with new vectors (and adding new ordinals, so the graph grows from a tiny capacity); two
     * threads search, graph walks and exact filtered scans. Every returned score must be, bit for
     * bit, the score of a vector the returned ordinal has held: a score computed on a slot's old
     * vector, a half-zeroed one or another ordinal's would match none. In a quantized graph the
     * walk scores codes and the re-rank reads floats: both must be of the same holder.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(HnswParams.Quantization.class)
    void aSearchNeverReturnsAnOrdinalWithAScoreOfAVectorItDidNotHold(
            HnswParams.Quantization quantization) throws Exception {
        long seed =
                dev.nepenthe.testing.Seeds.draw(
                        "HnswConcurrencyTest.scoresBelongToTheirOrdinals " + quantization);
        int dim = 32;
        var kernels = dev.nepenthe.core.vector.Kernels.get();
        java.util.Random rnd = new java.util.Random(seed);
        HnswIndex index =
                new HnswIndex(
                        dim,
                        Metric.L2,
                        HnswParams.of(8, 40).withQuantization(quantization),
                        kernels,
                        16);
        java.util.concurrent.ConcurrentHashMap<Integer, java.util.List<float[]>> held =
                new java.util.concurrent.ConcurrentHashMap<>();
        int initial = 1_500;
        for (int o = 0; o < initial; o++) {
            float[] v = randomVector(rnd, dim);
            held.computeIfAbsent(o, k -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(v);
            index.add(o, v);
        }
        AtomicBoolean done = new AtomicBoolean();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        AtomicLong checked = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> searchers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                long searcherSeed = seed + 1 + t;
                searchers.add(
                        pool.submit(
                                () -> {
                                    java.util.Random r = new java.util.Random(searcherSeed);
                                    while (!done.get()) {
                                        float[] q = randomVector(r, dim);
                                        org.roaringbitmap.RoaringBitmap accept = null;
                                        if (r.nextInt(3)
                                                == 0) { // few enough to take the exact filtered
                                            // scan
                                            accept = new org.roaringbitmap.RoaringBitmap();
                                            for (int i = 0; i < 30; i++) {
                                                accept.add(r.nextInt(initial));
                                            }
                                        }
                                        SearchResult res;
                                        try {
                                            res =
                                                    index.search(
                                                            q,
                                                            10,
                                                            accept == null
                                                                    ? Accept.ALL
                                                                    : Accept.of(accept.toArray()),
                                                            SearchParams.of("efSearch", 32));
                                        } catch (Throwable e) {
                                            errors.add("search threw " + e);
                                            return;
                                        }
                                        if (accept == null && res.size() < 10) {
                                            // Over a thousand live nodes at all times: a walk must
                                            // find ten.
                                            errors.add(
                                                    "an unfiltered search returned "
                                                            + res.size()
                                                            + " hits, expected 10"
                                                            + dev.nepenthe.testing.Seeds.replay(
                                                                    seed));
                                        }
                                        for (int i = 0; i < res.size(); i++) {
                                            int o = res.ordinals()[i];
                                            float score = res.scores()[i];
                                            boolean matches = false;
                                            for (float[] v : held.getOrDefault(o, List.of())) {
                                                if (Float.floatToRawIntBits(
                                                                Metric.L2.score(
                                                                        kernels, q, v, 0, dim))
                                                        == Float.floatToRawIntBits(score)) {
                                                    matches = true;
                                                    break;
                                                }
                                            }
                                            if (!matches) {
                                                errors.add(
                                                        "ordinal "
                                                                + o
                                                                + " returned with score "
                                                                + score
                                                                + ", the score of no vector it held"
                                                                + dev.nepenthe.testing.Seeds.replay(
                                                                        seed));
                                            }
                                            checked.incrementAndGet();
                                        }
                                    }
                                }));
            }
            Future<?> writer =
                    pool.submit(
                            () -> {
                                java.util.Random r = new java.util.Random(seed + 7);
                                int next = initial;
                                for (int round = 0; round < 400; round++) {
                                    int[] batch = new int[1 + r.nextInt(8)];
                                    for (int i = 0; i < batch.length; i++) {
                                        batch[i] = r.nextInt(initial);
                                    }
                                    index.removeAll(batch);
                                    for (int o : IntStream.of(batch).distinct().toArray()) {
                                        float[] v = randomVector(r, dim);
                                        held.get(o).add(v); // recorded before it can be found
                                        index.add(o, v);
                                    }
                                    for (int i = 0;
                                            i < 5;
                                            i++, next++) { // growth under running searches
                                        float[] v = randomVector(r, dim);
                                        held.computeIfAbsent(
                                                        next,
                                                        k ->
                                                                new java.util.concurrent
                                                                        .CopyOnWriteArrayList<>())
                                                .add(v);
                                        index.add(next, v);
                                    }
                                }
                            });
            writer.get();
            done.set(true);
            for (Future<?> f : searchers) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        assertTrue(errors.isEmpty(), () -> errors.size() + " errors, first: " + errors.peek());
        assertTrue(checked.get() > 1_000, "hits checked: " + checked.get());
        // Single removals walk for reachability only now and then (HnswIndex.removeAll).
        index.connectUnreachable();
        IntegrityReport report = index.verifyIntegrity();
        assertTrue(report.isClean(), report::toString);
    }

    private static float[] randomVector(java.util.Random r, int dim) {
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }
}
