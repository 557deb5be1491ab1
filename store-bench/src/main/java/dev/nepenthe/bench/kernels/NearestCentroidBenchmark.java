package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The nearest-centroid kernel that k-means and PQ encoding run: {@link #points} points of {@link
 * #dim} floats against {@link #k} centroids, per call. dim 8 is a PQ sub-vector (the default
 * split), dim 384 a coarse quantizer over MiniLM vectors. Scores are ns per call; divide by {@link
 * #points} for one point.
 */
public class NearestCentroidBenchmark extends KernelBenchmark {

    @Param({"8", "384"})
    int dim;

    @Param({"256"})
    int k;

    @Param({"64"})
    int points;

    private final VectorKernels panama = Kernels.panama();
    private final VectorKernels scalar = Kernels.scalar();
    private float[] block;
    private CentroidBlock centroids;
    private int[] out;

    @Setup
    public void setUp() {
        SplittableRandom rnd = new SplittableRandom(42);
        block = KernelData.uniform(rnd, points * dim);
        centroids = CentroidBlock.of(KernelData.uniform(rnd, k * dim), 0, k, dim);
        out = new int[points];
    }

    @Benchmark
    public int[] nearestPanama() {
        panama.nearest(block, 0, points, centroids, out, 0);
        return out;
    }

    @Benchmark
    public int[] nearestScalar() {
        scalar.nearest(block, 0, points, centroids, out, 0);
        return out;
    }
}
