package dev.nepenthe.ivfpq;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * m sub-quantizers of {@code ksub} centroids each, trained on IVF residuals. A vector's code is m
 * bytes: byte j names the centroid of subspace j nearest to the vector's j-th sub-vector of {@code
 * dsub = dim / m} floats.
 *
 * <p>Codebook layout (what {@link VectorKernels#pqDistanceTable} expects): for each subspace j,
 * {@code ksub} centroids of {@code dsub} floats back to back; centroid c of subspace j starts at
 * {@code (j * ksub + c) * dsub}.
 */
final class ProductQuantizer {
    final int dim;
    final int m;
    final int ksub;
    final int dsub;
    private final float[] codebooks;

    /**
     * Subspace j's codebook laid out for {@link VectorKernels#nearest}: what encoding ranks with.
     */
    private final CentroidBlock[] blocks;

    ProductQuantizer(int dim, int m, int ksub, float[] codebooks) {
        if (dim % m != 0) {
            throw new IllegalArgumentException(
                    "product quantizer: m=" + m + " must divide dimension " + dim);
        }
        if (codebooks.length != dim * ksub) {
            throw new IllegalArgumentException(
                    "product quantizer: expected "
                            + dim * ksub
                            + " codebook floats (m * ksub * dsub), got "
                            + codebooks.length);
        }
        this.dim = dim;
        this.m = m;
        this.ksub = ksub;
        this.dsub = dim / m;
        this.codebooks = codebooks;
        this.blocks = new CentroidBlock[m];
        for (int j = 0; j < m; j++) {
            blocks[j] = CentroidBlock.of(codebooks, j * ksub * dsub, ksub, dsub);
        }
    }

    /**
     * Trains one k-means per subspace on {@code n} residuals.
     *
     * @param residuals {@code n * dim} floats; cost is {@code iterations * n * ksub * dim}
     *     multiply-adds
     */
    static ProductQuantizer train(
            VectorKernels kernels,
            float[] residuals,
            int n,
            int dim,
            int m,
            int ksub,
            int iterations,
            SplittableRandom rnd) {
        int dsub = dim / m;
        float[] codebooks = new float[dim * ksub];
        float[] sub = new float[n * dsub];
        for (int j = 0; j < m; j++) {
            // 1. Gather sub-vector j of every residual into one contiguous block.
            for (int i = 0; i < n; i++) {
                System.arraycopy(residuals, i * dim + j * dsub, sub, i * dsub, dsub);
            }
            // 2. k-means on that block; its centroids are subspace j's codebook.
            float[] c = KMeans.train(kernels, sub, n, dsub, ksub, iterations, rnd.split());
            System.arraycopy(c, 0, codebooks, j * ksub * dsub, ksub * dsub);
        }
        return new ProductQuantizer(dim, m, ksub, codebooks);
    }

    /** Zeroes the codebooks and their encoding layout (tainted codebooks being replaced). */
    void wipe() {
        Arrays.fill(codebooks, 0f);
        for (CentroidBlock b : blocks) {
            b.wipe();
        }
    }

    /**
     * Copies centroid {@code c} of subspace {@code j}, as the codebooks now hold it, into the
     * encoding layout (overwriting the old one in place).
     */
    void refresh(int j, int c) {
        blocks[j].set(c, codebooks, (j * ksub + c) * dsub);
    }

    /**
     * Whether the encoding layout holds centroid {@code c} of subspace {@code j} as the codebooks
     * do.
     */
    boolean layoutHolds(int j, int c) {
        return blocks[j].holds(c, codebooks, (j * ksub + c) * dsub);
    }

    /**
     * The codebooks themselves (not a copy: callers other than {@link Codebooks} must not write).
     */
    float[] codebooks() {
        return codebooks;
    }

    /**
     * Writes the m-byte code of {@code residual} to {@code codes[off, off+m)}: per subspace, the
     * nearest centroid.
     *
     * @param scratch {@code m} ints
     */
    void encode(VectorKernels kernels, float[] residual, int[] scratch, byte[] codes, int off) {
        for (int j = 0; j < m; j++) {
            kernels.nearest(residual, j * dsub, 1, blocks[j], scratch, j);
        }
        for (int j = 0; j < m; j++) {
            codes[off + j] = (byte) scratch[j];
        }
    }

    /**
     * The code of {@code residual}'s sub-vector {@code j} alone: its nearest centroid of subspace
     * j.
     *
     * @param scratch at least 1 int
     */
    int encodeSubspace(VectorKernels kernels, float[] residual, int j, int[] scratch) {
        kernels.nearest(residual, j * dsub, 1, blocks[j], scratch, 0);
        return scratch[0];
    }

    /** The residual a code stands for, written to {@code out[0, dim)}. */
    void decode(byte[] codes, int off, float[] out) {
        for (int j = 0; j < m; j++) {
            int c = codes[off + j] & 0xFF;
            System.arraycopy(codebooks, (j * ksub + c) * dsub, out, j * dsub, dsub);
        }
    }

    /**
     * Squared norms of every codebook centroid, {@code m * ksub} floats: the query-independent part
     * of the precomputed L2 tables.
     */
    float[] centroidNorms() {
        float[] norms = new float[m * ksub];
        for (int t = 0; t < m * ksub; t++) {
            double s = 0;
            for (int d = 0; d < dsub; d++) {
                float x = codebooks[t * dsub + d];
                s += x * x;
            }
            norms[t] = (float) s;
        }
        return norms;
    }
}
