package dev.nepenthe.core.internal.vector;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Kernels on the incubating Vector API. Loaded only through {@link Kernels}, which first checks
 * that {@code jdk.incubator.vector} is readable. This class picks a width and routes each call; the
 * loops live by family in {@link PanamaPairs}, {@link PanamaQuads}, {@link PanamaTables}, {@link
 * PanamaNearest} and {@link PanamaInt8}; the first two and the last are generated at build time,
 * each body written once for a stored operand in an array and in a segment (see {@link PanamaOrder}
 * for why).
 *
 * <p>Why the loops look the way they do (x86 with AVX2 or AVX-512 in mind):
 *
 * <ul>
 *   <li>Every sum follows the one order {@link VectorKernels} defines, so these kernels agree bit
 *       for bit with the scalar twin. That order's 64 partial sums are four 16-lane accumulators
 *       (AVX-512) or eight 8-lane ones (AVX2), and its final halving is a few fixed lane rotations:
 *       {@code reduceLanes(ADD)}, whose order the JIT may choose, is never used. Other lane counts
 *       (128-bit machines) take the scalar twin, which C2 vectorises itself.
 *   <li>A fused multiply-add's latency is several cycles while two can start every cycle, so a
 *       single accumulator leaves the FMA units idle most of the time; four or eight independent
 *       ones keep them busy.
 *   <li>Tails shorter than 16 floats are finished with scalar code, as the order says.
 * </ul>
 */
public final class PanamaKernels implements VectorKernels {

    /**
     * The JVM's preferred species: element-wise loops (exact at any width) and the choice of
     * default width.
     */
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    private static final int LANES = F.length();

    /**
     * Whether the eight-lane PQ table and nearest-centroid kernels run (256-bit vectors native).
     */
    static final boolean TABLES_VECTORIZED = F.vectorBitSize() >= 256;

    /** The twin, for widths this class does not vectorise. */
    private static final ScalarKernels SCALAR = new ScalarKernels();

    /** 512-bit sums (16 lanes) rather than 256-bit ones (8 lanes). */
    private final boolean wide;

    /** False where neither width is native (128-bit NEON): the ordered sums then run scalar. */
    private final boolean canonical;

    private final String name;

    /** The widest of the two widths this CPU runs natively (the JVM's preferred species). */
    public PanamaKernels() {
        int preferred = F.vectorBitSize();
        this.wide = preferred >= 512;
        this.canonical = preferred >= 256;
        this.name = "panama";
    }

    /**
     * Ordered sums at a chosen width, 256 or 512 bits, where the CPU runs that width natively: the
     * knob that lets a 512-bit machine measure both. Results are the same bit for bit at either
     * width (the order is the same); only the speed differs.
     *
     * @throws IllegalArgumentException if {@code vectorBits} is neither 256 nor 512, or wider than
     *     this CPU's vectors
     */
    public PanamaKernels(int vectorBits) {
        if (vectorBits != 256 && vectorBits != 512) {
            throw new IllegalArgumentException(
                    "vector width: expected 256 or 512 bits, got " + vectorBits);
        }
        if (vectorBits > F.vectorBitSize()) {
            throw new IllegalArgumentException(
                    "vector width: this CPU's widest float vector is "
                            + F.vectorBitSize()
                            + " bits (the JVM's preferred species), asked for "
                            + vectorBits);
        }
        this.wide = vectorBits == 512;
        this.canonical = true;
        this.name = "panama-" + vectorBits;
    }

