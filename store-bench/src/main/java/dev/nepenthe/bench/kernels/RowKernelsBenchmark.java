package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A graph search's hot calls: one query against a neighbour list of {@link #count} rows scattered
 * through a matrix of {@link #n} rows, as floats and as int8 codes, on the heap and off it. Each
 * call draws the next of 64 precomputed neighbour lists, so rows come from all over the matrix as
 * they do in a search. Results are reported per list; divide by {@code count} for a per-row figure.
 */
public class RowKernelsBenchmark extends KernelBenchmark {

    @Param({"384", "768"})
    int d;

    /**
     * Rows in the matrix: 20,000 x 768 floats (61 MB) outgrows the caches, as a real graph does.
     */
    @Param({"20000"})
    int n;

    /** Neighbours per list: twice an M of 16, a base layer's list. */
    @Param({"32"})
    int count;

    private static final int LISTS = 64;

    private final VectorKernels panama = Kernels.panama();
    private Arena arena;
    private float[] query;
    private float[] vectors;
    private MemorySegment vectorSegment;
    private byte[] code;
    private byte[] codes;
    private MemorySegment codeSegment;
    private int[][] lists;
    private float[] out;
    private int[] intOut;
    private int next;

    // The arena lives for the trial: tearDown closes it.
    @SuppressWarnings("MustBeClosedChecker")
    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        query = KernelData.uniform(rnd, d);
        vectors = KernelData.uniform(rnd, n * d);
        code = new byte[d];
        codes = new byte[n * d];
        for (int i = 0; i < d; i++) {
            code[i] = (byte) rnd.nextInt(-127, 128);
        }
        for (int i = 0; i < codes.length; i++) {
            codes[i] = (byte) rnd.nextInt(-127, 128);
        }
        arena = Arena.ofShared();
        vectorSegment = arena.allocate((long) vectors.length * Float.BYTES, 64);
        MemorySegment.copy(vectors, 0, vectorSegment, ValueLayout.JAVA_FLOAT, 0, vectors.length);
        codeSegment = arena.allocate(codes.length, 64);
        MemorySegment.copy(codes, 0, codeSegment, ValueLayout.JAVA_BYTE, 0, codes.length);
        lists = new int[LISTS][count];
        for (int[] list : lists) {
            for (int i = 0; i < count; i++) {
                list[i] = rnd.nextInt(n);
            }
        }
        out = new float[count];
        intOut = new int[count];
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    private int[] nextList() {
        next = (next + 1) & (LISTS - 1);
        return lists[next];
    }

    @Benchmark
    public float[] dotRowsPanama() {
        panama.dotRows(query, 0, vectors, nextList(), count, d, out);
        return out;
    }

    @Benchmark
    public float[] dotRowsPanamaSegment() {
        panama.dotRows(query, 0, vectorSegment, nextList(), count, d, out);
        return out;
    }

    @Benchmark
    public float[] squareDistanceRowsPanama() {
        panama.squareDistanceRows(query, 0, vectors, nextList(), count, d, out);
        return out;
    }

    @Benchmark
    public float[] squareDistanceRowsPanamaSegment() {
        panama.squareDistanceRows(query, 0, vectorSegment, nextList(), count, d, out);
        return out;
    }

    @Benchmark
    public int[] dotInt8BulkPanama() {
        panama.dotInt8Bulk(code, 0, codes, 0, d, nextList(), count, d, intOut);
        return intOut;
    }

    @Benchmark
    public int[] dotInt8BulkPanamaSegment() {
        panama.dotInt8Bulk(code, 0, codeSegment, 0, d, nextList(), count, d, intOut);
        return intOut;
    }
}
