package dev.nepenthe.ivfpq;

import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * Which anchor and which sub-codes each sample vector got: what a training decides, and the
 * lock-free k-means that decides it. Apart from {@link Codebooks} because it is the one part of a
 * training that keeps no centroid: every intermediate mean is zeroed before it returns, and the
 * codebooks are then built from the assignment alone, as exact means of the members it names.
 */
final class Assignment {
    private final int[] anchorOf;
    private final byte[] codes;

    Assignment(int[] anchorOf, byte[] codes) {
        this.anchorOf = anchorOf;
        this.codes = codes;
    }

    /** Per sample vector, the anchor it belongs to. */
    int[] anchorOf() {
        return anchorOf;
    }

    /** Per sample vector, its m sub-codes (PQ), back to back; empty for OSQ. */
    byte[] codes() {
        return codes;
    }

    /**
     * The lock-free part of a training, on a copy of {@code s} sample vectors: k-means of the
     * anchors, each sample vector's anchor fixed, anchors set to their members' means; k-means of
     * each subspace's codebook on the residuals to those anchors, each sub-code fixed. Cost: {@code
     * iterations * s * (nlist + ksub) * dim} multiply-adds. Every intermediate centroid is zeroed
     * before returning; only the assignment leaves.
     *
     * @param sample {@code s * dim} floats (prepared vectors); read, not kept
     * @param phase told the step being run ("coarse k-means", "PQ k-means")
     */
    static Assignment compute(
            VectorKernels kernels,
            IvfPqParams params,
            int dim,
            float[] sample,
            int s,
            SplittableRandom rnd,
            Consumer<String> phase) {
        int nlist = params.nlist();
        int m = params.m();
        int ksub = params.ksub();
        phase.accept("coarse k-means");
        float[] coarse =
                KMeans.train(kernels, sample, s, dim, nlist, params.iterations(), rnd.split());
        int[] anchorOf = KMeans.assign(kernels, sample, s, dim, coarse, nlist);
        float[] anchors = exactMeans(sample, s, dim, anchorOf, nlist);
        if (params.codes() != IvfPqParams.Codes.PQ) {
            Arrays.fill(coarse, 0f);
            Arrays.fill(anchors, 0f);
            return new Assignment(
                    anchorOf, new byte[0]); // OSQ: anchors only, nothing trained per subspace
        }
        float[] residuals = new float[s * dim];
        for (int i = 0; i < s; i++) {
            kernels.subtract(sample, i * dim, anchors, anchorOf[i] * dim, residuals, i * dim, dim);
        }
        phase.accept("PQ k-means");
        ProductQuantizer trained =
                ProductQuantizer.train(
                        kernels, residuals, s, dim, m, ksub, params.iterations(), rnd.split());
        byte[] codes = new byte[s * m];
        int[] scratch = new int[m];
        float[] r = new float[dim];
        for (int i = 0; i < s; i++) {
            System.arraycopy(residuals, i * dim, r, 0, dim);
            trained.encode(kernels, r, scratch, codes, i * m);
        }
        Arrays.fill(residuals, 0f);
        Arrays.fill(r, 0f);
        Arrays.fill(coarse, 0f);
        Arrays.fill(anchors, 0f);
        trained.wipe();
        return new Assignment(anchorOf, codes);
    }

    private static float[] exactMeans(float[] points, int n, int dim, int[] assign, int k) {
        ListSums sums = new ListSums(k, dim);
        for (int i = 0; i < n; i++) {
            sums.add(assign[i], points, i * dim);
        }
        float[] means = new float[k * dim];
        for (int c = 0; c < k; c++) {
            if (sums.count(c) > 0) {
                sums.mean(c, means, c * dim);
            }
        }
        sums.clear();
        return means;
    }
}
