package dev.nepenthe.bench.ivfpq;

import java.util.SplittableRandom;

/**
 * Seeded Gaussian blobs, the same recipe as the test fixture {@code dev.nepenthe.core.testing.Datasets#clustered}
 * (which lives in store-core's test jar, not on the benchmark's runtime class path): centres
 * drawn from N(0, 1) per component, points at {@code centre + spread * N(0, 1)}.
 */
final class ClusteredVectors {
    private ClusteredVectors() {}

    static float[][] generate(long seed, int n, int dim, int clusters, double spread) {
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

    private static double gaussian(SplittableRandom rnd) {
        double u1 = rnd.nextDouble();
        double u2 = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
    }
}
