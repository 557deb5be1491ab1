package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * IVF-PQ query set-up: one query's table of partial distances to every centroid of every subspace
 * ({@code m = d / dsub} subspaces of {@link #ksub} centroids). Small sub-vectors are the case that
 * plain per-centroid SIMD handles badly.
 */
public class PqTableBenchmark extends KernelBenchmark {

    @Param({"768"})
    int d;

    @Param({"2", "4", "8", "16"})
    int dsub;

    @Param({"256"})
    int ksub;

    private final VectorKernels panama = Kernels.panama();
    private final VectorKernels scalar = Kernels.scalar();
    private int m;
    private float[] query;
    private float[] codebooks;
    private float[] table;

    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        m = d / dsub;
        query = KernelData.uniform(rnd, d);
        codebooks = KernelData.uniform(rnd, m * ksub * dsub);
        table = new float[m * ksub];
    }

    @Benchmark
    public float[] distanceTablePanama() {
        panama.pqDistanceTable(query, codebooks, m, ksub, table);
        return table;
    }

    @Benchmark
    public float[] distanceTableScalar() {
        scalar.pqDistanceTable(query, codebooks, m, ksub, table);
        return table;
    }

    @Benchmark
    public float[] dotTablePanama() {
        panama.pqDotTable(query, codebooks, m, ksub, table);
        return table;
    }

    @Benchmark
    public float[] dotTableScalar() {
        scalar.pqDotTable(query, codebooks, m, ksub, table);
        return table;
    }
}
