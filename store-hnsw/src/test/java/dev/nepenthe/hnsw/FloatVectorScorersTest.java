package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import dev.nepenthe.testing.Seeds;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The float scorers against the kernels, bit for bit: the graph code scores only through them, so a
 * graph, a neighbour choice or a tie is what it was when the code called the kernels itself only if
 * every score is the same float. Both kernel implementations, every metric, and dimensions that
 * reach each loop and tail of the kernels' summation order.
 */
class FloatVectorScorersTest {

    private static final int[] DIMS = {1, 3, 8, 13, 16, 25, 37, 64, 100, 128, 207, 384};
    private static final int NODES = 12;

    @ParameterizedTest(name = "off the heap: {0}")
    @ValueSource(booleans = {false, true})
    void scoresEqualTheKernelsBitForBitForEveryMetric(boolean offHeap) {
        long seed =
                Seeds.draw("FloatVectorScorersTest.scoresEqualTheKernelsBitForBitForEveryMetric");
        SplittableRandom rnd = new SplittableRandom(seed);
        for (VectorKernels k : List.of(Kernels.scalar(), Kernels.panama())) {
            for (Metric metric : Metric.values()) {
                for (int dim : DIMS) {
                    String where =
                            k.name()
                                    + " "
                                    + metric
                                    + " dim "
                                    + dim
                                    + (offHeap ? " off the heap" : " on the heap");
                    float[][] v = prepared(rnd, metric, NODES, dim);
                    float[] store = stored(v, dim, 3);
                    FloatVectorScorers scorers = scorers(metric, k, store, dim, offHeap);
                    float[] q = prepared(rnd, metric, 1, dim)[0];
                    NodeScorer query = scorers.queryScorer(q);
                    for (int b = 0; b < NODES; b++) {
                        int off = b * dim;
                        // What the kernel gives, as the metric converts it (and as searches
                        // scored).
                        float kernel =
                                metric == Metric.L2
                                        ? -k.squareDistance(q, 0, store, off, dim)
                                        : k.dot(q, 0, store, off, dim);
                        assertBits(
                                kernel, query.score(b), where + ", query against node " + b, seed);
                        assertBits(
                                metric.score(k, q, store, off, dim),
                                query.score(b),
                                where + ", query against node " + b + " (Metric.score)",
                                seed);
                    }
                    for (int a = 0; a < NODES; a++) {
                        NodeScorer node = scorers.nodeScorer(a);
                        for (int b = 0; b < NODES; b++) {
                            int off = b * dim;
                            // Node to node in place, as builds and repairs compared stored
                            // vectors...
                            float between =
                                    metric == Metric.L2
                                            ? -k.squareDistance(store, a * dim, store, off, dim)
                                            : k.dot(store, a * dim, store, off, dim);
                            assertBits(
                                    between,
                                    node.score(b),
                                    where + ", node " + a + " against node " + b,
                                    seed);
                            // ...and as their searches scored from a copy of the node's vector.
                            assertBits(
                                    metric.score(k, v[a], store, off, dim),
                                    node.score(b),
                                    where
                                            + ", node "
                                            + a
                                            + " against node "
                                            + b
                                            + " (copy of the vector)",
                                    seed);
                        }
                    }
                }
            }
        }
    }

    @ParameterizedTest(name = "off the heap: {0}")
    @ValueSource(booleans = {false, true})
    void bulkScoresEqualSingleScoresAndARetargetedScorerEqualsAFreshOne(boolean offHeap) {
        long seed =
                Seeds.draw(
                        "FloatVectorScorersTest.bulkScoresEqualSingleScoresAndARetargetedScorerEqualsAFreshOne");
        SplittableRandom rnd = new SplittableRandom(seed);
        for (Metric metric : Metric.values()) {
            for (int dim : DIMS) {
                String where =
                        Kernels.get().name()
                                + " "
                                + metric
                                + " dim "
                                + dim
                                + (offHeap ? " off the heap" : " on the heap");
                float[] store = stored(prepared(rnd, metric, NODES, dim), dim, 0);
                FloatVectorScorers scorers = scorers(metric, Kernels.get(), store, dim, offHeap);
                UpdatableNodeScorer moving = scorers.nodeScorer(rnd.nextInt(NODES));
                NodeScorer query = scorers.queryScorer(prepared(rnd, metric, 1, dim)[0]);
                for (int round = 0; round < 8; round++) {
                    int a = rnd.nextInt(NODES);
                    moving.setScoringNode(a);
                    NodeScorer fresh = scorers.nodeScorer(a);
                    // Any order, repeats allowed; only the first count are scored, the rest of
                    // the output stays as it was.
                    int[] nodes = new int[1 + rnd.nextInt(3 * NODES)];
                    for (int i = 0; i < nodes.length; i++) {
                        nodes[i] = rnd.nextInt(NODES);
                    }
                    int count = rnd.nextInt(nodes.length + 1);
                    for (NodeScorer s : new NodeScorer[] {moving, query}) {
                        float[] out = new float[nodes.length + 2];
                        Arrays.fill(out, Float.NaN);
                        s.bulkScore(nodes, count, out);
                        for (int i = 0; i < out.length; i++) {
                            if (i < count) {
                                assertBits(
                                        s.score(nodes[i]),
                                        out[i],
                                        where + ", bulk entry " + i,
                                        seed);
                            } else {
                                assertTrue(
                                        Float.isNaN(out[i]),
                                        where
                                                + ": bulk call wrote entry "
                                                + i
                                                + " of "
                                                + count
                                                + Seeds.replay(seed));
                            }
                        }
                    }
                    for (int b = 0; b < NODES; b++) {
                        assertBits(
                                fresh.score(b),
                                moving.score(b),
                                where + ", re-aimed at " + a + ", node " + b,
                                seed);
                    }
                }
                assertTrue(
                        scorers.isExact() && query.isExact() && moving.isExact(),
                        where + ": float scorers are exact");
            }
        }
    }

