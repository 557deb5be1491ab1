package dev.nepenthe.ivfpq;

import java.util.SplittableRandom;

/**
 * A seeded, data-independent orthogonal rotation of {@code dim} floats, built from random sign
 * flips, random permutations and fast Walsh-Hadamard transforms (a structured random rotation, as
 * RaBitQ and SRHT-style sketches use).
 *
 * <p>Why this and not a dense random orthogonal matrix (a seeded Gaussian's QR): a dense one costs
 * {@code dim^2} multiply-adds per vector and {@code dim^2} floats to hold; this one costs {@code 2
 * * ROUNDS * B log2 B} additions plus {@code ROUNDS} passes of {@code dim} and holds {@code 2 *
 * ROUNDS * B} signs and {@code ROUNDS * dim} permutation entries. Its only job is to spread a
 * vector's energy evenly over the coordinates, so that a per-vector scalar quantizer sees similar,
 * Gaussian-like components and its errors point in no preferred direction; a few rounds of signs,
 * permutations and Hadamard mixing do that.
 *
 * <p>With {@code B} the largest power of two not above {@code dim}, the transform is {@value
 * #ROUNDS} rounds of:
 *
 * <ol>
 *   <li>flip the signs of components {@code [0, B)} by a seeded pattern and apply the normalised
 *       Hadamard transform {@code H_B / sqrt(B)} to them;
 *   <li>permute all {@code dim} components by a seeded random permutation;
 *   <li>flip the signs of components {@code [dim - B, dim)} by a second pattern and apply {@code
 *       H_B / sqrt(B)} to them.
 * </ol>
 *
 * Every step is orthogonal (a diagonal of {@code +-1}, a permutation, or an orthogonal block beside
 * the identity), so the product is. When {@code dim} is a power of two the windows are the whole
 * vector, no permutation is needed, and a round is two randomized Hadamard transforms. Otherwise
 * (384 = 256 + 128, 768 = 512 + 256, 1000 = 512 + 488) the windows overlap by {@code 2B - dim}
 * components only, and the permutation is what carries energy from one end of the vector to the
 * other. Two choices were measured (the figures are in docs/BENCHMARKS.md):
 *
 * <ul>
 *   <li>two rounds: on data whose energy sits in a few coordinates, a second round cut the error of
 *       1-bit estimates well below one round's, and a third added nothing;
 *   <li>the permutation: without it, when {@code dim} is far from a power of two a basis vector
 *       could end with a small fraction of its share of the energy in one end of the vector; a
 *       45-degree butterfly across the halves instead did worse (Hadamard outputs of a spike have
 *       equal magnitudes, so each pair cancels to one side).
 * </ul>
 *
 * The rotation depends on {@code dim} and the seed only; the same pair gives the same rotation, bit
 * for bit, on every JVM (plain float arithmetic in a fixed order).
 *
 * <p>Immutable and thread-safe; scratch, when needed, is the caller's or allocated per call.
 */
final class RandomRotation {
    /** Rounds of (front window, permutation, back window); see the class comment. */
    static final int ROUNDS = 2;

    private final int dim;
    private final long seed;

    /** The Hadamard window, the largest power of two not above {@code dim}. */
    private final int block;

    private final float scale;

    /** {@code 2 * ROUNDS} patterns of {@code B} signs (+1 or -1), one per Hadamard window. */
    private final float[] signs;

    /**
     * {@code ROUNDS} permutations of {@code [0, dim)}, one between the windows of each round (none
     * when B = dim).
     */
    private final int[] permutations;

