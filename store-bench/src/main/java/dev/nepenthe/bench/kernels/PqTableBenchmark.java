package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * IVF-PQ query set-up: one query's table of partial distances to every centroid of every subspace
 * ({@code m = d / dsub} subspaces of {@link #ksub} centroids). Small sub-vectors are the case that
 * plain per-centroid SIMD handles badly.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 1,
        jvmArgsAppend = {
            "--add-modules=jdk.incubator.vector",
            "--enable-native-access=ALL-UNNAMED"
        })
public class PqTableBenchmark {

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
