package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.apache.lucene.util.VectorUtil;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One pair of vectors: our Vector API kernels, our scalar kernels and Lucene's {@link VectorUtil}
 * (which picks its own Panama implementation when {@code jdk.incubator.vector} is present; its log
 * line in the fork output says so) side by side in one run. The {@code Segment} methods read the
 * second vector off the heap, as a memory-mapped collection's rows are read. Each method returns
 * its score so JMH's blackhole keeps the work alive.
 */
public class PairKernelsBenchmark extends KernelBenchmark {

    @Param({"128", "384", "768", "1536"})
    int d;

    private final VectorKernels panama = Kernels.panama();
    private final VectorKernels scalar = Kernels.scalar();
    private float[] a;
    private float[] b;
    private Arena arena;
    private MemorySegment bOffHeap;

    // The arena lives for the trial: tearDown closes it.
    @SuppressWarnings("MustBeClosedChecker")
    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        a = KernelData.uniform(rnd, d);
        b = KernelData.uniform(rnd, d);
        arena = Arena.ofConfined();
        bOffHeap = arena.allocate((long) d * Float.BYTES, 64);
        MemorySegment.copy(b, 0, bOffHeap, ValueLayout.JAVA_FLOAT, 0, d);
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public float dotPanama() {
        return panama.dot(a, b);
    }

    @Benchmark
    public float dotPanamaSegment() {
        return panama.dot(a, 0, bOffHeap, 0, d);
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
    public float squareDistancePanamaSegment() {
        return panama.squareDistance(a, 0, bOffHeap, 0, d);
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
