package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.util.VectorUtil;
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
 * One pair of vectors: our Vector API kernels, our scalar kernels and Lucene's {@link VectorUtil}
 * (which picks its own Panama implementation when {@code jdk.incubator.vector} is present; its log
 * line in the fork output says so) side by side in one run. Each method returns its score so JMH's
 * blackhole keeps the work alive.
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
public class PairKernelsBenchmark {

    @Param({"128", "384", "768", "1536"})
    int d;

    private final VectorKernels panama = Kernels.panama();
    private final VectorKernels scalar = Kernels.scalar();
    private float[] a;
    private float[] b;

    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        a = KernelData.uniform(rnd, d);
        b = KernelData.uniform(rnd, d);
    }

    @Benchmark
    public float dotPanama() {
        return panama.dot(a, b);
    }

    @Benchmark
    public float dotScalar() {
        return scalar.dot(a, b);
    }

    @Benchmark
    public float dotLucene() {
        return VectorUtil.dotProduct(a, b);
    }

    @Benchmark
    public float squareDistancePanama() {
        return panama.squareDistance(a, b);
    }

    @Benchmark
    public float squareDistanceScalar() {
        return scalar.squareDistance(a, b);
    }

    @Benchmark
    public float squareDistanceLucene() {
        return VectorUtil.squareDistance(a, b);
    }

    @Benchmark
    public float cosinePanama() {
        return panama.cosine(a, b);
    }

    @Benchmark
    public float cosineScalar() {
        return scalar.cosine(a, b);
    }

    @Benchmark
    public float cosineLucene() {
        return VectorUtil.cosine(a, b);
    }
}
