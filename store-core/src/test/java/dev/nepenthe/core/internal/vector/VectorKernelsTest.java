package dev.nepenthe.core.internal.vector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.vector.CentroidBlock;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Both kernel implementations against a naive double-precision reference, and against each other,
 * on lengths that exercise every unrolled loop, vector loop and scalar tail.
 *
 * <h2>Tolerances</h2>
 *
 * A float sum of n terms, accumulated in any order (four scalar accumulators, vector lanes, a lane
 * reduction), is off from the exact sum by at most about {@code n * u * sum|term|}, where {@code u
 * = 2^-24} is float's unit round-off (Higham, "Accuracy and Stability of Numerical Algorithms", the
 * recursive-summation bound; a fused multiply-add rounds once, so a product adds nothing, and the
 * difference in {@code (a-b)^2} adds about two more units). The bound is relative to the sum of
 * magnitudes, not to the result: with cancelling signs the result can be near zero while each term
 * is 1e8, and no float kernel can do better than the terms' own rounding. A bound relative to the
 * result would fail correct kernels; a fixed absolute one would either fail at 1e4 components or
 * pass anything at 1e-6 components.
 *
 * <p>That bound is loose, so it cannot see one small term going missing. {@link
 * #everyPositionCounts} therefore checks exactly, with vectors that have a single non-zero
 * component, that every index of every length reaches the result once, and the padding around each
 * range is NaN so reading one float too far poisons the result.
 */
class VectorKernelsTest {

    private static final int[] LENGTHS = {
        1, 3, 8, 13, 16, 25, 100, 127, 128, 207, 384, 702, 768, 1024, 1536
    };
    private static final double U = Math.ulp(1.0f) / 2; // 2^-24
    private static final int PAD = 37;

    static Stream<VectorKernels> kernels() {
        return Stream.concat(Stream.of(Kernels.scalar()), vectorKernels());
    }

    // ---- data -------------------------------------------------------------------------------

    /**
     * A component mix that stresses accumulation: zeros, signs, 1e4 magnitudes next to 1e-6 ones,
     * and ordinary Gaussian values.
     */
    private static float component(SplittableRandom rnd) {
        double r = rnd.nextDouble();
        double sign = rnd.nextBoolean() ? 1 : -1;
        if (r < 0.1) {
            return 0f;
        } else if (r < 0.2) {
            return (float) (sign * 1e4 * (0.5 + rnd.nextDouble()));
        } else if (r < 0.3) {
            return (float) (sign * 1e-6 * (0.5 + rnd.nextDouble()));
        }
        return (float) (sign * Math.abs(gaussian(rnd)));
    }

    private static double gaussian(SplittableRandom rnd) {
        double u1 = 1.0 - rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    /** {@code len} random floats at {@code off}, NaN everywhere else (so over-reads show). */
    private static float[] padded(SplittableRandom rnd, int off, int len) {
        float[] a = new float[off + len + PAD];
        Arrays.fill(a, Float.NaN);
        for (int i = 0; i < len; i++) {
            a[off + i] = component(rnd);
        }
        return a;
    }

    private static float[] plain(SplittableRandom rnd, int len) {
        float[] a = new float[len];
        for (int i = 0; i < len; i++) {
            a[i] = component(rnd);
        }
        return a;
    }

    // ---- reference --------------------------------------------------------------------------

    private record Ref(double value, double magnitude) {}

    private static Ref refDot(float[] a, int aOff, float[] b, int bOff, int len) {
        double s = 0, m = 0;
        for (int i = 0; i < len; i++) {
            double t = (double) a[aOff + i] * b[bOff + i];
            s += t;
            m += Math.abs(t);
        }
        return new Ref(s, m);
    }

    private static Ref refSquare(float[] a, int aOff, float[] b, int bOff, int len) {
        double s = 0;
        for (int i = 0; i < len; i++) {
            double d = (double) a[aOff + i] - b[bOff + i];
            s += d * d;
        }
        return new Ref(s, s);
    }

    /** Within the summation bound for {@code n} terms (see the class comment). */
    private static void assertClose(Ref ref, float actual, int n, String what) {
        double tol = (n + 4) * U * ref.magnitude() + Float.MIN_NORMAL;
        if (!(Math.abs(actual - ref.value()) <= tol)) {
            fail(what + ": expected " + ref.value() + " +- " + tol + " but was " + actual);
        }
    }

    // ---- dot / squareDistance ---------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("kernels")
    void dotAndSquareDistanceMatchTheReference(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(11);
        for (int len : LENGTHS) {
            int aOff = rnd.nextInt(9), bOff = rnd.nextInt(9);
            float[] a = padded(rnd, aOff, len), b = padded(rnd, bOff, len);
            assertClose(
                    refDot(a, aOff, b, bOff, len),
                    k.dot(a, aOff, b, bOff, len),
                    len,
                    "dot len " + len);
            assertClose(
                    refSquare(a, aOff, b, bOff, len),
                    k.squareDistance(a, aOff, b, bOff, len),
                    len,
                    "squareDistance len " + len);

            float[] x = plain(rnd, len), y = plain(rnd, len);
            assertClose(refDot(x, 0, y, 0, len), k.dot(x, y), len, "dot(a, b) len " + len);
            assertClose(
                    refSquare(x, 0, y, 0, len),
                    k.squareDistance(x, y),
                    len,
                    "squareDistance(a, b) len " + len);
            assertEquals(0f, k.squareDistance(x, 0, x, 0, len), "distance to itself, len " + len);
        }
    }

    /**
     * The twins follow one summation order (see {@link VectorKernels}), so they agree to the last
     * bit: every length from 1 to 300 (every block and tail combination of the order) and the long
     * ones, at random offsets, for the pair kernels, cosine and both batches.
     */
    @ParameterizedTest
    @MethodSource("vectorKernels")
    void simdAgreesWithScalarBitForBit(VectorKernels p) {
        VectorKernels s = Kernels.scalar();
        SplittableRandom rnd = new SplittableRandom(12);
        int[] lengths =
                java.util.stream.IntStream.concat(
                                java.util.stream.IntStream.rangeClosed(1, 300),
                                Arrays.stream(LENGTHS))
                        .toArray();
        for (int len : lengths) {
            int aOff = rnd.nextInt(9), bOff = rnd.nextInt(9);
            float[] a = padded(rnd, aOff, len), b = padded(rnd, bOff, len);
            assertSameBits(
                    s.dot(a, aOff, b, bOff, len), p.dot(a, aOff, b, bOff, len), "dot len " + len);
            assertSameBits(
                    s.squareDistance(a, aOff, b, bOff, len),
                    p.squareDistance(a, aOff, b, bOff, len),
                    "squareDistance len " + len);
            float[] x = plain(rnd, len), y = plain(rnd, len);
            assertSameBits(s.cosine(x, y), p.cosine(x, y), "cosine len " + len);
            int count = 1 + rnd.nextInt(6);
            float[] block = plain(rnd, count * len + 3);
            float[] ds = new float[count],
                    dp = new float[count],
                    qs = new float[count],
                    qp = new float[count];
            s.dotBatch(x, block, 3, count, len, ds, 0);
            p.dotBatch(x, block, 3, count, len, dp, 0);
            s.squareDistanceBatch(x, block, 3, count, len, qs, 0);
            p.squareDistanceBatch(x, block, 3, count, len, qp, 0);
            for (int v = 0; v < count; v++) {
                assertSameBits(ds[v], dp[v], "dotBatch len " + len + " vector " + v);
                assertSameBits(
                        s.dot(x, 0, block, 3 + v * len, len), dp[v], "dotBatch vs dot, len " + len);
                assertSameBits(qs[v], qp[v], "squareDistanceBatch len " + len + " vector " + v);
                assertSameBits(
                        s.squareDistance(x, 0, block, 3 + v * len, len),
                        qp[v],
                        "squareDistanceBatch vs squareDistance, len " + len);
            }
            // Scattered rows, repeats allowed, against a point inside the matrix (as a build's
            // node scorer aims at a stored vector): every row count up to 9 covers the fours,
            // the pairs and the single remainders.
            int rowCount = 1 + rnd.nextInt(12);
            float[] matrix = plain(rnd, rowCount * len);
            int rows = rnd.nextInt(10);
            int[] picked = new int[rows + 1];
            for (int r = 0; r < rows; r++) {
                picked[r] = rnd.nextInt(rowCount);
            }
            int pointOff = rnd.nextInt(rowCount) * len;
            float[] rs = new float[rows + 1], rp = new float[rows + 1];
            Arrays.fill(rp, Float.NaN);
            s.dotRows(matrix, pointOff, matrix, picked, rows, len, rs);
            p.dotRows(matrix, pointOff, matrix, picked, rows, len, rp);
            for (int r = 0; r < rows; r++) {
                assertSameBits(rs[r], rp[r], "dotRows len " + len + " row " + r);
                assertSameBits(
                        s.dot(matrix, pointOff, matrix, picked[r] * len, len),
                        rp[r],
                        "dotRows vs dot, len " + len);
            }
            assertTrue(Float.isNaN(rp[rows]), "dotRows wrote past count, len " + len);
            s.squareDistanceRows(matrix, pointOff, matrix, picked, rows, len, rs);
            p.squareDistanceRows(matrix, pointOff, matrix, picked, rows, len, rp);
            for (int r = 0; r < rows; r++) {
                assertSameBits(rs[r], rp[r], "squareDistanceRows len " + len + " row " + r);
                assertSameBits(
                        s.squareDistance(matrix, pointOff, matrix, picked[r] * len, len),
                        rp[r],
                        "squareDistanceRows vs squareDistance, len " + len);
            }
            assertTrue(Float.isNaN(rp[rows]), "squareDistanceRows wrote past count, len " + len);
        }
    }

    /**
     * The forms over vectors off the heap (a native segment) give exactly the array forms' bits,
     * for every kernel and against the scalar twin's array form: every length from 1 to 300 and the
     * long ones, single scores and scattered rows (fours, and remainders of one to three).
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void segmentFormsAgreeWithArrayFormsBitForBit(VectorKernels k) {
        VectorKernels s = Kernels.scalar();
        SplittableRandom rnd = new SplittableRandom(24);
        int[] lengths =
                java.util.stream.IntStream.concat(
                                java.util.stream.IntStream.rangeClosed(1, 300),
                                Arrays.stream(LENGTHS))
                        .toArray();
        try (Arena arena = Arena.ofConfined()) {
            for (int len : lengths) {
                int rowCount = 1 + rnd.nextInt(12);
                float[] matrix = plain(rnd, rowCount * len);
                MemorySegment segment = arena.allocate((long) matrix.length * Float.BYTES, 64);
                MemorySegment.copy(matrix, 0, segment, ValueLayout.JAVA_FLOAT, 0, matrix.length);
                int aOff = rnd.nextInt(9);
                float[] a = padded(rnd, aOff, len);
                for (int r = 0; r < rowCount; r++) {
                    String what = " len " + len + " row " + r;
                    assertSameBits(
                            s.dot(a, aOff, matrix, r * len, len),
                            k.dot(a, aOff, segment, (long) r * len, len),
                            "dot over a segment" + what);
                    assertSameBits(
                            s.squareDistance(a, aOff, matrix, r * len, len),
                            k.squareDistance(a, aOff, segment, (long) r * len, len),
                            "squareDistance over a segment" + what);
                }
                int rows = rnd.nextInt(10);
                int[] picked = new int[rows];
                for (int r = 0; r < rows; r++) {
                    picked[r] = rnd.nextInt(rowCount);
                }
                float[] expected = new float[rows], actual = new float[rows + 1];
                Arrays.fill(actual, Float.NaN);
                s.dotRows(a, aOff, matrix, picked, rows, len, expected);
                k.dotRows(a, aOff, segment, picked, rows, len, actual);
                for (int r = 0; r < rows; r++) {
                    assertSameBits(
                            expected[r],
                            actual[r],
                            "dotRows over a segment, len " + len + " row " + r);
                }
                assertTrue(
                        Float.isNaN(actual[rows]),
                        "dotRows over a segment wrote past count, len " + len);
                s.squareDistanceRows(a, aOff, matrix, picked, rows, len, expected);
                k.squareDistanceRows(a, aOff, segment, picked, rows, len, actual);
                for (int r = 0; r < rows; r++) {
                    assertSameBits(
                            expected[r],
                            actual[r],
                            "squareDistanceRows over a segment, len " + len + " row " + r);
                }
                assertTrue(
                        Float.isNaN(actual[rows]),
                        "squareDistanceRows over a segment wrote past count, len " + len);
            }
        }
    }

    /**
     * Rows past 2^31 floats: a sparse mapped file of 6,000,000 rows of 384 floats (9.2 GB, of which
     * only the touched pages exist) is scored at rows whose float offset overflows an int, and each
     * score must equal the array form's on the same values.
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void segmentRowsPastTwoToThe31Floats(VectorKernels k, @TempDir Path dir) throws IOException {
        int dim = 384, rowCount = 6_000_000;
        int[] picked = {0, 5_592_406, 5_999_999, 5_700_001, 3};
        assertTrue(
                (long) picked[1] * dim > Integer.MAX_VALUE,
                "the test's rows must overflow an int offset");
        SplittableRandom rnd = new SplittableRandom(25);
        float[] q = plain(rnd, dim);
        float[][] rowValues = new float[picked.length][];
        try (FileChannel ch =
                        FileChannel.open(
                                dir.resolve("sparse.f32"),
                                StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE,
                                StandardOpenOption.SPARSE);
                Arena arena = Arena.ofConfined()) {
            MemorySegment segment =
                    ch.map(
                            FileChannel.MapMode.READ_WRITE,
                            0,
                            (long) rowCount * dim * Float.BYTES,
                            arena);
            for (int i = 0; i < picked.length; i++) {
                rowValues[i] = plain(rnd, dim);
                MemorySegment.copy(
                        rowValues[i],
                        0,
                        segment,
                        ValueLayout.JAVA_FLOAT,
                        (long) picked[i] * dim * Float.BYTES,
                        dim);
            }
            float[] dots = new float[picked.length], squares = new float[picked.length];
            k.dotRows(q, 0, segment, picked, picked.length, dim, dots);
            k.squareDistanceRows(q, 0, segment, picked, picked.length, dim, squares);
            for (int i = 0; i < picked.length; i++) {
                assertSameBits(
                        k.dot(q, 0, rowValues[i], 0, dim), dots[i], "dotRows at row " + picked[i]);
                assertSameBits(
                        k.squareDistance(q, 0, rowValues[i], 0, dim),
                        squares[i],
                        "squareDistanceRows at row " + picked[i]);
                assertSameBits(
                        k.dot(q, 0, rowValues[i], 0, dim),
                        k.dot(q, 0, segment, (long) picked[i] * dim, dim),
                        "dot at row " + picked[i]);
            }
        }
    }

    /**
     * The int8 forms over codes off the heap give the array forms' ints, for every kernel: every
     * length from 1 to 300 and 384, 385, single rows and scattered rows at a row header offset, and
     * rows whose byte offset overflows an int (a sparse mapped file of 2.4 GB).
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void int8SegmentFormsEqualTheArrayForms(VectorKernels k, @TempDir Path dir) throws IOException {
        SplittableRandom rnd = new SplittableRandom(26);
        int[] lengths =
                java.util.stream.IntStream.concat(
                                java.util.stream.IntStream.rangeClosed(1, 300),
                                java.util.stream.IntStream.of(384, 385))
                        .toArray();
        try (Arena arena = Arena.ofConfined()) {
            for (int len : lengths) {
                int stride = len + rnd.nextInt(20);
                int rowCount = 1 + rnd.nextInt(12);
                byte[] codes = randomBytes(rnd, 0, rowCount * stride + 2);
                MemorySegment segment = arena.allocate(codes.length, 64);
                MemorySegment.copy(codes, 0, segment, ValueLayout.JAVA_BYTE, 0, codes.length);
                int aOff = rnd.nextInt(9);
                byte[] a = randomBytes(rnd, aOff, len);
                int codesOff = rnd.nextInt(3);
                for (int r = 0; r < rowCount; r++) {
                    assertEquals(
                            (int) refDotInt8(a, aOff, codes, codesOff + r * stride, len),
                            k.dotInt8(a, aOff, segment, codesOff + (long) r * stride, len),
                            k.name() + " len " + len + " row " + r);
                }
                int count = rnd.nextInt(10);
                int[] rows = new int[count];
                for (int i = 0; i < count; i++) {
                    rows[i] = rnd.nextInt(rowCount);
                }
                int[] out = new int[count + 1];
                out[count] = 12345;
                k.dotInt8Bulk(a, aOff, segment, codesOff, stride, rows, count, len, out);
                for (int i = 0; i < count; i++) {
                    assertEquals(
                            (int) refDotInt8(a, aOff, codes, codesOff + rows[i] * stride, len),
                            out[i],
                            k.name() + " bulk len " + len + " row " + i);
                }
                assertEquals(
                        12345,
                        out[count],
                        k.name() + ": bulk over a segment wrote past count, len " + len);
            }
        }
        int len = 384, stride = 400, rowCount = 6_000_000;
        int[] picked = {0, 5_368_710, 5_999_999, 5_500_001, 3};
        assertTrue(
                (long) picked[1] * stride > Integer.MAX_VALUE,
                "the test's rows must overflow an int offset");
        byte[] a = randomBytes(rnd, 0, len);
        byte[][] rowBytes = new byte[picked.length][];
        try (FileChannel ch =
                        FileChannel.open(
                                dir.resolve("sparse.i8"),
                                StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE,
                                StandardOpenOption.SPARSE);
                Arena arena = Arena.ofConfined()) {
            MemorySegment segment =
                    ch.map(FileChannel.MapMode.READ_WRITE, 0, (long) rowCount * stride, arena);
            for (int i = 0; i < picked.length; i++) {
                rowBytes[i] = randomBytes(rnd, 0, len);
                MemorySegment.copy(
                        rowBytes[i],
                        0,
                        segment,
                        ValueLayout.JAVA_BYTE,
                        (long) picked[i] * stride,
                        len);
            }
            int[] out = new int[picked.length];
            k.dotInt8Bulk(a, 0, segment, 0, stride, picked, picked.length, len, out);
            for (int i = 0; i < picked.length; i++) {
                int expected = (int) refDotInt8(a, 0, rowBytes[i], 0, len);
                assertEquals(expected, out[i], k.name() + " bulk at row " + picked[i]);
                assertEquals(
                        expected,
                        k.dotInt8(a, 0, segment, (long) picked[i] * stride, len),
                        k.name() + " at row " + picked[i]);
            }
        }
    }

    /**
     * Every Vector API flavour this machine runs: the default and each other width it accepts (the
     * default's own width is the same code, so it is not run twice).
     */
    static Stream<VectorKernels> vectorKernels() {
        int defaultBits = ((PanamaKernels) Kernels.panama()).vectorBits();
        return Stream.concat(
                Stream.of(Kernels.panama()),
                Arrays.stream(Kernels.panamaWidths())
                        .filter(w -> w != defaultBits)
                        .mapToObj(Kernels::panama));
    }

    /**
     * Both PQ tables, every dsub the kernels treat differently, ksub with and without a remainder
     * of 8.
     */
    @Test
    void pqTablesAgreeBitForBit() {
        VectorKernels s = Kernels.scalar(), p = Kernels.panama();
        SplittableRandom rnd = new SplittableRandom(14);
        for (int dsub : new int[] {1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 48}) {
            for (int ksub : new int[] {7, 16, 21, 256}) {
                int m = 1 + rnd.nextInt(4);
                float[] q = plain(rnd, m * dsub), cb = plain(rnd, m * ksub * dsub);
                float[][] t = new float[4][m * ksub];
                s.pqDistanceTable(q, cb, m, ksub, t[0]);
                p.pqDistanceTable(q, cb, m, ksub, t[1]);
                s.pqDotTable(q, cb, m, ksub, t[2]);
                p.pqDotTable(q, cb, m, ksub, t[3]);
                for (int e = 0; e < m * ksub; e++) {
                    assertSameBits(
                            t[0][e],
                            t[1][e],
                            "pqDistanceTable dsub " + dsub + " ksub " + ksub + " entry " + e);
                    assertSameBits(
                            t[2][e],
                            t[3][e],
                            "pqDotTable dsub " + dsub + " ksub " + ksub + " entry " + e);
                }
            }
        }
    }

    /**
     * A score does not depend on the JIT tier that computed it: the first calls run in the
     * interpreter (the Vector API's Java fallback), the last in C2's intrinsics. Any order the JIT
     * were free to pick would show up here as a changed last bit.
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void sameBitsInEveryJitTier(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(15);
        for (int len : new int[] {100, 384}) {
            float[] a = plain(rnd, len), b = plain(rnd, len);
            int dot = Float.floatToRawIntBits(k.dot(a, b));
            int square = Float.floatToRawIntBits(k.squareDistance(a, b));
            for (int i = 0; i < 60_000; i++) {
                if (Float.floatToRawIntBits(k.dot(a, b)) != dot
                        || Float.floatToRawIntBits(k.squareDistance(a, b)) != square) {
                    fail(
                            k.name()
                                    + " len "
                                    + len
                                    + ": the score changed at call "
                                    + i
                                    + " as the JIT warmed up");
                }
            }
        }
    }

    private static void assertSameBits(float expected, float actual, String what) {
        if (Float.floatToRawIntBits(expected) != Float.floatToRawIntBits(actual)) {
            fail(
                    what
                            + ": scalar "
                            + expected
                            + " ("
                            + Integer.toHexString(Float.floatToRawIntBits(expected))
                            + ") vs panama "
                            + actual
                            + " ("
                            + Integer.toHexString(Float.floatToRawIntBits(actual))
                            + ")");
        }
    }

    /** Exact: one non-zero component per vector, so each index must reach the sum exactly once. */
    @ParameterizedTest
    @MethodSource("kernels")
    void everyPositionCounts(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(13);
        for (int len : LENGTHS) {
            int off = 1 + rnd.nextInt(8);
            float[] b = padded(rnd, off, len);
            float[] e = new float[off + len + PAD];
            float[] zero = new float[len];
            for (int pos = 0; pos < len; pos++) {
                Arrays.fill(e, Float.NaN);
                Arrays.fill(e, off, off + len, 0f);
                e[off + pos] = 3f;
                assertEquals(
                        3f * b[off + pos],
                        k.dot(e, off, b, off, len),
                        "dot len " + len + " pos " + pos);
                assertEquals(
                        9f,
                        k.squareDistance(e, off, zero, 0, len),
                        "squareDistance len " + len + " pos " + pos);
            }
        }
    }

    // ---- cosine -----------------------------------------------------------------------------

    /**
     * |cos error| stays below about 2 n u: the dot product's error is at most n u sum|a_i b_i| <= n
     * u |a||b| (Cauchy-Schwarz), and each squared norm is off by at most n u relative.
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void cosineMatchesTheReference(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(14);
        for (int len : LENGTHS) {
            float[] a = plain(rnd, len), b = plain(rnd, len);
            double ab = refDot(a, 0, b, 0, len).value();
            double aa = refDot(a, 0, a, 0, len).value();
            double bb = refDot(b, 0, b, 0, len).value();
            double expected = aa == 0 || bb == 0 ? 0 : ab / Math.sqrt(aa * bb);
            float c = k.cosine(a, b);
            assertTrue(
                    Math.abs(c - expected) <= 2 * (len + 5) * U,
                    "cosine len " + len + ": " + expected + " vs " + c);
            assertTrue(c >= -1f && c <= 1f, "cosine out of range: " + c);
        }
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void cosineEdgeCases(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(15);
        for (int len : LENGTHS) {
            float[] a = plain(rnd, len);
            a[0] = 1f; // never all zeros
            float[] zero = new float[len];
            float[] neg = new float[len];
            float[] scaled = new float[len];
            float[] tiny = new float[len];
            for (int i = 0; i < len; i++) {
                neg[i] = -a[i];
                scaled[i] = a[i] * 1024f; // exact: a power of two
                tiny[i] = 1e-30f;
            }
            assertEquals(0f, k.cosine(zero, a), "zero first, len " + len);
            assertEquals(0f, k.cosine(a, zero), "zero second, len " + len);
            assertEquals(0f, k.cosine(zero, zero), "both zero, len " + len);
            float self = k.cosine(a, a);
            assertTrue(
                    self <= 1f && self >= 1f - 2 * (len + 5) * U,
                    "identical, len " + len + ": " + self);
            float opposite = k.cosine(a, neg);
            assertTrue(
                    opposite >= -1f && opposite <= -1f + 2 * (len + 5) * U,
                    "opposite, len " + len + ": " + opposite);
            float parallel = k.cosine(a, scaled);
            assertTrue(
                    parallel <= 1f && parallel >= 1f - 2 * (len + 5) * U,
                    "scaled, len " + len + ": " + parallel);
            // Squares of 1e-30 underflow to zero in float: the norm is then zero, never NaN.
            float t = k.cosine(tiny, tiny);
            assertFalse(Float.isNaN(t), "tiny vectors gave NaN, len " + len);
            assertTrue(t >= -1f && t <= 1f, "tiny vectors out of range: " + t);
        }
    }

    // ---- batches ----------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("kernels")
    void batchesMatchSingleScores(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(16);
        int[] counts = {0, 1, 3, 4, 5, 9};
        for (int dim : LENGTHS) {
            float[] q = plain(rnd, dim);
            for (int count : counts) {
                int blockOff = rnd.nextInt(2 * dim + 1), outOff = rnd.nextInt(5);
                float[] block = padded(rnd, blockOff, count * dim);
                float[] dots = new float[outOff + count + PAD];
                float[] squares = new float[outOff + count + PAD];
                Arrays.fill(dots, -7f);
                Arrays.fill(squares, -7f);
                k.dotBatch(q, block, blockOff, count, dim, dots, outOff);
                k.squareDistanceBatch(q, block, blockOff, count, dim, squares, outOff);
                for (int v = 0; v < count; v++) {
                    int o = blockOff + v * dim;
                    String what = " dim " + dim + " count " + count + " vector " + v;
                    assertClose(
                            refDot(q, 0, block, o, dim), dots[outOff + v], dim, "dotBatch" + what);
                    assertClose(
                            refSquare(q, 0, block, o, dim),
                            squares[outOff + v],
                            dim,
                            "squareDistanceBatch" + what);
                }
                assertUntouched(dots, outOff, count, "dotBatch dim " + dim);
                assertUntouched(squares, outOff, count, "squareDistanceBatch dim " + dim);
            }
        }
    }

    private static void assertUntouched(float[] out, int off, int count, String what) {
        for (int i = 0; i < out.length; i++) {
            if (i < off || i >= off + count) {
                assertEquals(-7f, out[i], what + ": wrote outside its range at " + i);
            }
        }
    }

    // ---- subtract ---------------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("kernels")
    void subtractIsExactPerComponent(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(17);
        for (int len : LENGTHS) {
            int vOff = rnd.nextInt(9), cOff = rnd.nextInt(9), outOff = rnd.nextInt(9);
            float[] v = padded(rnd, vOff, len), c = padded(rnd, cOff, len);
            float[] out = new float[outOff + len + PAD];
            Arrays.fill(out, -7f);
            k.subtract(v, vOff, c, cOff, out, outOff, len);
            for (int i = 0; i < len; i++) {
                // IEEE subtraction is correctly rounded: the float result is unique.
                assertEquals(
                        v[vOff + i] - c[cOff + i], out[outOff + i], "len " + len + " index " + i);
            }
            assertUntouched(out, outOff, len, "subtract len " + len);
        }
    }

    // ---- product quantization ---------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("kernels")
    void pqDistanceSumsTheCodedEntries(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(18);
        for (int m : new int[] {1, 2, 3, 8, 13, 16, 32, 64}) {
            for (int ksub : new int[] {1, 16, 256}) {
                float[] table = plain(rnd, m * ksub);
                int count = 7, codesOff = rnd.nextInt(11), outOff = rnd.nextInt(5);
                byte[] codes = new byte[codesOff + count * m + PAD];
                for (int i = 0; i < codes.length; i++) {
                    // The top code (255 reads as byte -1) checks that codes are unsigned.
                    codes[i] = (byte) (rnd.nextInt(8) == 0 ? ksub - 1 : rnd.nextInt(ksub));
                }
                float[] out = new float[outOff + count + PAD];
                Arrays.fill(out, -7f);
                k.pqDistanceBatch(table, ksub, codes, codesOff, count, m, out, outOff);
                for (int v = 0; v < count; v++) {
                    int off = codesOff + v * m;
                    double s = 0, mag = 0;
                    for (int j = 0; j < m; j++) {
                        float t = table[j * ksub + (codes[off + j] & 0xFF)];
                        s += t;
                        mag += Math.abs(t);
                    }
                    Ref ref = new Ref(s, mag);
                    String what = "m " + m + " ksub " + ksub + " code " + v;
                    assertClose(
                            ref, k.pqDistance(table, ksub, codes, off, m), m, "pqDistance " + what);
                    assertClose(ref, out[outOff + v], m, "pqDistanceBatch " + what);
                    // Four codes at a time must not change a code's rounding: batch == single.
                    org.junit.jupiter.api.Assertions.assertEquals(
                            k.pqDistance(table, ksub, codes, off, m),
                            out[outOff + v],
                            0f,
                            "pqDistanceBatch bit-identical to pqDistance, " + what);
                }
                assertUntouched(out, outOff, count, "pqDistanceBatch m " + m);
            }
        }
    }

    /**
     * Sub-vector lengths cover each table path: 1, 2 and 4 (several centroids per vector), 8 and 16
     * (one folded vector per centroid) and 3, 12 (one centroid at a time); ksub of 5 and 13 leave
     * centroids over after whole groups of eight.
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void pqTablesMatchTheReference(VectorKernels k) {
        SplittableRandom rnd = new SplittableRandom(19);
        for (int dsub : new int[] {1, 2, 3, 4, 8, 12, 16, 24, 32}) {
            for (int m : new int[] {1, 3, 8}) {
                for (int ksub : new int[] {1, 5, 8, 13, 256}) {
                    float[] q = plain(rnd, m * dsub);
                    float[] codebooks = plain(rnd, m * ksub * dsub);
                    float[] distances = new float[m * ksub];
                    float[] dots = new float[m * ksub];
                    k.pqDistanceTable(q, codebooks, m, ksub, distances);
                    k.pqDotTable(q, codebooks, m, ksub, dots);
                    for (int j = 0; j < m; j++) {
                        for (int c = 0; c < ksub; c++) {
                            int o = (j * ksub + c) * dsub;
                            String what =
                                    " dsub " + dsub + " m " + m + " ksub " + ksub + " j " + j
                                            + " c " + c;
                            assertClose(
                                    refSquare(q, j * dsub, codebooks, o, dsub),
                                    distances[j * ksub + c],
                                    dsub,
                                    "pqDistanceTable" + what);
                            assertClose(
                                    refDot(q, j * dsub, codebooks, o, dsub),
                                    dots[j * ksub + c],
                                    dsub,
                                    "pqDotTable" + what);
                        }
                    }
                }
            }
        }
    }

    /** Exact, as {@link #everyPositionCounts}: one non-zero codebook float per table entry. */
    @ParameterizedTest
    @MethodSource("kernels")
    void pqTablesPlaceEveryCentroid(VectorKernels k) {
        for (int dsub : new int[] {1, 2, 4, 8, 16}) {
            int m = 2, ksub = 16;
            float[] q = new float[m * dsub];
            Arrays.fill(q, 1f);
            float[] codebooks = new float[m * ksub * dsub];
            for (int j = 0; j < m; j++) {
                for (int c = 0; c < ksub; c++) {
                    // centroid (j, c) differs from the all-ones query in one component, by
                    // j*ksub+c+1
                    Arrays.fill(codebooks, (j * ksub + c) * dsub, (j * ksub + c + 1) * dsub, 1f);
                    codebooks[(j * ksub + c) * dsub + (c % dsub)] += j * ksub + c + 1;
                }
            }
            float[] distances = new float[m * ksub];
            float[] dots = new float[m * ksub];
            k.pqDistanceTable(q, codebooks, m, ksub, distances);
            k.pqDotTable(q, codebooks, m, ksub, dots);
            for (int e = 0; e < m * ksub; e++) {
                assertEquals(
                        (float) (e + 1) * (e + 1),
                        distances[e],
                        "distance entry " + e + " dsub " + dsub);
                assertEquals((float) dsub + e + 1, dots[e], "dot entry " + e + " dsub " + dsub);
            }
        }
    }

    /**
     * The nearest-centroid kernel: both implementations pick exactly the same centroid (their
     * shared contract fixes the order of every rounding), and that centroid is a nearest one by a
     * double-precision squared distance, up to the scores' own rounding. Dimensions cover the PQ
     * sub-vectors (1 to 16) and whole vectors (a coarse quantizer); k of 1, 5, 13 and 33 leave
     * padding in the last group of eight, and 8 or more groups (k 64, 256) exercise the eight-group
     * loop, 33 its remainder taken one group at a time.
     */
    @Test
    void nearestCentroidAgreesBetweenTwinsAndWithTheReference() {
        VectorKernels scalar = Kernels.scalar();
        VectorKernels panama = Kernels.panama();
        SplittableRandom rnd = new SplittableRandom(23);
        for (int dim : new int[] {1, 2, 3, 8, 16, 25, 384}) {
            for (int k : new int[] {1, 5, 8, 13, 33, 64, 256}) {
                int n = 37;
                float[] centroids = plain(rnd, k * dim);
                float[] points = plain(rnd, PAD + n * dim);
                CentroidBlock block = CentroidBlock.of(centroids, 0, k, dim);
                int[] a = new int[n + 2];
                int[] b = new int[n + 2];
                Arrays.fill(a, -7);
                Arrays.fill(b, -7);
                scalar.nearest(points, PAD, n, block, a, 1);
                panama.nearest(points, PAD, n, block, b, 1);
                String what = " dim " + dim + " k " + k;
                assertEquals(-7, b[0], "panama wrote before its range" + what);
                assertEquals(-7, b[n + 1], "panama wrote past its range" + what);
                for (int i = 0; i < n; i++) {
                    assertEquals(
                            a[i + 1], b[i + 1], "scalar and panama disagree on point " + i + what);
                    // The scores' rounding is bounded by the squared norms of the point and of
                    // the largest centroid (|<x, c>| is at most half their sum).
                    double best = Double.MAX_VALUE;
                    double sumMagnitude = 0;
                    double largestCentroid = 0;
                    for (int c = 0; c < k; c++) {
                        best =
                                Math.min(
                                        best,
                                        refSquare(points, PAD + i * dim, centroids, c * dim, dim)
                                                .value());
                        largestCentroid =
                                Math.max(
                                        largestCentroid,
                                        refSquare(centroids, c * dim, new float[dim], 0, dim)
                                                .value());
                    }
                    sumMagnitude =
                            refSquare(points, PAD + i * dim, new float[dim], 0, dim).value()
                                    + largestCentroid;
                    double chosen =
                            refSquare(points, PAD + i * dim, centroids, a[i + 1] * dim, dim)
                                    .value();
                    assertTrue(
                            chosen - best <= 4 * (dim + 2) * U * sumMagnitude,
                            "point "
                                    + i
                                    + what
                                    + ": chosen centroid at "
                                    + chosen
                                    + ", nearest at "
                                    + best);
                }
            }
        }
    }

    /** Equal centroids tie: both twins return the lowest index, across lanes and groups. */
    @Test
    void nearestCentroidBreaksTiesTowardTheLowestIndex() {
        int dim = 4;
        int k = 40;
        float[] centroids = new float[k * dim];
        for (int c = 0; c < k; c++) {
            Arrays.fill(centroids, c * dim, (c + 1) * dim, 5f); // far from the point
        }
        // Centroids 12, 17, 20 and 36 coincide and are the nearest: 12, 20 and 36 share a lane
        // (the earliest group must keep it), and 17 sits in an earlier lane than 12 (the lane
        // that comes first must not win over a lower index).
        for (int c : new int[] {36, 20, 17, 12}) {
            Arrays.fill(centroids, c * dim, (c + 1) * dim, 1f);
        }
        float[] point = {1f, 1f, 1f, 1f};
        for (VectorKernels kernel : new VectorKernels[] {Kernels.scalar(), Kernels.panama()}) {
            int[] out = new int[1];
            kernel.nearest(point, 0, 1, CentroidBlock.of(centroids, 0, k, dim), out, 0);
            assertEquals(12, out[0], kernel.name());
        }
    }

    // ---- int8 codes ---------------------------------------------------------------------------

    /**
     * {@code len} random bytes (the full range, -128 included) at {@code off}, other bytes random
     * too.
     */
    private static byte[] randomBytes(SplittableRandom rnd, int off, int len) {
        byte[] a = new byte[off + len + PAD];
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) rnd.nextInt(256);
        }
        return a;
    }

    private static long refDotInt8(byte[] a, int aOff, byte[] b, int bOff, int len) {
        long s = 0;
        for (int i = 0; i < len; i++) {
            s += (long) a[aOff + i] * b[bOff + i];
        }
        return s;
    }

    /**
     * The int8 dot product is exact and the twins return the same int: every length from 1 to 300
     * (every block and tail combination of any vector width up to 512 bits) and the long ones, at
     * random offsets, against a 64-bit reference; then the extremes (-128 times -128 throughout,
     * the largest products) and a length whose sum overflows an int, where both must wrap to the
     * same value, the exact sum modulo 2^32.
     */
    @Test
    void int8DotIsExactAndTheTwinsAgree() {
        VectorKernels s = Kernels.scalar(), p = Kernels.panama();
        SplittableRandom rnd = new SplittableRandom(16);
        int[] lengths =
                java.util.stream.IntStream.concat(
                                java.util.stream.IntStream.rangeClosed(1, 300),
                                Arrays.stream(LENGTHS))
                        .toArray();
        for (int len : lengths) {
            int aOff = rnd.nextInt(17), bOff = rnd.nextInt(17);
            byte[] a = randomBytes(rnd, aOff, len), b = randomBytes(rnd, bOff, len);
            int expected = (int) refDotInt8(a, aOff, b, bOff, len);
            assertEquals(expected, s.dotInt8(a, aOff, b, bOff, len), "scalar dotInt8 len " + len);
            assertEquals(expected, p.dotInt8(a, aOff, b, bOff, len), "panama dotInt8 len " + len);
        }
        for (int len : new int[] {384, 131_072, 140_000}) {
            byte[] a = new byte[len];
            byte[] b = new byte[len];
            Arrays.fill(a, (byte) -128);
            Arrays.fill(b, (byte) -128);
            long exact = 16_384L * len;
            assertEquals((int) exact, s.dotInt8(a, 0, b, 0, len), "scalar extremes len " + len);
            assertEquals((int) exact, p.dotInt8(a, 0, b, 0, len), "panama extremes len " + len);
            Arrays.fill(b, (byte) 127);
            assertEquals(
                    (int) (-128L * 127 * len),
                    s.dotInt8(a, 0, b, 0, len),
                    "scalar -128 * 127 len " + len);
            assertEquals(
                    (int) (-128L * 127 * len),
                    p.dotInt8(a, 0, b, 0, len),
                    "panama -128 * 127 len " + len);
        }
        assertTrue(16_384L * 140_000 > Integer.MAX_VALUE, "the last length must overflow an int");
    }

    /**
     * Exact: one non-zero byte per range, so each index must reach the sum exactly once (and none
     * beyond).
     */
    @ParameterizedTest
    @MethodSource("kernels")
    void int8DotCountsEveryPositionOnce(VectorKernels k) {
        for (int len : new int[] {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 384}) {
            for (int pos = 0; pos < len; pos++) {
                byte[] a = new byte[len + 2 * PAD];
                byte[] b = new byte[len + 2 * PAD];
                Arrays.fill(a, (byte) 100); // outside the range: a read too far changes the sum
                Arrays.fill(b, (byte) 100);
                Arrays.fill(a, PAD, PAD + len, (byte) 0);
                Arrays.fill(b, PAD, PAD + len, (byte) 1);
                a[PAD + pos] = (byte) -7;
                b[PAD + pos] = (byte) 3;
                assertEquals(
                        -21,
                        k.dotInt8(a, PAD, b, PAD, len),
                        k.name() + " len " + len + " position " + pos);
            }
        }
    }

    /**
     * The bulk form returns, row by row, the ints of the single form: every count from 0 to 9
     * (whole groups of four, and groups of one to three whose rows the Vector API twin repeats),
     * rows in any order and repeated, lengths with and without a tail, at a query offset.
     */
    @Test
    void int8BulkEqualsTheSingleFormRowByRow() {
        SplittableRandom rnd = new SplittableRandom(17);
        for (VectorKernels k : new VectorKernels[] {Kernels.scalar(), Kernels.panama()}) {
            for (int len : new int[] {1, 5, 15, 16, 17, 31, 32, 33, 64, 100, 384, 385}) {
                int stride = len + rnd.nextInt(20);
                int rowCount = 23;
                byte[] codes = randomBytes(rnd, 0, rowCount * stride + 2);
                int aOff = rnd.nextInt(9);
                byte[] a = randomBytes(rnd, aOff, len);
                for (int count = 0; count <= 9; count++) {
                    int[] rows = new int[count + 2];
                    for (int i = 0; i < rows.length; i++) {
                        rows[i] = rnd.nextInt(rowCount);
                    }
                    int[] out = new int[count + 2];
                    out[count] = 12345; // past the count: must stay
                    out[count + 1] = 12345;
                    int codesOff = count % 3; // a row header of 0 to 2 bytes
                    k.dotInt8Bulk(a, aOff, codes, codesOff, stride, rows, count, len, out);
                    for (int i = 0; i < count; i++) {
                        assertEquals(
                                (int) refDotInt8(a, aOff, codes, codesOff + rows[i] * stride, len),
                                out[i],
                                k.name() + " len " + len + " count " + count + " row " + i);
                    }
                    assertEquals(12345, out[count], k.name() + ": wrote past count " + count);
                }
            }
        }
    }
}