    /**
     * @param dim the dimension, above 0
     * @param seed picks the rotation; any value
     */
    RandomRotation(int dim, long seed) {
        if (dim <= 0) {
            throw new IllegalArgumentException(
                    "random rotation: expected dimension > 0, got " + dim);
        }
        this.dim = dim;
        this.seed = seed;
        this.block = Integer.highestOneBit(dim);
        this.scale = (float) (1.0 / Math.sqrt(block));
        this.signs = new float[2 * ROUNDS * block];
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < signs.length; i++) {
            signs[i] = rnd.nextBoolean() ? 1f : -1f;
        }
        this.permutations = new int[block < dim ? ROUNDS * dim : 0];
        for (int base = 0; base < permutations.length; base += dim) {
            // Fisher-Yates over [0, dim).
            for (int j = 0; j < dim; j++) {
                permutations[base + j] = j;
            }
            for (int j = dim - 1; j > 0; j--) {
                int k = rnd.nextInt(j + 1);
                int t = permutations[base + j];
                permutations[base + j] = permutations[base + k];
                permutations[base + k] = t;
            }
        }
    }

    int dimension() {
        return dim;
    }

    long seed() {
        return seed;
    }

    /**
     * Writes the rotation of {@code in[off, off+dim)} to {@code out[0, dim)}; with {@code out ==
     * in} and {@code off == 0} it rotates in place. Allocates a scratch array of {@code dim} floats
     * when {@code dim} is not a power of two; hot loops pass their own to {@link #apply(float[],
     * int, float[], float[])}.
     */
    void apply(float[] in, int off, float[] out) {
        apply(in, off, out, block < dim ? new float[dim] : null);
    }

    /**
     * {@link #apply(float[], int, float[])} with caller-owned scratch. Cost: {@code 2 * ROUNDS}
     * Hadamard transforms of {@code B} floats ({@code B log2 B} additions each), plus, when {@code
     * dim} is not a power of two, {@code ROUNDS} permutations of {@code dim} floats.
     *
     * @param scratch at least {@code dim} floats (may be null when {@code dim} is a power of two);
     *     overwritten
     * @throws IllegalArgumentException if the input range, the output or the scratch is too short
     */
    @SuppressWarnings("ReferenceEquality") // in == out asks for the array itself: in place
    void apply(float[] in, int off, float[] out, float[] scratch) {
        if (off < 0 || in.length - off < dim || out.length < dim) {
            throw new IllegalArgumentException(
                    "random rotation: expected "
                            + dim
                            + " floats from offset "
                            + off
                            + " of a "
                            + in.length
                            + "-float input and an output of at least "
                            + dim
                            + ", got an output of "
                            + out.length);
        }
        if (block < dim && (scratch == null || scratch.length < dim)) {
            throw new IllegalArgumentException(
                    "random rotation: expected scratch of at least "
                            + dim
                            + " floats, got "
                            + (scratch == null ? "null" : scratch.length));
        }
        if (in != out || off != 0) {
            System.arraycopy(in, off, out, 0, dim);
        }
        for (int r = 0; r < ROUNDS; r++) {
            signedHadamard(out, 0, 2 * r);
            if (block < dim) {
                permute(out, r, scratch);
            }
            signedHadamard(out, dim - block, 2 * r + 1);
        }
    }

    /** {@code x[j] = x[perm_r[j]]} for every j: the round's seeded random permutation. */
    private void permute(float[] x, int round, float[] scratch) {
        int base = round * dim;
        for (int j = 0; j < dim; j++) {
            scratch[j] = x[permutations[base + j]];
        }
        System.arraycopy(scratch, 0, x, 0, dim);
    }

    /**
     * {@code x[from, from+block) = H_B / sqrt(B) * diag(signs of pattern) * x[from, from+block)},
     * in place: the signs are applied in the first butterfly stage and the scale in the last, so
     * the window is read and written {@code log2 B - 1} times rather than {@code log2 B + 1}.
     */
    private void signedHadamard(float[] x, int from, int pattern) {
        int sg = pattern * block;
        if (block == 1) {
            x[from] *= signs[sg];
            return;
        }
        if (block == 2) {
            float a = x[from] * signs[sg];
            float b = x[from + 1] * signs[sg + 1];
            x[from] = (a + b) * scale;
            x[from + 1] = (a - b) * scale;
            return;
        }
        // 1. The first two butterfly stages (pairs at distance 1, then 2) as one radix-4 pass.
        float first = block == 4 ? scale : 1f;
        for (int i = 0; i < block; i += 4) {
            int o = from + i;
            float a = x[o] * signs[sg + i];
            float b = x[o + 1] * signs[sg + i + 1];
            float c = x[o + 2] * signs[sg + i + 2];
            float d = x[o + 3] * signs[sg + i + 3];
            float ab = a + b;
            float aMinusB = a - b;
            float cd = c + d;
            float cMinusD = c - d;
            x[o] = (ab + cd) * first;
            x[o + 1] = (aMinusB + cMinusD) * first;
            x[o + 2] = (ab - cd) * first;
            x[o + 3] = (aMinusB - cMinusD) * first;
        }
        // 2. The remaining stages, pairs at distance h = 4, 8, ..., B/2; the last one scales.
        int end = from + block;
        for (int h = 4; h < block; h <<= 1) {
            float f = h == block >> 1 ? scale : 1f;
            for (int i = from; i < end; i += h << 1) {
                int k = i + h;
                for (int j = 0; j < h; j++) {
                    float a = x[i + j];
                    float b = x[k + j];
                    x[i + j] = (a + b) * f;
                    x[k + j] = (a - b) * f;
                }
            }
        }
    }
}
