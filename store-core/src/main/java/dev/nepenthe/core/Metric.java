package dev.nepenthe.core;

import dev.nepenthe.core.vector.VectorKernels;

/**
 * How vectors are compared. Every score in Nepenthe is "higher is closer":
 *
 * <ul>
 *   <li>{@link #COSINE}: cosine similarity in [-1, 1]. Vectors are normalised to unit length when
 *       they enter an index, so scoring is a dot product. Zero vectors are refused.
 *   <li>{@link #DOT}: the raw dot product.
 *   <li>{@link #L2}: the negated squared Euclidean distance (0 for identical vectors).
 * </ul>
 */
public enum Metric {
    /** Cosine similarity, scored as the dot product of unit-length copies. */
    COSINE,
    /** The raw dot product; vectors are stored as given. */
    DOT,
    /** The negated squared Euclidean distance. */
    L2;

    /**
     * The form an index stores and queries with: a unit-length copy for {@link #COSINE}, a plain
     * copy otherwise. The caller's array is never modified. Costs one pass over the vector and a
     * new array.
     *
     * @param vector the vector as given
     * @return a new array in the form the index stores
     * @throws IllegalArgumentException for a zero vector under {@link #COSINE}
     */
    public float[] prepare(float[] vector) {
        float[] copy = vector.clone();
        if (this == COSINE) {
            double norm = 0;
            for (float x : copy) {
                norm += (double) x * x;
            }
            if (norm == 0) {
                throw new IllegalArgumentException(
                        "cosine metric: expected a non-zero vector, got all zeros");
            }
            double inv = 1.0 / Math.sqrt(norm);
            for (int i = 0; i < copy.length; i++) {
                copy[i] = (float) (copy[i] * inv);
            }
        }
        return copy;
    }

    /**
     * Score of two prepared vectors (see {@link #prepare}), higher is closer.
     *
     * @param k the kernels to score with
     * @param q the prepared query, read from index 0
     * @param v the array holding the prepared vector
     * @param vOff where the vector starts in {@code v}
     * @param dim the vectors' length
     * @return the dot product, or the negated squared distance for {@link #L2}
     */
    public float score(VectorKernels k, float[] q, float[] v, int vOff, int dim) {
        return this == L2 ? -k.squareDistance(q, 0, v, vOff, dim) : k.dot(q, 0, v, vOff, dim);
    }

    /**
     * Scores of one prepared query against {@code count} prepared vectors stored back to back, each
     * equal to what {@link #score} gives for that vector.
     *
     * @param k the kernels to score with
     * @param q the prepared query
     * @param block the array holding the vectors
     * @param blockOff where the first vector starts in {@code block}
     * @param count how many vectors to score
     * @param dim the vectors' length
     * @param out receives the {@code count} scores from index 0
     */
    public void scoreBatch(
            VectorKernels k,
            float[] q,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out) {
        if (this == L2) {
            k.squareDistanceBatch(q, block, blockOff, count, dim, out, 0);
            for (int i = 0; i < count; i++) {
                out[i] = -out[i];
            }
        } else {
            k.dotBatch(q, block, blockOff, count, dim, out, 0);
        }
    }

    /**
     * Parses "cosine", "dot" or "l2" (any case).
     *
     * @param s the name
     * @return the metric
     * @throws IllegalArgumentException for any other name, listing the accepted ones
     */
    public static Metric parse(String s) {
        for (Metric m : values()) {
            if (m.name().equalsIgnoreCase(s)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "metric: expected one of cosine, dot, l2; got '" + s + "'");
    }
}
