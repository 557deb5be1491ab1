package dev.nepenthe.testing;

import java.util.Random;
import java.util.SplittableRandom;

/**
 * Seeded synthetic data for tests: the same seed gives the same vectors on every machine. Clustered
 * data (Gaussian blobs around random centres) is what ANN indexes find hard and realistic; uniform
 * data is the easy, boring case.
 */
public final class Datasets {
    private Datasets() {}

    /**
     * {@code n} vectors of dimension {@code dim} drawn around {@code clusters} centres.
     *
     * @param spread standard deviation of each point around its centre, relative to the centres'
     *     own spread (0.3 gives overlapping but distinct blobs)
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

    /**
     * {@code n} vectors of dimension {@code dim} with the low intrinsic dimension of real
     * embeddings: each lies near a {@code rank}-dimensional plane through one of {@code clusters}
     * random centres (its own random plane per cluster), plus a little noise in every dimension.
     * Isotropic blobs ({@link #clustered}) in hundreds of dimensions make every point of a blob
     * nearly as close as any other, so no graph finds its true neighbours (recall@10 0.05 at 1M,
     * 384 dimensions); real embeddings are not like that. Draw queries as further rows of the same
     * call (same seed, larger {@code n}): rows do not depend on how many follow them.
     *
     * @param rank the planes' dimension, 1 to {@code dim}
     * @param spread standard deviation along each plane direction, relative to the centres' spread;
     *     the noise off the plane is a tenth of it
     */
    public static float[][] lowRank(
            long seed, int n, int dim, int clusters, int rank, double spread) {
        if (rank < 1 || rank > dim) {
            throw new IllegalArgumentException("rank: expected 1 to " + dim + ", got " + rank);
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] centres = new float[clusters][dim];
        float[][][] planes = new float[clusters][rank][dim];
        // Unit-variance directions scaled so a point's offset along the plane has about the
        // spread per dimension that clustered() gives, whatever the rank.
        double scale = spread / Math.sqrt(rank);
        for (int c = 0; c < clusters; c++) {
            for (int i = 0; i < dim; i++) {
                centres[c][i] = (float) gaussian(rnd);
            }
            for (float[] direction : planes[c]) {
                for (int i = 0; i < dim; i++) {
                    direction[i] = (float) (scale * gaussian(rnd));
                }
            }
        }
        float[][] out = new float[n][dim];
        double[] z = new double[rank];
        for (int v = 0; v < n; v++) {
            int c = rnd.nextInt(clusters);
            for (int j = 0; j < rank; j++) {
                z[j] = gaussian(rnd);
            }
            for (int i = 0; i < dim; i++) {
                double x = centres[c][i] + 0.1 * spread * gaussian(rnd);
                for (int j = 0; j < rank; j++) {
                    x += z[j] * planes[c][j][i];
                }
                out[v][i] = (float) x;
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

    /**
     * One vector of standard normal components from {@code new Random(seed)}: what many store tests
     * use as a record's vector, distinct seeds giving directions far apart in a few dimensions.
     */
    public static float[] gaussian(long seed, int dim) {
        Random r = new Random(seed);
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    private static double gaussian(SplittableRandom rnd) {
        // Box-Muller; SplittableRandom has no nextGaussian of its own in every JDK.
        double u1 = rnd.nextDouble();
        double u2 = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
    }
}
