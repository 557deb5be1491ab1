package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.SplittableRandom;
import org.apache.lucene.util.VectorUtil;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * One query against a block of {@link #count} vectors, the hot loop of exact search and re-ranking:
 * our batch kernels (one contiguous block) against a loop of Lucene's {@link VectorUtil#dotProduct}
 * over {@code float[][]} rows holding the same numbers. Results are reported per block; divide by
 * {@code count} for a per-vector figure. Each method returns its output array so the work cannot be
 * dropped.
 */
public class BatchKernelsBenchmark extends KernelBenchmark {

    @Param({"128", "384", "768", "1536"})
    int d;

    /** Vectors per block; 1000 x 1536 floats (6 MB) outgrows L2, as a real scan does. */
    @Param({"1000"})
    int count;

    private final VectorKernels panama = Kernels.panama();
    private final VectorKernels scalar = Kernels.scalar();
    private float[] query;
    private float[] block;
    private float[][] rows;
    private float[] out;

    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        query = KernelData.uniform(rnd, d);
        block = KernelData.uniform(rnd, count * d);
        rows = new float[count][d];
        for (int v = 0; v < count; v++) {
            System.arraycopy(block, v * d, rows[v], 0, d);
        }
        out = new float[count];
    }

    @Benchmark
    public float[] dotBatchPanama() {
        panama.dotBatch(query, block, 0, count, d, out, 0);
        return out;
    }

    @Benchmark
    public float[] dotBatchScalar() {
        scalar.dotBatch(query, block, 0, count, d, out, 0);
        return out;
    }

    @Benchmark
    public float[] dotBatchLucene() {
        for (int v = 0; v < count; v++) {
            out[v] = VectorUtil.dotProduct(query, rows[v]);
        }
        return out;
    }

    @Benchmark
    public float[] squareDistanceBatchPanama() {
        panama.squareDistanceBatch(query, block, 0, count, d, out, 0);
        return out;
    }

    @Benchmark
    public float[] squareDistanceBatchScalar() {
        scalar.squareDistanceBatch(query, block, 0, count, d, out, 0);
        return out;
    }

    @Benchmark
    public float[] squareDistanceBatchLucene() {
        for (int v = 0; v < count; v++) {
            out[v] = VectorUtil.squareDistance(query, rows[v]);
        }
        return out;
    }
}
