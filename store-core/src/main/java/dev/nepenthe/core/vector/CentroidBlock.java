package dev.nepenthe.core.vector;

import java.util.Arrays;

/**
 * A set of {@code k} centroids laid out for {@link VectorKernels#nearest}: groups of eight
 * centroids, each group stored dimension by dimension ({@code 8} floats per dimension, one per
 * centroid), so that one vector load holds the same component of eight centroids and a broadcast
 * point component multiplies all eight at once. No per-centroid reduction is needed.
 *
 * <p>Component {@code d} of centroid {@code c} sits at {@code ((c / 8) * dim + d) * 8 + c % 8}.
 * {@code k} is padded up to a multiple of eight with zero centroids whose half norm is {@code
 * +infinity}, so they are never the nearest. Also kept: {@code ||c||^2 / 2} per centroid; the
 * kernels rank by {@code ||c||^2 / 2 - <x, c>}, which orders centroids as the squared distance
 * {@code ||x - c||^2} does.
 */
public final class CentroidBlock {
    /** Centroids per group: one 256-bit vector of floats. */
    public static final int GROUP = 8;

    private final int k;
    private final int dim;
    private final float[] transposed;
    private final float[] halfNorms;

    private CentroidBlock(int k, int dim, float[] transposed, float[] halfNorms) {
        this.k = k;
        this.dim = dim;
        this.transposed = transposed;
        this.halfNorms = halfNorms;
    }

    /**
     * Lays out {@code k} centroids of {@code dim} floats stored back to back in {@code rows} from
     * {@code off}. Copies them: O(k * dim), and a block of its own of about the same size.
     *
     * @param rows the array holding the centroids
     * @param off where the first centroid starts
     * @param k how many centroids, above 0
     * @param dim their length, above 0
     * @return the block
     * @throws IllegalArgumentException if k or dim is not positive, or the centroids do not fit in
     *     {@code rows} from {@code off}
     */
    public static CentroidBlock of(float[] rows, int off, int k, int dim) {
        if (k <= 0 || dim <= 0 || off < 0 || off + (long) k * dim > rows.length) {
            throw new IllegalArgumentException(
                    "centroid block: expected k > 0 centroids of dim > 0 floats within "
                            + rows.length
                            + " floats from offset "
                            + off
                            + ", got k="
                            + k
                            + ", dim="
                            + dim);
        }
        int groups = (k + GROUP - 1) / GROUP;
        float[] t = new float[groups * dim * GROUP];
        float[] half = new float[groups * GROUP];
        Arrays.fill(half, k, half.length, Float.POSITIVE_INFINITY);
        for (int c = 0; c < k; c++) {
            int base = (c / GROUP) * dim * GROUP + c % GROUP;
            double norm = 0;
            for (int d = 0; d < dim; d++) {
                float x = rows[off + c * dim + d];
                t[base + d * GROUP] = x;
                norm += (double) x * x;
            }
            half[c] = (float) (norm / 2);
        }
        return new CentroidBlock(k, dim, t, half);
    }

    /**
     * Overwrites centroid {@code c} in place with {@code dim} floats of {@code rows} from {@code
     * off} (a centroid that moved: the old components are gone, not left in a copy). O(dim). Not
     * safe while another thread ranks against this block.
     *
     * @param c the centroid, in {@code [0, k)}
     * @param rows the array holding the new components
     * @param off where they start
     * @throws IllegalArgumentException if c is out of range or the components do not fit
     */
    public void set(int c, float[] rows, int off) {
        checkCentroid(c);
        if (off < 0 || off + dim > rows.length) {
            throw new IllegalArgumentException(
                    "centroid block: expected "
                            + dim
                            + " floats from offset "
                            + off
                            + " within "
                            + rows.length);
        }
        int base = (c / GROUP) * dim * GROUP + c % GROUP;
        double norm = 0;
        for (int d = 0; d < dim; d++) {
            float x = rows[off + d];
            transposed[base + d * GROUP] = x;
            norm += (double) x * x;
        }
        halfNorms[c] = (float) (norm / 2);
    }

    /**
     * Takes centroid {@code c} out of the ranking: its components become zero and its half norm
     * {@code +infinity}, like the padding, so {@link VectorKernels#nearest} never returns it while
     * any other centroid is enabled. O(dim).
     *
     * @param c the centroid, in {@code [0, k)}
     * @throws IllegalArgumentException if c is out of range
     */
    public void disable(int c) {
        checkCentroid(c);
        int base = (c / GROUP) * dim * GROUP + c % GROUP;
        for (int d = 0; d < dim; d++) {
            transposed[base + d * GROUP] = 0f;
        }
        halfNorms[c] = Float.POSITIVE_INFINITY;
    }

    /**
     * Whether centroid {@code c} is laid out exactly as {@code rows[off, off + dim)} with its half
     * norm (an integrity checker's question: does the ranking copy hold the current centroid, and
     * nothing older?).
     *
     * @param c the centroid, in {@code [0, k)}
     * @param rows the array holding the expected components
     * @param off where they start
     * @return true when every component and the half norm match bit for bit
     */
    public boolean holds(int c, float[] rows, int off) {
        checkCentroid(c);
        int base = (c / GROUP) * dim * GROUP + c % GROUP;
        double norm = 0;
        for (int d = 0; d < dim; d++) {
            float x = rows[off + d];
            if (Float.floatToRawIntBits(transposed[base + d * GROUP])
                    != Float.floatToRawIntBits(x)) {
                return false;
            }
            norm += (double) x * x;
        }
        return Float.floatToRawIntBits(halfNorms[c]) == Float.floatToRawIntBits((float) (norm / 2));
    }

    /**
     * Whether centroid {@code c} was taken out of the ranking by {@link #disable} and holds zeros.
     *
     * @param c the centroid, in {@code [0, k)}
     * @return true when its half norm is infinite and every component zero
     */
    public boolean isDisabled(int c) {
        checkCentroid(c);
        int base = (c / GROUP) * dim * GROUP + c % GROUP;
        for (int d = 0; d < dim; d++) {
            if (transposed[base + d * GROUP] != 0f) {
                return false;
            }
        }
        return halfNorms[c] == Float.POSITIVE_INFINITY;
    }

    private void checkCentroid(int c) {
        if (c < 0 || c >= k) {
            throw new IllegalArgumentException(
                    "centroid block: expected a centroid in [0, " + k + "), got " + c);
        }
    }

    /**
     * Zeroes the layout: a copy of centroids that must not outlive them (retrained codebooks). The
     * block must not be used for scoring afterwards.
     */
    public void wipe() {
        Arrays.fill(transposed, 0f);
        Arrays.fill(halfNorms, 0f);
    }

    /**
     * Centroids held (without padding).
     *
     * @return k
     */
    public int k() {
        return k;
    }

    /**
     * The centroids' length.
     *
     * @return dim
     */
    public int dim() {
        return dim;
    }

    /**
     * Groups of eight (the last one padded).
     *
     * @return {@code ceil(k / 8)}
     */
    public int groups() {
        return halfNorms.length / GROUP;
    }

    /**
     * The transposed components (layout in the class comment). Callers must not write.
     *
     * @return the block's own array, {@code groups() * dim * 8} floats
     */
    public float[] transposed() {
        return transposed;
    }

    /**
     * {@code ||c||^2 / 2} per centroid, {@code +infinity} for the padding. Callers must not write.
     *
     * @return the block's own array, {@code groups() * 8} floats
     */
    public float[] halfNorms() {
        return halfNorms;
    }
}
