package dev.nepenthe.ivfpq;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Lloyd's k-means with k-means++ seeding over points stored back to back in one float array.
 * Assignment goes through the nearest-centroid kernel ({@link VectorKernels#nearest}, the same
 * ranking an index uses to assign and encode afterwards), seeding through the batch distance
 * kernels, so the SIMD path does the work.
 *
 * <p>Cost: seeding is {@code n * k * dim} multiply-adds, each iteration the same again; memory is
 * the centroid block plus {@code n} ints of assignment.
 */
final class KMeans {
    private KMeans() {}

    /**
     * Trains {@code k} centroids of dimension {@code dim} on {@code n} points.
     *
     * @param points {@code n * dim} floats, point i at {@code i * dim}
     * @param iterations Lloyd iterations after seeding; stops early when no assignment changes
     * @return {@code k * dim} floats, centroid c at {@code c * dim}
     */
    static float[] train(
            VectorKernels kernels,
            float[] points,
            int n,
            int dim,
            int k,
            int iterations,
            SplittableRandom rnd) {
        if (n < k) {
            throw new IllegalArgumentException(
                    "k-means: expected at least k=" + k + " points, got " + n);
        }
        float[] centroids = seedPlusPlus(kernels, points, n, dim, k, rnd);
        int[] assign = new int[n];
        Arrays.fill(assign, -1);
        int[] next = new int[n];
        double[] sums = new double[k * dim];
        int[] counts = new int[k];
        for (int it = 0; it < iterations; it++) {
            // 1. Assign every point to its nearest centroid.
            kernels.nearest(points, 0, n, CentroidBlock.of(centroids, 0, k, dim), next, 0);
            int changed = 0;
            for (int i = 0; i < n; i++) {
                if (next[i] != assign[i]) {
                    assign[i] = next[i];
                    changed++;
                }
            }
            if (changed == 0 && it > 0) {
                break;
            }
            // 2. Move every centroid to the mean of its points.
            Arrays.fill(sums, 0);
            Arrays.fill(counts, 0);
            for (int i = 0; i < n; i++) {
                int c = assign[i];
                counts[c]++;
                int po = i * dim;
                int co = c * dim;
                for (int d = 0; d < dim; d++) {
                    sums[co + d] += points[po + d];
                }
            }
            for (int c = 0; c < k; c++) {
                if (counts[c] == 0) {
                    continue; // handled below
                }
                int co = c * dim;
                for (int d = 0; d < dim; d++) {
                    centroids[co + d] = (float) (sums[co + d] / counts[c]);
                }
            }
            // 3. An empty cluster takes over a random point of the largest one (FAISS splits the
            // same way), so all k centroids stay useful.
            for (int c = 0; c < k; c++) {
                if (counts[c] > 0) {
                    continue;
                }
                int largest = 0;
                for (int o = 1; o < k; o++) {
                    if (counts[o] > counts[largest]) {
                        largest = o;
                    }
                }
                if (counts[largest] <= 1) {
                    break; // fewer distinct points than centroids: nothing to split
                }
                int pick = rnd.nextInt(counts[largest]);
                for (int i = 0; i < n; i++) {
                    if (assign[i] == largest && pick-- == 0) {
                        System.arraycopy(points, i * dim, centroids, c * dim, dim);
                        assign[i] = c;
                        counts[c] = 1;
                        counts[largest]--;
                        break;
                    }
                }
            }
        }
        return centroids;
    }

    /**
     * Squared distances from {@code point} to {@code count} vectors of the same length stored back
     * to back from offset 0 of {@code block}. Short vectors (PQ sub-vectors) go through the PQ
     * table kernel, which is laid out for them; long ones through the batch kernel.
     */
    static void distances(
            VectorKernels kernels, float[] point, float[] block, int count, float[] out) {
        if (point.length <= 16) {
            kernels.pqDistanceTable(point, block, 1, count, out);
        } else {
            kernels.squareDistanceBatch(point, block, 0, count, point.length, out, 0);
        }
    }

    /**
     * The nearest of {@code k} centroids for each of {@code n} points stored back to back from
     * offset 0 of {@code points} (ranked as {@link VectorKernels#nearest} ranks).
     */
    static int[] assign(
            VectorKernels kernels, float[] points, int n, int dim, float[] centroids, int k) {
        int[] out = new int[n];
        kernels.nearest(points, 0, n, CentroidBlock.of(centroids, 0, k, dim), out, 0);
        return out;
    }

    /**
     * k-means++: the first centre uniformly, each next one with probability proportional to the
     * squared distance from the nearest centre chosen so far.
     */
    private static float[] seedPlusPlus(
            VectorKernels kernels, float[] points, int n, int dim, int k, SplittableRandom rnd) {
        float[] centroids = new float[k * dim];
        int first = rnd.nextInt(n);
        System.arraycopy(points, first * dim, centroids, 0, dim);
        double[] minDist = new double[n];
        float[] c = new float[dim];
        System.arraycopy(points, first * dim, c, 0, dim);
        float[] d = new float[n];
        distances(kernels, c, points, n, d);
        double total = 0;
        for (int i = 0; i < n; i++) {
            minDist[i] = d[i];
            total += d[i];
        }
        for (int chosen = 1; chosen < k; chosen++) {
            int pick;
            if (total <= 0) {
                pick = rnd.nextInt(n); // every point coincides with a centre already
            } else {
                double r = rnd.nextDouble() * total;
                pick = n - 1;
                for (int i = 0; i < n; i++) {
                    r -= minDist[i];
                    if (r < 0) {
                        pick = i;
                        break;
                    }
                }
            }
            System.arraycopy(points, pick * dim, centroids, chosen * dim, dim);
            System.arraycopy(points, pick * dim, c, 0, dim);
            distances(kernels, c, points, n, d);
            total = 0;
            for (int i = 0; i < n; i++) {
                if (d[i] < minDist[i]) {
                    minDist[i] = d[i];
                }
                total += minDist[i];
            }
        }
        return centroids;
    }
}