    /** The width the ordered sums run at: 512, 256, or 0 where they run scalar. */
    public int vectorBits() {
        return !canonical ? 0 : wide ? 512 : 256;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public float dot(float[] a, int aOff, float[] b, int bOff, int len) {
        if (!canonical) {
            return SCALAR.dot(a, aOff, b, bOff, len);
        }
        return PanamaPairs.dot(wide, a, aOff, b, bOff, len);
    }

    @Override
    public float squareDistance(float[] a, int aOff, float[] b, int bOff, int len) {
        if (!canonical) {
            return SCALAR.squareDistance(a, aOff, b, bOff, len);
        }
        return PanamaPairs.squareDistance(wide, a, aOff, b, bOff, len);
    }

    @Override
    public float dot(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        if (!canonical) {
            return SCALAR.dot(a, aOff, b, bOff, len);
        }
        return PanamaPairs.dot(wide, a, aOff, b, bOff, len);
    }

    @Override
    public float squareDistance(float[] a, int aOff, MemorySegment b, long bOff, int len) {
        if (!canonical) {
            return SCALAR.squareDistance(a, aOff, b, bOff, len);
        }
        return PanamaPairs.squareDistance(wide, a, aOff, b, bOff, len);
    }

    @Override
    public float cosine(float[] a, float[] b) {
        int len = a.length;
        if (canonical && wide && len >= 16) {
            return PanamaOrder.cosine16(a, b, len);
        }
        return CosineMath.fromParts(
                dot(a, 0, b, 0, len), dot(a, 0, a, 0, len), dot(b, 0, b, 0, b.length));
    }

    /*
     * Batches: on 16 lanes, dot products go four vectors per pass and so do squared distances
     * (a remainder of two or three goes two at a time); see PanamaQuads. On 8 lanes the sets
     * would not fit AVX2's 16 registers, so vectors go one at a time.
     */

    @Override
    public void dotBatch(
            float[] query,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out,
            int outOff) {
        int v = 0;
        if (wide && dim >= 64) {
            for (; v + 4 <= count; v += 4) {
                int o = blockOff + v * dim;
                PanamaQuads.dotQuad16(
                        query,
                        0,
                        block,
                        o,
                        o + dim,
                        o + 2 * dim,
                        o + 3 * dim,
                        dim,
                        out,
                        outOff + v,
                        4);
            }
        }
        for (; v < count; v++) {
            out[outOff + v] = dot(query, 0, block, blockOff + v * dim, dim);
        }
    }

    @Override
    public void squareDistanceBatch(
            float[] query,
            float[] block,
            int blockOff,
            int count,
            int dim,
            float[] out,
            int outOff) {
        int v = 0;
        if (wide && dim >= 64) {
            for (; v + 4 <= count; v += 4) {
                int o = blockOff + v * dim;
                PanamaQuads.squareQuad16(
                        query,
                        0,
                        block,
                        o,
                        o + dim,
                        o + 2 * dim,
                        o + 3 * dim,
                        dim,
                        out,
                        outOff + v,
                        4);
            }
            for (; v + 2 <= count; v += 2) {
                int o = blockOff + v * dim;
                PanamaQuads.squarePair16(query, 0, block, o, o + dim, dim, out, outOff + v);
            }
        }
        for (; v < count; v++) {
            out[outOff + v] = squareDistance(query, 0, block, blockOff + v * dim, dim);
        }
    }

    /*
     * Rows: a graph node's neighbours, scattered through the matrix. On 16 lanes they go four at
     * a time as the batches do: each load of the point feeds four rows, and the four rows' loads
     * are independent, so the CPU has four cache misses in flight instead of one. A remainder of
     * one to three rows runs as a four with its last row repeated and only the real results
     * kept: the repeats hit the cache, and the remainder still overlaps its misses. On 8 lanes
     * rows go one at a time, for the registers' sake (AVX2 has 16).
     */

    @Override
    public void dotRows(
            float[] a, int aOff, float[] vectors, int[] rows, int count, int dim, float[] out) {
        if (!canonical) {
            SCALAR.dotRows(a, aOff, vectors, rows, count, dim, out);
            return;
        }
        PanamaQuads.rows(wide, false, a, aOff, vectors, rows, count, dim, out);
    }

    @Override
    public void squareDistanceRows(
            float[] a, int aOff, float[] vectors, int[] rows, int count, int dim, float[] out) {
        if (!canonical) {
            SCALAR.squareDistanceRows(a, aOff, vectors, rows, count, dim, out);
            return;
        }
        PanamaQuads.rows(wide, true, a, aOff, vectors, rows, count, dim, out);
    }

    @Override
    public void dotRows(
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        touchRows(vectors, rows, count, dim);
        if (!canonical) {
            SCALAR.dotRows(a, aOff, vectors, rows, count, dim, out);
            return;
        }
        PanamaQuads.rows(wide, false, a, aOff, vectors, rows, count, dim, out);
    }

    @Override
    public void squareDistanceRows(
            float[] a,
            int aOff,
            MemorySegment vectors,
            int[] rows,
            int count,
            int dim,
            float[] out) {
        touchRows(vectors, rows, count, dim);
        if (!canonical) {
            SCALAR.squareDistanceRows(a, aOff, vectors, rows, count, dim, out);
            return;
        }
        PanamaQuads.rows(wide, true, a, aOff, vectors, rows, count, dim, out);
    }

    /**
     * Written only when a touch sum takes an impossible value: keeps the touches from being
     * dropped. Never read, on purpose: a write the JIT cannot prove dead is all it takes.
     */
    @SuppressWarnings("UnusedVariable") // written so the touches stay; nothing needs to read it
    private static int touchSink;

    /**
     * Loads the first float of every row before any row is scored, so the rows' first cache misses
     * are in flight together. Scattered rows scored from a segment, memory-bound, ran faster with
     * it (docs/BENCHMARKS.md); the same loop from a heap array keeps enough misses in flight on its
     * own. Scores are unchanged: the values loaded are only summed into a result that is never
     * used.
     */
    private static void touchRows(MemorySegment vectors, int[] rows, int count, int dim) {
        float t = 0f;
        for (int v = 0; v < count; v++) {
            t += vectors.getAtIndex(ValueLayout.JAVA_FLOAT, (long) rows[v] * dim);
        }
        if (t == Float.MIN_VALUE * 3) {
            touchSink++;
        }
    }

    @Override
    public void subtract(
            float[] v, int vOff, float[] c, int cOff, float[] out, int outOff, int len) {
        int i = 0;
        int upper = F.loopBound(len);
        for (; i < upper; i += LANES) {
            FloatVector.fromArray(F, v, vOff + i)
                    .sub(FloatVector.fromArray(F, c, cOff + i))
                    .intoArray(out, outOff + i);
        }
        for (; i < len; i++) {
            out[outOff + i] = v[vOff + i] - c[cOff + i];
        }
    }

    @Override
    public void pqDistanceTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        PanamaTables.pqTable(query, codebooks, m, ksub, table, true);
    }

