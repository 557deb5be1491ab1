package dev.nepenthe.bench.kernels;

import dev.nepenthe.core.Metric;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What one copy of a cosine collection's floats would cost a graph (docs/STORAGE.md, "Not yet"):
 * scoring a prepared query against the unit-length copy an index holds today, against scoring it
 * against the stored floats normalised as they are read, bit for bit as {@link Metric#prepare}
 * normalises them ({@code (float) (x * inverseNorm)}, the product in double). Rows are read at
 * random from {@code n} vectors off the heap, as a graph's walk reads them, so the cache misses of
 * a large graph are in both figures.
 *
 * <p>Both methods sum in one order (eight 8-lane accumulators, then lane by lane), and the set-up
 * checks that they give the same score bit for bit on every row it samples: the figure is the price
 * of the bit-exact variant, not of an approximation. Each invocation scores {@link #BATCH} rows and
 * returns their sum, so the work cannot be dropped.
 */
public class NormaliseOnReadBenchmark extends KernelBenchmark {

    static final int BATCH = 1024;
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final VectorSpecies<Double> D8 = DoubleVector.SPECIES_512;

    @Param({"100000", "1000000"})
    int n;

    @Param({"384"})
    int d;

    private Arena arena;
    private MemorySegment stored;
    private MemorySegment prepared;
    private double[] inverseNorms;
    private float[] query;
    private int[] rows;
    private int next;

    // The arena lives for the trial: tearDown closes it.
    @SuppressWarnings("MustBeClosedChecker")
    @Setup(Level.Trial)
    public void setUp() {
        if (d % 64 != 0) {
            throw new IllegalArgumentException("d: expected a multiple of 64, got " + d);
        }
        arena = Arena.ofShared();
        stored = arena.allocate((long) n * d * Float.BYTES, 64);
        prepared = arena.allocate((long) n * d * Float.BYTES, 64);
        inverseNorms = new double[n];
        SplittableRandom rnd = new SplittableRandom(42);
        for (int i = 0; i < n; i++) {
            float[] v = KernelData.uniform(rnd, d);
            float[] p = Metric.COSINE.prepare(v);
            double norm = 0;
            for (float x : v) {
                norm += (double) x * x;
            }
            inverseNorms[i] = 1.0 / Math.sqrt(norm); // as Metric.prepare computes it
            MemorySegment.copy(v, 0, stored, ValueLayout.JAVA_FLOAT, (long) i * d * Float.BYTES, d);
            MemorySegment.copy(
                    p, 0, prepared, ValueLayout.JAVA_FLOAT, (long) i * d * Float.BYTES, d);
        }
        query = Metric.COSINE.prepare(KernelData.uniform(rnd, d));
        rows = new int[1 << 20];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = rnd.nextInt(n);
        }
        for (int i = 0; i < Math.min(n, 2_000); i++) {
            int r = rows[i];
            float a = dotPrepared(r);
            float b = dotNormalisingOnRead(r);
            if (Float.floatToRawIntBits(a) != Float.floatToRawIntBits(b)) {
                throw new IllegalStateException(
                        "row "
                                + r
                                + ": "
                                + a
                                + " from the prepared copy, "
                                + b
                                + " normalised on read; the two must agree bit for bit");
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public float preparedCopy() {
        float sum = 0;
        for (int i = 0; i < BATCH; i++) {
            sum += dotPrepared(nextRow());
        }
        return sum;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public float normaliseOnRead() {
        float sum = 0;
        for (int i = 0; i < BATCH; i++) {
            sum += dotNormalisingOnRead(nextRow());
        }
        return sum;
    }

    private int nextRow() {
        int r = rows[next];
        next = (next + 1) & (rows.length - 1);
        return r;
    }

    private float dotPrepared(int row) {
        long base = (long) row * d * Float.BYTES;
        // Eight accumulators in locals (an array of vectors would box them).
        FloatVector a0 = FloatVector.zero(F8),
                a1 = a0,
                a2 = a0,
                a3 = a0,
                a4 = a0,
                a5 = a0,
                a6 = a0,
                a7 = a0;
        for (int i = 0; i < d; i += 64) {
            a0 = q(i).fma(load(prepared, base, i), a0);
            a1 = q(i + 8).fma(load(prepared, base, i + 8), a1);
            a2 = q(i + 16).fma(load(prepared, base, i + 16), a2);
            a3 = q(i + 24).fma(load(prepared, base, i + 24), a3);
            a4 = q(i + 32).fma(load(prepared, base, i + 32), a4);
            a5 = q(i + 40).fma(load(prepared, base, i + 40), a5);
            a6 = q(i + 48).fma(load(prepared, base, i + 48), a6);
            a7 = q(i + 56).fma(load(prepared, base, i + 56), a7);
        }
        return sum(a0, a1, a2, a3, a4, a5, a6, a7);
    }

    private float dotNormalisingOnRead(int row) {
        long base = (long) row * d * Float.BYTES;
        DoubleVector inv = DoubleVector.broadcast(D8, inverseNorms[row]);
        FloatVector a0 = FloatVector.zero(F8),
                a1 = a0,
                a2 = a0,
                a3 = a0,
                a4 = a0,
                a5 = a0,
                a6 = a0,
                a7 = a0;
        for (int i = 0; i < d; i += 64) {
            a0 = q(i).fma(normalised(base, i, inv), a0);
            a1 = q(i + 8).fma(normalised(base, i + 8, inv), a1);
            a2 = q(i + 16).fma(normalised(base, i + 16, inv), a2);
            a3 = q(i + 24).fma(normalised(base, i + 24, inv), a3);
            a4 = q(i + 32).fma(normalised(base, i + 32, inv), a4);
            a5 = q(i + 40).fma(normalised(base, i + 40, inv), a5);
            a6 = q(i + 48).fma(normalised(base, i + 48, inv), a6);
            a7 = q(i + 56).fma(normalised(base, i + 56, inv), a7);
        }
        return sum(a0, a1, a2, a3, a4, a5, a6, a7);
    }

    private FloatVector q(int at) {
        return FloatVector.fromArray(F8, query, at);
    }

    private static FloatVector load(MemorySegment s, long base, int at) {
        return FloatVector.fromMemorySegment(
                F8, s, base + (long) at * Float.BYTES, ByteOrder.nativeOrder());
    }

    /**
     * Widened, scaled in double, rounded back to float: {@code Metric.prepare}'s {@code (float) (x
     * * inv)}.
     */
    private FloatVector normalised(long base, int at, DoubleVector inv) {
        FloatVector raw = load(stored, base, at);
        return (FloatVector)
                ((DoubleVector) raw.convertShape(VectorOperators.F2D, D8, 0))
                        .mul(inv)
                        .convertShape(VectorOperators.D2F, F8, 0);
    }

    /** Lane by lane in a fixed order, so both methods' sums are comparable bit for bit. */
    private static float sum(
            FloatVector a0,
            FloatVector a1,
            FloatVector a2,
            FloatVector a3,
            FloatVector a4,
            FloatVector a5,
            FloatVector a6,
            FloatVector a7) {
        FloatVector t = a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7);
        float s = 0;
        for (int l = 0; l < 8; l++) {
            s += t.lane(l);
        }
        return s;
    }
}
