package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The int8 codes against what they promise: levels within [-127, 127] that dequantize to within
 * half a step of every component, corrections as documented, an estimator whose algebra gives the
 * dot product of the two dequantized vectors, and scorers that return the same float bits on both
 * kernels and in both the single and the bulk form.
 */
class Int8CodesTest {

    private static final int[] DIMS = {1, 2, 3, 7, 16, 37, 64, 100, 384};

    /** Vectors of several shapes: Gaussian, shifted far from the origin, one outlier, constant. */
    private static float[][] vectors(SplittableRandom rnd, int dim) {
        float[][] out = new float[5][dim];
        for (int i = 0; i < dim; i++) {
            out[0][i] = (float) gaussian(rnd);
            out[1][i] = (float) (40 + 0.01 * gaussian(rnd));
            out[2][i] = (float) (1e-3 * gaussian(rnd));
            out[3][i] = -2.5f;
            out[4][i] = (float) gaussian(rnd);
        }
        out[2][dim / 2] = 1000f;
        return out;
    }

    private static double gaussian(SplittableRandom rnd) {
        return Math.sqrt(-2 * Math.log(1 - rnd.nextDouble()))
                * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    @Test
    void levelsStayInRangeAndDequantizeWithinHalfAStep() {
        SplittableRandom rnd = new SplittableRandom(3);
        for (int dim : DIMS) {
            Int8Codes codec = new Int8Codes(dim);
            assertEquals(
                    Int8Codes.CORRECTION_BYTES + ((dim + 3) & ~3),
                    codec.stride(),
                    "stride at dim " + dim);
            assertEquals(
                    Int8Codes.CORRECTION_BYTES,
                    Int8Codes.LEVELS_AT,
                    "levels follow the corrections");
            for (float[] v : vectors(rnd, dim)) {
                byte[] code = new byte[codec.stride() + 8];
                Arrays.fill(code, (byte) 99); // everything the code owns must be written
                codec.encode(v, 0, code, 4);
                float c = codec.centre(code, 4);
                float s = codec.step(code, 4);
                int min = 0;
                int max = 0;
                long sum = 0;
                double norm2 = 0;
                for (int i = 0; i < dim; i++) {
                    int k = code[4 + Int8Codes.LEVELS_AT + i];
                    assertTrue(k >= -127 && k <= 127, "level " + k + " at dim " + dim);
                    min = Math.min(min, k);
                    max = Math.max(max, k);
                    sum += k;
                    norm2 += (double) v[i] * v[i];
                    double err = Math.abs(v[i] - (c + (double) s * k));
                    // Half a step, plus the float rounding of the centre and of (x - c) / s.
                    double bound =
                            s / 2 * (1 + 1e-4) + Math.ulp(Math.abs(c)) + Math.ulp(Math.abs(v[i]));
                    assertTrue(
                            err <= bound,
                            "dim "
                                    + dim
                                    + " component "
                                    + i
                                    + ": "
                                    + v[i]
                                    + " decodes to "
                                    + (c + s * k)
                                    + ", error "
                                    + err
                                    + " > "
                                    + bound);
                }
                for (int i = dim; i < ((dim + 3) & ~3); i++) {
                    assertEquals(
                            0,
                            code[4 + Int8Codes.LEVELS_AT + i],
                            "padding byte " + i + " at dim " + dim);
                }
                assertEquals(99, code[3], "wrote before the entry");
                assertEquals(99, code[4 + codec.stride()], "wrote past the entry");
                assertEquals((float) ((double) s * sum), codec.stepTimesLevelSum(code, 4));
                assertEquals((float) norm2, codec.squaredNorm(code, 4), (float) norm2 * 1e-6f);
                if (s > 0) {
                    // The range's ends are the extreme levels: the whole grid is used.
                    assertEquals(-127, min, "smallest level at dim " + dim);
                    assertEquals(127, max, "largest level at dim " + dim);
                } else {
                    assertEquals(0, min);
                    assertEquals(0, max);
                    assertEquals(v[0], c, "a constant vector is its centre");
                }
            }
        }
    }

    @Test
    void theSameVectorAlwaysGivesTheSameBytes() {
        SplittableRandom rnd = new SplittableRandom(4);
        Int8Codes codec = new Int8Codes(100);
        for (float[] v : vectors(rnd, 100)) {
            byte[] a = new byte[codec.stride()];
            byte[] b = new byte[codec.stride() + 10];
            codec.encode(v, 0, a, 0);
            float[] shifted = new float[110];
            System.arraycopy(v, 0, shifted, 7, 100);
            codec.encode(shifted, 7, b, 10);
            assertArrayEquals(a, Arrays.copyOfRange(b, 10, 10 + codec.stride()));
        }
    }

    /**
     * The estimator is the dot product of the two dequantized vectors (up to float rounding), and
     * so within the quantization bound of the true dot product.
     */
    @Test
    void theEstimateIsTheDotProductOfTheDequantizedVectors() {
        SplittableRandom rnd = new SplittableRandom(5);
        VectorKernels k = Kernels.get();
        for (int dim : DIMS) {
            Int8Codes codec = new Int8Codes(dim);
            float[][] vs = vectors(rnd, dim);
            for (float[] p : vs) {
                for (float[] x : vs) {
                    byte[] pc = new byte[codec.stride()];
                    byte[] xc = new byte[codec.stride()];
                    codec.encode(p, 0, pc, 0);
                    codec.encode(x, 0, xc, 0);
                    float est =
                            Int8Codes.estimate(
                                    codec.centre(pc, 0),
                                    codec.step(pc, 0),
                                    codec.componentSum(pc, 0),
                                    codec.centre(xc, 0),
                                    codec.step(xc, 0),
                                    codec.stepTimesLevelSum(xc, 0),
                                    k.dotInt8(
                                            pc, Int8Codes.LEVELS_AT, xc, Int8Codes.LEVELS_AT, dim));
                    float pc0 = codec.centre(pc, 0), ps = codec.step(pc, 0);
                    float xc0 = codec.centre(xc, 0), xs = codec.step(xc, 0);
                    double dequantized = 0;
                    double truth = 0;
                    double bound = 0;
                    double products = 0;
                    for (int i = 0; i < dim; i++) {
                        double ph = pc0 + (double) ps * pc[Int8Codes.LEVELS_AT + i];
                        double xh = xc0 + (double) xs * xc[Int8Codes.LEVELS_AT + i];
                        dequantized += ph * xh;
                        products += Math.abs(ph * xh);
                        truth += (double) p[i] * x[i];
                        // p = p^ + e_p, x = x^ + e_x with |e| <= step / 2 per component.
                        bound +=
                                Math.abs(ph) * xs / 2
                                        + Math.abs(xh) * ps / 2
                                        + (double) ps * xs / 4;
                    }
                    // The float terms of the estimator (and of the query's component sum).
                    double magnitude =
                            Math.abs(xc0)
                                            * (Math.abs((double) dim * pc0)
                                                    + Math.abs(codec.stepTimesLevelSum(pc, 0)))
                                    + Math.abs((double) pc0 * codec.stepTimesLevelSum(xc, 0))
                                    + products;
                    // Float rounding of a few products and sums of these magnitudes.
                    double rounding = 1e-5 * magnitude + 1e-30;
                    if (!(Math.abs(est - dequantized) <= rounding)) {
                        fail(
                                "dim "
                                        + dim
                                        + ": estimate "
                                        + est
                                        + ", dequantized product "
                                        + dequantized);
                    }
                    if (!(Math.abs(est - truth) <= bound * (1 + 1e-3) + rounding)) {
                        fail(
                                "dim "
                                        + dim
                                        + ": estimate "
                                        + est
                                        + ", true product "
                                        + truth
                                        + ", bound "
                                        + bound);
                    }
                }
            }
        }
    }

    /**
     * Through the scorer seam, for each metric: the same bits on both kernels (the integer kernel
     * agrees exactly and the float corrections are one method), bulk equal to single, a node scorer
     * equal to a query scorer over the node's own vector, and never exact.
     */
    @Test
    void scorersGiveTheSameBitsOnBothKernelsAndInBothForms() {
        int dim = 45;
        int n = 60;
        float[][] raw = Datasets.clustered(6, n + 5, dim, 4, 0.4);
        for (Metric metric : Metric.values()) {
            Int8Codes codec = new Int8Codes(dim);
            byte[] codes = new byte[n * codec.stride()];
            float[][] prepared = new float[n][];
            for (int i = 0; i < n; i++) {
                prepared[i] = metric.prepare(raw[i]);
                codec.encode(prepared[i], 0, codes, i * codec.stride());
            }
            Int8VectorScorers scalar =
                    new Int8VectorScorers(metric, Kernels.scalar(), codec, codes);
            Int8VectorScorers panama =
                    new Int8VectorScorers(metric, Kernels.panama(), codec, codes);
            assertFalse(scalar.isExact());
            int[] nodes = new int[n];
            for (int i = 0; i < n; i++) {
                nodes[i] = (i * 37) % n;
            }
            for (int q = n; q < n + 5; q++) {
                float[] query = metric.prepare(raw[q]);
                NodeScorer s = scalar.queryScorer(query);
                NodeScorer p = panama.queryScorer(query);
                assertFalse(s.isExact());
                float[] bulkS = new float[n];
                float[] bulkP = new float[n];
                for (int count : new int[] {0, 1, 3, 4, 7, n}) {
                    s.bulkScore(nodes, count, bulkS);
                    p.bulkScore(nodes, count, bulkP);
                    for (int i = 0; i < count; i++) {
                        float single = s.score(nodes[i]);
                        assertSameBits(
                                single, p.score(nodes[i]), metric + " single, node " + nodes[i]);
                        assertSameBits(
                                single,
                                bulkS[i],
                                metric + " scalar bulk of " + count + ", node " + nodes[i]);
                        assertSameBits(
                                single,
                                bulkP[i],
                                metric + " panama bulk of " + count + ", node " + nodes[i]);
                    }
                }
                // The metric's form: L2 is the negated distance from exact norms and the estimated
                // product.
                float est = s.score(5);
                if (metric == Metric.L2) {
                    float exact = -Kernels.get().squareDistance(query, prepared[5]);
                    assertTrue(
                            Math.abs(est - exact) < 0.05f * Math.abs(exact) + 0.05f,
                            metric + ": " + est + " vs " + exact);
                } else {
                    float exact = Kernels.get().dot(query, prepared[5]);
                    assertTrue(
                            Math.abs(est - exact) < 0.02f * Math.abs(exact) + 0.02f,
                            metric + ": " + est + " vs " + exact);
                }
            }
            UpdatableNodeScorer node = panama.nodeScorer(3);
            NodeScorer asQuery = panama.queryScorer(prepared[3]);
            for (int i = 0; i < n; i++) {
                assertSameBits(
                        asQuery.score(i),
                        node.score(i),
                        metric + ": node 3 as a stored point, node " + i);
            }
            node.setScoringNode(8);
            NodeScorer eight = scalar.queryScorer(prepared[8]);
            for (int i = 0; i < n; i++) {
                assertSameBits(
                        eight.score(i), node.score(i), metric + ": re-aimed at node 8, node " + i);
            }
        }
    }

    private static void assertSameBits(float expected, float actual, String what) {
        if (Float.floatToRawIntBits(expected) != Float.floatToRawIntBits(actual)) {
            fail(what + ": " + expected + " vs " + actual);
        }
    }
}