    @Override
    public void pqDotTable(float[] query, float[] codebooks, int m, int ksub, float[] table) {
        PanamaTables.pqTable(query, codebooks, m, ksub, table, false);
    }

    @Override
    public void nearest(
            float[] points, int pOff, int n, CentroidBlock centroids, int[] out, int outOff) {
        if (!TABLES_VECTORIZED) {
            SCALAR.nearest(points, pOff, n, centroids, out, outOff);
            return;
        }
        PanamaNearest.nearest(points, pOff, n, centroids, out, outOff);
    }

    @Override
    public int dotInt8(byte[] a, int aOff, byte[] b, int bOff, int len) {
        return PanamaInt8.dot(a, aOff, b, bOff, len);
    }

    @Override
    public void dotInt8Bulk(
            byte[] a,
            int aOff,
            byte[] codes,
            int codesOff,
            int stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        PanamaInt8.dotBulk(a, aOff, codes, codesOff, stride, rows, count, len, out);
    }

    @Override
    public int dotInt8(byte[] a, int aOff, MemorySegment b, long bOff, int len) {
        return PanamaInt8.dot(a, aOff, b, bOff, len);
    }

    @Override
    public void dotInt8Bulk(
            byte[] a,
            int aOff,
            MemorySegment codes,
            long codesOff,
            long stride,
            int[] rows,
            int count,
            int len,
            int[] out) {
        PanamaInt8.dotBulk(a, aOff, codes, codesOff, stride, rows, count, len, out);
    }
}
