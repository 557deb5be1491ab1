package dev.nepenthe.ivfpq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.testing.Seeds;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rotation is orthogonal (by its matrix and by what it preserves), mixes every component, and
 * is a function of dimension and seed.
 */
class RandomRotationTest {

    static double dot(float[] a, float[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (double) a[i] * b[i];
        }
        return s;
    }

    static float[] gaussian(SplittableRandom rnd, int dim, double scale, double shift) {
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            double u1 = rnd.nextDouble();
            double u2 = rnd.nextDouble();
            v[i] =
                    (float)
                            (shift
                                    + scale
                                            * Math.sqrt(-2 * Math.log(1 - u1))
                                            * Math.cos(2 * Math.PI * u2));
        }
        return v;
    }

    static float[] rotate(RandomRotation r, float[] v) {
        float[] out = new float[v.length];
        r.apply(v, 0, out);
        return out;
    }

    /** Its matrix, column by column (the images of the basis vectors), has orthonormal columns. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 8, 12, 63, 100, 384})
    void columnsAreOrthonormal(int dim) {
        RandomRotation r = new RandomRotation(dim, 17);
        float[][] cols = new float[dim][];
        for (int i = 0; i < dim; i++) {
            float[] e = new float[dim];
            e[i] = 1;
            cols[i] = rotate(r, e);
        }
        double worst = 0;
        for (int i = 0; i < dim; i++) {
            for (int j = i; j < dim; j++) {
                double g = dot(cols[i], cols[j]);
                worst = Math.max(worst, Math.abs(g - (i == j ? 1 : 0)));
            }
        }
        assertTrue(worst < 1e-5, "dim " + dim + ": largest deviation of R^T R from I is " + worst);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 64, 100, 384, 768, 1000, 1024})
    void preservesNormsAndDotProducts(int dim) {
        long seed = Seeds.draw("RandomRotationTest.preservesNormsAndDotProducts[" + dim + "]");
        SplittableRandom rnd = new SplittableRandom(seed);
        RandomRotation r = new RandomRotation(dim, rnd.nextLong());
        for (int t = 0; t < 20; t++) {
            // Shifted vectors too: embeddings are rarely centred, and a large common component
            // is what a sloppy transform loses first.
            float[] a = gaussian(rnd, dim, 1 + rnd.nextDouble() * 10, t % 2 == 0 ? 0 : 5);
            float[] b = gaussian(rnd, dim, 1, t % 3 == 0 ? 0 : -3);
            float[] ra = rotate(r, a);
            float[] rb = rotate(r, b);
            double na = dot(a, a);
            assertEquals(na, dot(ra, ra), 1e-5 * na, "norm, dim " + dim + Seeds.replay(seed));
            double scale = Math.sqrt(na * dot(b, b));
            assertEquals(
                    dot(a, b),
                    dot(ra, rb),
                    1e-5 * scale,
                    "dot product, dim " + dim + Seeds.replay(seed));
        }
    }

    /**
     * Energy reaches every part of the vector, also when the dimension is not a power of two: for
     * every basis vector, each of the three regions (components only the front Hadamard window
     * covers, the windows' overlap, components only the back window covers) ends with a share of
     * the energy close to its share of the components. One round alone fails this (a spike in the
     * back-only region that the permutation moves to the front-only region stays a spike), as does
     * dropping the permutation at d=1000 (measured 0.06).
     */
    @ParameterizedTest
    @ValueSource(ints = {100, 384, 768, 1000})
    void energyReachesEveryRegion(int dim) {
        RandomRotation r = new RandomRotation(dim, 5);
        int block = Integer.highestOneBit(dim);
        int[] size = {dim - block, 2 * block - dim, dim - block};
        double worst = Double.MAX_VALUE;
        for (int i = 0; i < dim; i++) {
            float[] e = new float[dim];
            e[i] = 1;
            float[] col = rotate(r, e);
            double[] energy = new double[3];
            for (int j = 0; j < dim; j++) {
                energy[j < dim - block ? 0 : j < block ? 1 : 2] += (double) col[j] * col[j];
            }
            for (int g = 0; g < 3; g++) {
                worst = Math.min(worst, energy[g] / ((double) size[g] / dim));
            }
        }
        // Measured minima (seed 5): 0.50 at d=100 (regions of 36, 28 and 36), 0.70 at 384, 0.78
        // at 768, 0.31 at 1000 (its overlap is 24 components, so its share is a noisy sum).
        double bound = dim == 1000 ? 0.2 : dim == 100 ? 0.35 : 0.5;
        assertTrue(
                worst >= bound,
                "dim "
                        + dim
                        + ": a region got only "
                        + worst
                        + " of its share of a basis vector's energy");
    }

    /**
     * A basis vector comes out spread: no component keeps more than a bounded share of its energy.
     */
    @Test
    void spreadsASpikeOverTheComponents() {
        int dim = 384;
        RandomRotation r = new RandomRotation(dim, 5);
        for (int i = 0; i < dim; i++) {
            float[] e = new float[dim];
            e[i] = 1;
            float[] col = rotate(r, e);
            double largest = 0;
            for (float x : col) {
                largest = Math.max(largest, (double) x * x);
            }
            // Perfect spreading gives 1/384 per component; measured at most 19/384 over all inputs
            // (seed 5); without rotation it is 384/384.
            assertTrue(
                    largest < 40.0 / dim,
                    "input " + i + ": one output keeps " + largest + " of the energy");
        }
    }

    @Test
    void aFunctionOfDimensionAndSeedOnly() {
        SplittableRandom rnd = new SplittableRandom(3);
        float[] v = gaussian(rnd, 384, 1, 0.5);
        float[] a = rotate(new RandomRotation(384, 42), v);
        float[] b = rotate(new RandomRotation(384, 42), v);
        float[] c = rotate(new RandomRotation(384, 43), v);
        assertArrayEquals(a, b, "same seed, same rotation, bit for bit");
        assertFalse(Arrays.equals(a, c), "another seed gives another rotation");
    }

    @Test
    void rotatesInPlaceAndFromAnOffset() {
        RandomRotation r = new RandomRotation(100, 1);
        float[] v = gaussian(new SplittableRandom(2), 100, 1, 0);
        float[] expected = rotate(r, v);
        float[] inPlace = v.clone();
        r.apply(inPlace, 0, inPlace);
        assertArrayEquals(expected, inPlace);
        float[] padded = new float[130];
        System.arraycopy(v, 0, padded, 30, 100);
        float[] out = new float[100];
        r.apply(padded, 30, out);
        assertArrayEquals(expected, out);
    }

    @Test
    void refusesBadShapes() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new RandomRotation(0, 1));
        assertTrue(e.getMessage().contains("dimension > 0, got 0"), e.getMessage());
        RandomRotation r = new RandomRotation(8, 1);
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> r.apply(new float[7], 0, new float[8]));
        assertTrue(e.getMessage().contains("expected 8 floats"), e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> r.apply(new float[10], 3, new float[8]));
        assertTrue(e.getMessage().contains("offset 3"), e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> r.apply(new float[8], 0, new float[7]));
        assertTrue(e.getMessage().contains("output of 7"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> r.apply(new float[8], -1, new float[8]));
        RandomRotation odd = new RandomRotation(12, 1);
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> odd.apply(new float[12], 0, new float[12], new float[11]));
        assertTrue(
                e.getMessage().contains("scratch of at least 12 floats, got 11"), e.getMessage());
    }
}
