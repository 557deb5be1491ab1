package dev.nepenthe.testing;

import java.util.SplittableRandom;

/**
 * Seeded synthetic data for tests: the same seed gives the same vectors on every machine.
 * Clustered data (Gaussian blobs around random centres) is what ANN indexes find hard and
 * realistic; uniform data is the easy, boring case.
 */
public final class Datasets {
    private Datasets() {}

    /**
     * {@code n} vectors of dimension {@code dim} drawn around {@code clusters} centres.
     *
     * @param spread standard deviation of each point around its centre, relative to the
     *     centres' own spread (0.3 gives overlapping but distinct blobs)
     */
    public static float[][] clustered(long seed, int n, int dim, int clusters, double spread) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] centres = new float[clusters][dim];
        for (float[] c : centres) {
            for (int i = 0; i < dim; i++) {
                c[i] = (float) gaussian(rnd);
            }
        }
        float[][] out = new float[n][dim];
        for (int v = 0; v < n; v++) {
            float[] c = centres[rnd.nextInt(clusters)];
            for (int i = 0; i < dim; i++) {
                out[v][i] = (float) (c[i] + spread * gaussian(rnd));
            }
        }
        return out;
    }

    /** Uniform components in [-1, 1). */
    public static float[][] uniform(long seed, int n, int dim) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] out = new float[n][dim];
        for (float[] v : out) {
            for (int i = 0; i < dim; i++) {
                v[i] = (float) (rnd.nextDouble() * 2 - 1);
            }
        }
        return out;
    }

    private static double gaussian(SplittableRandom rnd) {
        // Box-Muller; SplittableRandom has no nextGaussian of its own in every JDK.
        double u1 = rnd.nextDouble();
        double u2 = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
    }
}
