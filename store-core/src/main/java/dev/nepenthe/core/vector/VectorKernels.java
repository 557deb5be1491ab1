package dev.nepenthe.core.vector;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The float32 arithmetic every index runs in its hot loop. Two implementations exist: one on the
 * incubating Vector API and a tuned scalar twin; {@link Kernels#get()} picks one once per process.
 * Callers never import {@code jdk.incubator.vector}.
 *
 * <p>Offsets and lengths are in floats (or bytes for PQ codes). Implementations do not check bounds
 * beyond what the JVM does: callers pass valid ranges.
 *
 * <p><b>One summation order.</b> Float addition is not associative, so a sum's last bit depends on
 * the order of its additions. Every sum here has one order, written down below, and both
 * implementations follow it: they agree bit for bit on every input, on every CPU and in every JIT
 * tier (the Vector API's {@code reduceLanes(ADD)} leaves its order open, so it is never used). A
 * score therefore never depends on which implementation or tier ran, and neither do top-k ties,
 * graph neighbour choices or a forget probe's threshold. The order of {@link #dot} ({@link
 * #squareDistance} is the same with {@code d = a - b} and terms {@code d * d}), for a length {@code
 * n}:
 *
 * <ol>
 *   <li>Blocks of 64 ({@code i < n & ~63}): 64 partial sums, {@code P[j] = fma(a[i+j], b[i+j],
 *       P[j])}.
 *   <li>Fold to 16: {@code R[j] = (P[j] + P[j+32]) + (P[j+16] + P[j+48])} (R is zero when no block
 *       of 64 was summed).
 *   <li>Blocks of 16 up to {@code n & ~15}: {@code R[j] = fma(a[i+j], b[i+j], R[j])}.
 *   <li>Halving: {@code R[j] += R[j+8]}, then {@code += R[j+4]}, {@code += R[j+2]}, {@code +=
 *       R[j+1]} (for {@code j} below the half), giving {@code s = R[0]} (0 when {@code n < 16}).
 *   <li>The last {@code n % 16} terms in order: {@code s = fma(a[i], b[i], s)}.
 * </ol>
 *
 * This is the layout of four 16-lane or eight 8-lane accumulators, so the SIMD code pays nothing
 * for it; the scalar twin's partial-sum loops vectorise too. {@link #cosine} is built from three
 * such sums, a batch score equals the single score, and the PQ tables have their own order (see
 * {@link #pqDistanceTable}).
 */
public interface VectorKernels {

    /**
     * Name shown in logs and benchmark tables ("panama" or "scalar").
     *
     * @return the implementation's name
     */
    String name();

    /**
     * Dot product of {@code a[aOff, aOff+len)} and {@code b[bOff, bOff+len)}, in the summation
     * order above.
     *
     * @param a the first array
     * @param aOff where the first range starts
     * @param b the second array
     * @param bOff where the second range starts
     * @param len the ranges' length
     * @return the dot product
     */
    float dot(float[] a, int aOff, float[] b, int bOff, int len);

    /**
     * Squared Euclidean distance of the two ranges, in the summation order above.
     *
     * @param a the first array
     * @param aOff where the first range starts
     * @param b the second array
     * @param bOff where the second range starts
     * @param len the ranges' length
     * @return the squared distance
     */
    float squareDistance(float[] a, int aOff, float[] b, int bOff, int len);

    /**
     * Cosine similarity of two whole vectors of equal length. Defined as 0 when either vector is
     * all zeros (the angle is undefined; 0 ranks such a vector below every positively correlated
     * one and never yields NaN).
     *
     * @param a the first vector
     * @param b the second vector, as long as {@code a}
     * @return the cosine similarity, clamped to [-1, 1]
     */
    float cosine(float[] a, float[] b);

    /**
     * Dot product of two whole vectors; {@code b} must be at least as long as {@code a}.
     *
     * @param a the first vector
     * @param b the second vector
     * @return the dot product over {@code a.length} components
     */
    default float dot(float[] a, float[] b) {
        return dot(a, 0, b, 0, a.length);
    }

    /**
     * Squared Euclidean distance of two whole vectors; {@code b} must be at least as long as {@code
     * a}.
     *
     * @param a the first vector
     * @param b the second vector
     * @return the squared distance over {@code a.length} components
     */
    default float squareDistance(float[] a, float[] b) {
        return squareDistance(a, 0, b, 0, a.length);
    }

    /**
     * Dot products of one query against {@code count} vectors of length {@code dim} stored back to
     * back in {@code block} from {@code blockOff}; writes {@code count} scores to {@code out} from
     * {@code outOff}. The hot loop of exact search and re-ranking. Each score equals {@link #dot}
     * of the query and that vector.
     *
     * @param query the query, {@code dim} floats from index 0
     * @param block the array holding the vectors
     * @param blockOff where the first vector starts
     * @param count how many vectors
     * @param dim their length
     * @param out receives the scores
     * @param outOff where the first score goes
     */
    default void dotBatch(
            float[] query,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out,
            int outOff) {
        for (int v = 0; v < count; v++) {
            out[outOff + v] = dot(query, 0, block, blockOff + v * dim, dim);
        }
    }

    /**
     * Squared distances of one query against a contiguous block; layout as {@link #dotBatch}. Each
     * equals {@link #squareDistance} of the query and that vector.
     *
     * @param query the query, {@code dim} floats from index 0
     * @param block the array holding the vectors
     * @param blockOff where the first vector starts
     * @param count how many vectors
     * @param dim their length
     * @param out receives the distances
     * @param outOff where the first distance goes
     */
    default void squareDistanceBatch(
            float[] query,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out,
            int outOff) {
        for (int v = 0; v < count; v++) {
            out[outOff + v] = squareDistance(query, 0, block, blockOff + v * dim, dim);
        }
    }

    /**
     * Dot products of one point against scattered rows of a row-major matrix: {@code out[i]} equals
     * {@link #dot} of {@code a[aOff, aOff+dim)} and {@code vectors[rows[i]*dim, (rows[i]+1)*dim)},
     * bit for bit, for {@code i < count}. A graph search scores a node's whole neighbour list in
     * one call, so an implementation can feed several rows from each load of the point.
     *
     * @param a the point's array
     * @param aOff where the point starts
     * @param vectors the matrix, row {@code r} at {@code r * dim}
     * @param rows the rows to score
     * @param count how many of {@code rows}
     * @param dim the row length
     * @param out receives {@code count} scores from index 0
     */
    default void dotRows(
            float[] a, int aOff, float[] vectors, int[] rows, int count, int dim, float[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = dot(a, aOff, vectors, rows[i] * dim, dim);
        }
    }

    /**
     * Squared distances of one point against scattered rows; layout as {@link #dotRows}. Each
     * equals {@link #squareDistance} of the point and that row, bit for bit.
     *
     * @param a the point's array
     * @param aOff where the point starts
     * @param vectors the matrix, row {@code r} at {@code r * dim}
     * @param rows the rows to score
     * @param count how many of {@code rows}
     * @param dim the row length
     * @param out receives {@code count} distances from index 0
     */
    default void squareDistanceRows(
            float[] a, int aOff, float[] vectors, int[] rows, int count, int dim, float[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = squareDistance(a, aOff, vectors, rows[i] * dim, dim);
        }
    }

    /*
     * The same four scores over vectors stored off the heap (a native MemorySegment of floats in
     * native byte order, offsets counted in floats and held in longs, so a matrix is not bound by
     * 2^31 elements). Each agrees bit for bit with its array form on the same values. These
     * defaults copy the row onto the heap and call the array form: always right, and what the
     * scalar twin uses; the Vector API kernels load from the segment directly.
     */

    /**
     * {@link #dot(float[], int, float[], int, int)} with the second vector in a segment.
     *
     * @param a the first vector's array
     * @param aOff where the first vector starts
     * @param b the segment, floats in native byte order
     * @param bOff where the second vector starts, in floats
     * @param len the length
     * @return the dot product, bit for bit the array form's
     */
    default float dot(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        return dot(a, aOff, rowOf(b, bOff, len), 0, len);
    }

    /**
     * {@link #squareDistance(float[], int, float[], int, int)} with the second vector in a segment.
     *
     * @param a the first vector's array
     * @param aOff where the first vector starts
     * @param b the segment, floats in native byte order
     * @param bOff where the second vector starts, in floats
     * @param len the length
     * @return the squared distance, bit for bit the array form's
     */
    default float squareDistance(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        return squareDistance(a, aOff, rowOf(b, bOff, len), 0, len);
    }

    /**
     * {@link #dotRows(float[], int, float[], int[], int, int, float[])} over a segment: row {@code
     * r} at float {@code (long) r * dim}.
     *
     * @param a the point's array
     * @param aOff where the point starts
     * @param vectors the matrix, floats in native byte order
     * @param rows the rows to score
     * @param count how many of {@code rows}
     * @param dim the row length
     * @param out receives {@code count} scores from index 0
     */
    default void dotRows(
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = dot(a, aOff, vectors, (long) rows[i] * dim, dim);
        }
    }

    /**
     * {@link #squareDistanceRows(float[], int, float[], int[], int, int, float[])} over a segment:
     * row {@code r} at float {@code (long) r * dim}.
     *
     * @param a the point's array
     * @param aOff where the point starts
     * @param vectors the matrix, floats in native byte order
     * @param rows the rows to score
     * @param count how many of {@code rows}
     * @param dim the row length
     * @param out receives {@code count} distances from index 0
     */
    default void squareDistanceRows(
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = squareDistance(a, aOff, vectors, (long) rows[i] * dim, dim);
        }
    }

    private static float[] rowOf(MemorySegment segment, long off, int len) {
        float[] row = new float[len];
        MemorySegment.copy(segment, ValueLayout.JAVA_FLOAT, off * Float.BYTES, row, 0, len);
        return row;
    }

    /**
     * {@code out[i] = v[vOff+i] - c[cOff+i]} for {@code i < len}: an IVF residual.
     *
     * @param v the vector's array
     * @param vOff where the vector starts
     * @param c the centroid's array
     * @param cOff where the centroid starts
     * @param out receives the residual
     * @param outOff where the residual starts in {@code out}
     * @param len the length
     */
    void subtract(float[] v, int vOff, float[] c, int cOff, float[] out, int outOff, int len);

    /**
     * Asymmetric PQ distance: {@code sum over j < m of table[j*ksub + (codes[codeOff+j] & 0xFF)]},
     * where {@code table} holds one row of {@code ksub} partial distances per subspace. Order: the
     * terms of even {@code j} into one sum and those of odd {@code j} into another, each in order
     * of {@code j}, then the two sums added.
     *
     * <p>Both built-in kernels use this default: a gather per code byte costs more than it saves at
     * the m of 8 to 64 used in practice, so the look-ups stay scalar.
     *
     * @param table the distance table ({@code m * ksub} floats, see {@link #pqDistanceTable})
     * @param ksub centroids per subspace
     * @param codes the array holding the code
     * @param codeOff where the code starts
     * @param m the code's length in bytes, one per subspace
     * @return the approximate distance (or, with a {@link #pqDotTable} table, dot product)
     */
    default float pqDistance(float[] table, int ksub, byte[] codes, int codeOff, int m) {
        // Two sums halve the add chain.
        float s0 = 0f, s1 = 0f;
        int j = 0;
        for (; j + 1 < m; j += 2) {
            s0 += table[j * ksub + (codes[codeOff + j] & 0xFF)];
            s1 += table[(j + 1) * ksub + (codes[codeOff + j + 1] & 0xFF)];
        }
        if (j < m) {
            s0 += table[j * ksub + (codes[codeOff + j] & 0xFF)];
        }
        return s0 + s1;
    }

    /**
     * PQ distances for {@code count} codes of {@code m} bytes stored back to back from {@code
     * codesOff}; writes {@code count} results to {@code out} from {@code outOff}. Each equals
     * {@link #pqDistance} of that code.
     *
     * @param table the distance table
     * @param ksub centroids per subspace
     * @param codes the array holding the codes
     * @param codesOff where the first code starts
     * @param count how many codes
     * @param m each code's length in bytes
     * @param out receives the results
     * @param outOff where the first result goes
     */
    default void pqDistanceBatch(
            float[] table,
            int ksub,
            byte[] codes,
            int codesOff,
            int count,
            int m,
            float[] out,
            int outOff) {
        // Four codes at a time: their look-ups are independent, so the CPU overlaps their loads
        // instead of waiting on one chain of adds (a scan over an inverted list is load-latency
        // bound). Each code keeps pqDistance's two sums, so every result is bit for bit its own.
        int v = 0;
        for (; v + 3 < count; v += 4) {
            int c0 = codesOff + v * m, c1 = c0 + m, c2 = c1 + m, c3 = c2 + m;
            float e0 = 0f, o0 = 0f, e1 = 0f, o1 = 0f, e2 = 0f, o2 = 0f, e3 = 0f, o3 = 0f;
            int j = 0;
            for (; j + 1 < m; j += 2) {
                int row = j * ksub;
                int next = row + ksub;
                e0 += table[row + (codes[c0 + j] & 0xFF)];
                e1 += table[row + (codes[c1 + j] & 0xFF)];
                e2 += table[row + (codes[c2 + j] & 0xFF)];
                e3 += table[row + (codes[c3 + j] & 0xFF)];
                o0 += table[next + (codes[c0 + j + 1] & 0xFF)];
                o1 += table[next + (codes[c1 + j + 1] & 0xFF)];
                o2 += table[next + (codes[c2 + j + 1] & 0xFF)];
                o3 += table[next + (codes[c3 + j + 1] & 0xFF)];
            }
            if (j < m) {
                int row = j * ksub;
                e0 += table[row + (codes[c0 + j] & 0xFF)];
                e1 += table[row + (codes[c1 + j] & 0xFF)];
                e2 += table[row + (codes[c2 + j] & 0xFF)];
                e3 += table[row + (codes[c3 + j] & 0xFF)];
            }
            out[outOff + v] = e0 + o0;
            out[outOff + v + 1] = e1 + o1;
            out[outOff + v + 2] = e2 + o2;
            out[outOff + v + 3] = e3 + o3;
        }
        for (; v < count; v++) {
            out[outOff + v] = pqDistance(table, ksub, codes, codesOff + v * m, m);
        }
    }

    /**
     * Fills {@code table[j*ksub + c]} with the squared distance between the query's subvector
     * {@code j} and centroid {@code c} of subspace {@code j}. {@code codebooks} holds, for each
     * subspace j, {@code ksub} centroids of {@code dsub = query.length / m} floats back to back.
     *
     * <p>Order of each entry, with {@code t[k]} the rounded term of component k ({@code d*d} or
     * {@code q*c}): dsub 1: {@code t0}; 2: {@code t0 + t1}; 4: {@code (t0 + t1) + (t2 + t3)}; a
     * multiple of 8: eight partial sums ({@code p[k] = fma(.., .., p[k])} over components {@code k,
     * k+8, ...}) folded as {@code ((p0+p4) + (p2+p6)) + ((p1+p5) + (p3+p7))}; any other dsub: the
     * order of {@link #squareDistance} (or {@link #dot}).
     *
     * @param query the query; its length must be a multiple of {@code m}
     * @param codebooks the codebooks, {@code m * ksub * dsub} floats
     * @param m the number of subspaces
     * @param ksub centroids per subspace
     * @param table receives {@code m * ksub} entries from index 0
     */
    void pqDistanceTable(float[] query, float[] codebooks, int m, int ksub, float[] table);

    /**
     * As {@link #pqDistanceTable} but with dot products instead of squared distances.
     *
     * @param query the query; its length must be a multiple of {@code m}
     * @param codebooks the codebooks, {@code m * ksub * dsub} floats
     * @param m the number of subspaces
     * @param ksub centroids per subspace
     * @param table receives {@code m * ksub} entries from index 0
     */
    void pqDotTable(float[] query, float[] codebooks, int m, int ksub, float[] table);

    /**
     * For each of {@code n} points of {@code centroids.dim()} floats stored back to back in {@code
     * points} from {@code pOff}, the index of the nearest centroid in squared L2 distance, written
     * to {@code out[outOff + i]}. Ties go to the lowest index. The hot loop of k-means and of PQ
     * encoding.
     *
     * <p>Contract shared by both implementations, so that they agree bit for bit: a centroid's
     * score is {@code halfNorm - acc}, where {@code acc} starts at 0 and takes {@code acc =
     * fma(x[d], c[d], acc)} for {@code d = 0 .. dim-1} in that order.
     *
     * @param points the array holding the points
     * @param pOff where the first point starts
     * @param n how many points
     * @param centroids the centroids, laid out by {@link CentroidBlock#of}
     * @param out receives the index of each point's nearest centroid
     * @param outOff where the first index goes
     */
    void nearest(float[] points, int pOff, int n, CentroidBlock centroids, int[] out, int outOff);

    /**
     * Dot product of two ranges of signed bytes (int8 codes, such as a quantized graph scores
     * with), in int arithmetic. Every product is exact ({@code |a[i] * b[i]| <= 16384}) and the sum
     * is taken modulo 2^32, which makes it the exact dot product whenever that fits in an int
     * (always for {@code len <= 131072}). Integer addition is associative, so unlike the float
     * kernels no summation order needs writing down: both implementations return the same int on
     * every input, whatever order their lanes add in.
     *
     * <p>Scaling the result back to the vectors' units (a code's scale and offset) is the caller's
     * business, in shared code, so the float arithmetic around it is the same whichever
     * implementation ran.
     *
     * @param a the first array
     * @param aOff where the first range starts
     * @param b the second array
     * @param bOff where the second range starts
     * @param len the ranges' length, in bytes
     * @return the sum of {@code a[aOff+i] * b[bOff+i]} for {@code i < len}, modulo 2^32
     */
    int dotInt8(byte[] a, int aOff, byte[] b, int bOff, int len);

    /**
     * {@link #dotInt8} of one range against {@code count} rows of a code array: {@code out[i] =
     * dotInt8(a, aOff, codes, codesOff + rows[i] * stride, len)}, the same int. The hot loop of a
     * quantized graph search, which scores one expanded node's neighbours at once; an
     * implementation may interleave several rows so that their memory loads overlap.
     *
     * <p>The default scores the rows one at a time with {@link #dotInt8(byte[], int, byte[], int,
     * int)}.
     *
     * @param a the first array (a query's code)
     * @param aOff where its range starts
     * @param codes the array holding the rows
     * @param codesOff where row 0's range starts (past a row's header, if rows have one)
     * @param stride bytes from one row's start to the next's; row {@code r}'s range starts at
     *     {@code codesOff + r * stride}
     * @param rows the rows to score, {@code count} of them from index 0
     * @param count how many rows
     * @param len the ranges' length, in bytes (at most {@code stride})
     * @param out receives the {@code count} dot products from index 0
     */
    default void dotInt8Bulk(
            byte[] a,
            int aOff,
            byte[] codes,
            int codesOff,
            int stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = dotInt8(a, aOff, codes, codesOff + rows[i] * stride, len);
        }
    }

    /**
     * {@link #dotInt8(byte[], int, byte[], int, int)} with the second range in a segment (codes
     * stored off the heap; offsets in bytes, held in longs). The same int. This default copies the
     * range onto the heap and calls the array form, which is what the scalar twin uses; the Vector
     * API kernels load from the segment directly.
     *
     * @param a the first array
     * @param aOff where the first range starts
     * @param b the segment holding the second range
     * @param bOff where the second range starts, in bytes
     * @param len the ranges' length, in bytes
     * @return the same int as the array form on the same bytes
     */
    default int dotInt8(byte[] a, int aOff, MemorySegment b, long bOff, int len) {
        byte[] row = new byte[len];
        MemorySegment.copy(b, ValueLayout.JAVA_BYTE, bOff, row, 0, len);
        return dotInt8(a, aOff, row, 0, len);
    }

    /**
     * {@link #dotInt8Bulk(byte[], int, byte[], int, int, int[], int, int, int[])} over rows in a
     * segment: row {@code r}'s range starts at byte {@code codesOff + (long) r * stride}.
     *
     * @param a the first array (a query's code)
     * @param aOff where its range starts
     * @param codes the segment holding the rows
     * @param codesOff where row 0's range starts, in bytes
     * @param stride bytes from one row's start to the next's
     * @param rows the rows to score, {@code count} of them from index 0
     * @param count how many rows
     * @param len the ranges' length, in bytes (at most {@code stride})
     * @param out receives the {@code count} dot products from index 0
     */
    default void dotInt8Bulk(
            byte[] a,
            int aOff,
            MemorySegment codes,
            long codesOff,
            long stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = dotInt8(a, aOff, codes, codesOff + rows[i] * stride, len);
        }
    }
}