    @ParameterizedTest(name = "off the heap: {0}")
    @ValueSource(booleans = {false, true})
    void writersScoreTheCurrentArraysAndASearchItsOwnLayout(boolean offHeap) {
        int dim = 13;
        HnswGraph g =
                new HnswGraph(
                        dim,
                        Metric.L2,
                        Kernels.get(),
                        4,
                        16,
                        HnswParams.Quantization.NONE,
                        offHeap
                                ? HnswParams.VectorStorage.OFF_HEAP
                                : HnswParams.VectorStorage.HEAP);
        assertEquals(offHeap, g.store().vectorsOffHeap());
        SplittableRandom rnd = new SplittableRandom(5);
        float[][] v = prepared(rnd, Metric.L2, 40, dim);
        float[] q = prepared(rnd, Metric.L2, 1, dim)[0];
        for (int i = 0; i < 16; i++) {
            g.store().setVector(g.allocate(i, 0), v[i]);
        }
        GraphLayout before = g.layout();
        NodeScorer old = before.scorers().queryScorer(q);
        float oldScore = old.score(3);
        g.grow(64);
        assertNotSame(before, g.layout());
        assertSame(g.layout().scorers(), g.scorers(), "writers score the current layout's vectors");
        for (int i = 16; i < 40; i++) {
            g.store().setVector(g.allocate(i, 0), v[i]);
        }
        g.store().setVector(3, v[39]);
        NodeScorer now = g.scorers().queryScorer(q);
        for (int s = 0; s < 40; s++) {
            assertBits(
                    Metric.L2.score(Kernels.get(), q, v[s == 3 ? 39 : s], 0, dim),
                    now.score(s),
                    "slot " + s);
        }
        // A search that began before the grow scores the vectors of the layout it walks.
        assertBits(oldScore, old.score(3), "slot 3 through the old layout");
    }

    /**
     * {@code n} random vectors in the metric's stored form; never all zero, so cosine accepts them.
     */
    private static float[][] prepared(SplittableRandom rnd, Metric metric, int n, int dim) {
        float[][] out = new float[n][];
        for (int i = 0; i < n; i++) {
            float[] x = new float[dim];
            for (int j = 0; j < dim; j++) {
                double r = rnd.nextDouble();
                double gauss =
                        Math.sqrt(-2 * Math.log(1 - rnd.nextDouble()))
                                * Math.cos(2 * Math.PI * rnd.nextDouble());
                // Mostly ordinary values, some large and some tiny, so sums round in earnest.
                x[j] = (float) (r < 0.1 ? 1e3 * gauss : r < 0.2 ? 1e-4 * gauss : gauss);
            }
            if (x[0] == 0f) {
                x[0] = 1f;
            }
            out[i] = metric.prepare(x);
        }
        return out;
    }

    /** The vectors back to back as the graph stores them, with {@code spare} unused slots after. */
    private static float[] stored(float[][] v, int dim, int spare) {
        float[] store = new float[(v.length + spare) * dim];
        for (int i = 0; i < v.length; i++) {
            System.arraycopy(v[i], 0, store, i * dim, dim);
        }
        return store;
    }

    /** Scorers over {@code store}, or over the same floats copied into a native segment. */
    private static FloatVectorScorers scorers(
            Metric metric, VectorKernels k, float[] store, int dim, boolean offHeap) {
        return offHeap
                ? new FloatVectorScorers(metric, k, offHeapCopy(store), dim)
                : new FloatVectorScorers(metric, k, store, dim);
    }

    private static java.lang.foreign.MemorySegment offHeapCopy(float[] store) {
        java.lang.foreign.MemorySegment segment =
                java.lang.foreign.Arena.ofAuto().allocate((long) store.length * Float.BYTES, 64);
        java.lang.foreign.MemorySegment.copy(
                store, 0, segment, java.lang.foreign.ValueLayout.JAVA_FLOAT, 0, store.length);
        return segment;
    }

    private static void assertBits(float expected, float actual, String what) {
        assertEquals(
                Float.floatToRawIntBits(expected),
                Float.floatToRawIntBits(actual),
                () -> what + ": expected " + expected + ", got " + actual);
    }

    private static void assertBits(float expected, float actual, String what, long seed) {
        assertEquals(
                Float.floatToRawIntBits(expected),
                Float.floatToRawIntBits(actual),
                () -> what + ": expected " + expected + ", got " + actual + Seeds.replay(seed));
    }
}
