package dev.nepenthe.ivfpq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.ivfpq.ScalarCodesOracle.Data;
import dev.nepenthe.ivfpq.ScalarCodesOracle.Encoded;
import dev.nepenthe.ivfpq.ScalarCodesOracle.Fixture;
import dev.nepenthe.ivfpq.ScalarCodesOracle.Stats;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.Seeds;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scalar codes against exact values as the oracle: error, bias and ranking on three kinds of data
 * and all three metrics; the exact degenerate cases; the layout; determinism; living in an {@link
 * InvertedList}; and clear refusals of bad input.
 */
class ScalarCodesTest {

    static Stream<Arguments> dataAndMetrics() {
        List<Arguments> out = new ArrayList<>();
        for (Data data : Data.values()) {
            for (Metric metric : Metric.values()) {
                out.add(Arguments.of(data, metric));
            }
        }
        return out.stream();
    }

    /**
     * Dimensions chosen to be no power of two (384, 200) and to need padding in a 64-bit word (100,
     * 200).
     */
    static int dimensionOf(Data data) {
        return switch (data) {
            case CLUSTERED -> 384;
            case UNIFORM -> 100;
            case SKEWED -> 200;
        };
    }

    /**
     * Thresholds, per code width, from the worst of 81 measured runs (3 seeds x 3 data kinds x 3
     * metrics, n=3000, 20 queries) with 25 to 30 percent margin; the measured worst is in each
     * comment. The first three do not depend on the data or the dimension; recall does, and its
     * floors are set by the hardest data (uniform noise at d=100, where neighbours are nearly
     * equidistant).
     */
    record Bounds(
            int bits,
            double scaledError,
            double slopeDeviation,
            double bias,
            double scaledRelativeError,
            double recall,
            double rerankRecall) {}

    static final Bounds[] BOUNDS = {
        // worst seen: 0.616, 0.019, 0.0029, 0.64, 0.275, 0.690. The slope's deviation at one bit
        // has a long tail on the skewed data: over 60 seeds per data kind and metric its median
        // was 0.0082 and its 95th percentile 0.0235 (a normal spread of about 0.012), and one CI
        // seed gave 0.041; 0.06 is five of those spreads (0.035, under three, failed about one CI
        // run in 40).
        new Bounds(1, 0.78, 0.06, 0.01, 0.85, 0.15, 0.55),
        // worst seen: 0.124, 0.003, 0.0002, 0.145, 0.695, 1.0
        new Bounds(4, 0.16, 0.01, 0.001, 0.19, 0.55, 0.97),
        // worst seen: 0.0122, 0.0002, 0.00002, 0.0133, 0.935, 1.0
        new Bounds(7, 0.016, 0.002, 0.0002, 0.018, 0.85, 0.99),
    };

    /**
     * A flat scan over the codes of every list (each code relative to its list's exact mean)
     * against exact values: the one estimated term {@code <s, r>} has an error bounded in
     * dimension-free units, is unbiased in offset and in scale, the metric values' mean relative
     * error is bounded, and ranking by the estimates finds the true top 10 (alone, and after an
     * exact re-rank of the top 64).
     */
    @ParameterizedTest
    @MethodSource("dataAndMetrics")
    void estimatesAgreeWithExactValues(Data data, Metric metric) {
        long seed =
                Seeds.draw(
                        "ScalarCodesTest.estimatesAgreeWithExactValues["
                                + data
                                + ", "
                                + metric
                                + "]");
        int dim = dimensionOf(data);
        Fixture fx =
                ScalarCodesOracle.fixture(
                        data, metric, seed, 3000, 20, dim, data == Data.UNIFORM ? 1 : 8);
        for (Bounds b : BOUNDS) {
            Stats st =
                    ScalarCodesOracle.compare(
                            new Encoded(fx, new ScalarCodes(dim, metric, b.bits(), seed)));
            String where =
                    data
                            + " d="
                            + dim
                            + " "
                            + metric
                            + " bits="
                            + b.bits()
                            + ": "
                            + st
                            + Seeds.replay(seed);
            System.out.println("[scalar codes] " + where);
            assertTrue(st.scaledError() <= b.scaledError(), "error of <s,r> " + where);
            assertTrue(Math.abs(st.slope() - 1) <= b.slopeDeviation(), "scale bias " + where);
            assertTrue(Math.abs(st.bias()) <= b.bias(), "offset bias " + where);
            assertTrue(
                    st.relativeError() * Math.sqrt(dim) <= b.scaledRelativeError(),
                    "relative error " + where);
            assertTrue(st.recall() >= b.recall(), "recall@10 from codes alone " + where);
            assertTrue(
                    st.rerankRecall() >= b.rerankRecall(),
                    "recall@10 after re-ranking 64 " + where);
        }
    }

    /**
     * Every width from 1 to 8 bits works (each takes its own path through the bit planes), and each
     * added bit makes the estimate better. With an 8-bit query throughout, so that the query's own
     * rounding does not hide the code's gain; measured ratios of successive errors are 0.50 to 0.55
     * up to 7 bits, and 0.64 from 7 to 8, where the query's grid, no finer than the code's, starts
     * to dominate.
     */
    @Test
    void errorShrinksWithEveryAddedBit() {
        long seed = Seeds.draw("ScalarCodesTest.errorShrinksWithEveryAddedBit");
        Fixture fx = ScalarCodesOracle.fixture(Data.CLUSTERED, Metric.L2, seed, 1500, 10, 130, 4);
        double previous = Double.MAX_VALUE;
        for (int bits = 1; bits <= 8; bits++) {
            Stats st =
                    ScalarCodesOracle.compare(
                            new Encoded(fx, new ScalarCodes(130, Metric.L2, bits, 8, seed)));
            System.out.println("[scalar codes] bits=" + bits + " queryBits=8: " + st);
            double ratio = bits == 8 ? 0.8 : 0.62;
            assertTrue(
                    st.scaledError() < ratio * previous,
                    "bits="
                            + bits
                            + ": "
                            + st.scaledError()
                            + " against "
                            + previous
                            + " at one bit fewer"
                            + Seeds.replay(seed));
            assertTrue(
                    Math.abs(st.slope() - 1) < 0.05,
                    "bits=" + bits + ": slope " + st.slope() + Seeds.replay(seed));
            previous = st.scaledError();
        }
    }

    /**
     * Every query width from 1 to 8 bits works (4 and 8 have unrolled scans of their own, the
     * others share the general one), and each added query bit makes the estimate better. With 8-bit
     * codes, so that the code's rounding does not hide the query's gain. Measured ratios of
     * successive errors: 0.43 to 0.60, 0.64 from 1 to 2 bits and 0.59 to 0.66 from 7 to 8 (there
     * the code's own grid starts to dominate); 0.0061 to 0.0063 at 8 and 8 bits.
     */
    @Test
    void errorShrinksWithEveryAddedQueryBit() {
        long seed = Seeds.draw("ScalarCodesTest.errorShrinksWithEveryAddedQueryBit");
        Fixture fx = ScalarCodesOracle.fixture(Data.CLUSTERED, Metric.DOT, seed, 1500, 10, 130, 4);
        double previous = Double.MAX_VALUE;
        for (int queryBits = 1; queryBits <= 8; queryBits++) {
            Stats st =
                    ScalarCodesOracle.compare(
                            new Encoded(fx, new ScalarCodes(130, Metric.DOT, 8, queryBits, seed)));
            System.out.println("[scalar codes] bits=8 queryBits=" + queryBits + ": " + st);
            assertTrue(
                    st.scaledError() < 0.75 * previous,
                    "queryBits="
                            + queryBits
                            + ": "
                            + st.scaledError()
                            + " against "
                            + previous
                            + " at one bit fewer"
                            + Seeds.replay(seed));
            assertTrue(
                    Math.abs(st.slope() - 1) < 0.05,
                    "queryBits=" + queryBits + ": slope " + st.slope() + Seeds.replay(seed));
            previous = st.scaledError();
        }
        assertTrue(previous < 0.009, "8-bit codes and query: " + previous + Seeds.replay(seed));
    }

    // ------------------------------------------------------------------ exact cases

    /** Vectors, queries and centres for the exact cases: {vector, query, centre}. */
    static float[][] triple(Metric metric, int dim, long seed) {
        float[][] v = Datasets.clustered(seed, 3, dim, 2, 0.5);
        return new float[][] {metric.prepare(v[0]), metric.prepare(v[1]), metric.prepare(v[2])};
    }

    static float[] encodeAndScore(
            ScalarCodes codes, float[] vector, float[] query, float[] centre) {
        ScalarCodes.Centre c = codes.centre(centre, 0);
        byte[] entry = new byte[codes.bytesPerVector()];
        codes.encoder().encode(vector, 0, c, entry, 0);
        ScalarQueryScorer scorer = codes.scorer();
        scorer.setQuery(query);
        scorer.setList(c);
        float[] out = new float[1];
        scorer.score(entry, 0, 1, out, 0);
        return out;
    }

    /**
     * A vector equal to its centre estimates exactly at every width: |q - c|^2, or <q, c> for dot.
     */
    @ParameterizedTest
    @EnumSource(Metric.class)
    void vectorEqualToItsCentreIsExact(Metric metric) {
        for (int dim : new int[] {1, 3, 100, 384}) {
            float[][] t = triple(metric, dim, dim);
            float[] centre = t[0];
            float[] query = t[1];
            for (int bits : new int[] {1, 4, 7, 8}) {
                ScalarCodes codes = new ScalarCodes(dim, metric, bits, 11);
                float est = encodeAndScore(codes, centre.clone(), query, centre)[0];
                double exact = ScalarCodesOracle.exact(metric, query, centre);
                assertEquals(
                        exact,
                        est,
                        1e-5 * Math.max(1, Math.abs(exact)),
                        metric + " dim " + dim + " bits " + bits);
                ScalarCodes.Centre c = codes.centre(centre, 0);
                byte[] entry = new byte[codes.bytesPerVector()];
                codes.encoder().encode(centre, 0, c, entry, 0);
                assertEquals(0f, codes.lowerOf(entry, 0));
                assertEquals(0f, codes.stepOf(entry, 0));
                assertEquals(0f, codes.exactTermOf(entry, 0));
                assertEquals(0, codes.levelSumOf(entry, 0));
            }
        }
    }

    /** A query equal to the list's centre estimates exactly: |x - c|^2, or <c, x> for dot. */
    @ParameterizedTest
    @EnumSource(Metric.class)
    void queryEqualToTheCentreIsExact(Metric metric) {
        for (int dim : new int[] {1, 3, 100, 384}) {
            float[][] t = triple(metric, dim, dim + 1);
            float[] vector = t[0];
            float[] centre = t[2];
            for (int bits : new int[] {1, 4, 7}) {
                float est =
                        encodeAndScore(
                                new ScalarCodes(dim, metric, bits, 12),
                                vector,
                                centre.clone(),
                                centre)[0];
                double exact = ScalarCodesOracle.exact(metric, centre, vector);
                assertEquals(
                        exact,
                        est,
                        1e-5 * Math.max(1, Math.abs(exact)),
                        metric + " dim " + dim + " bits " + bits);
            }
        }
    }

    /**
     * Zero vectors (L2 and dot allow them) as vector, query or centre give finite, sensible
     * estimates.
     */
    @ParameterizedTest
    @ValueSource(strings = {"L2", "DOT"})
    void zeroVectorsAreHandled(String name) {
        Metric metric = Metric.parse(name);
        int dim = 100;
        float[] zero = new float[dim];
        float[][] t = triple(metric, dim, 5);
        ScalarCodes codes = new ScalarCodes(dim, metric, 8, 8, 13);
        // Zero vector against a non-zero centre: r = -c, an ordinary code, estimated as closely
        // as any other at 8 bits (measured 0.002 |s||r|).
        float est = encodeAndScore(codes, zero, t[1], t[2])[0];
        double exact = ScalarCodesOracle.exact(metric, t[1], zero);
        double s = Math.sqrt(ScalarCodesOracle.exact(Metric.L2, t[1], t[2]));
        double r = Math.sqrt(ScalarCodesOracle.exact(Metric.L2, zero, t[2]));
        assertEquals(exact, est, 2 * 0.01 * s * r, "zero vector");
        // Everything zero: the estimate is exact.
        assertEquals(0f, encodeAndScore(codes, zero, zero, zero)[0]);
        // Zero query and zero centre, ordinary vector: |x|^2 or 0.
        float e2 = encodeAndScore(codes, t[0], zero, zero)[0];
        assertEquals(
                ScalarCodesOracle.exact(metric, zero, t[0]), e2, 1e-4 * Math.max(1, Math.abs(e2)));
    }

    /**
     * Tiny and awkward dimensions (one component, word boundaries) encode and score; at 8 bits
     * nearly exactly.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5, 63, 64, 65, 127, 129})
    void smallAndOddDimensions(int dim) {
        long seed = Seeds.draw("ScalarCodesTest.smallAndOddDimensions[" + dim + "]");
        float[][] v = Datasets.clustered(seed, 40, dim, 3, 0.4);
        float[] centre =
                ScalarCodesOracle.mean(v, java.util.stream.IntStream.range(0, 30).toArray(), dim);
        ScalarCodes codes = new ScalarCodes(dim, Metric.L2, 8, seed);
        assertEquals(
                8 * ((dim + 63) / 64) * 8 + ScalarCodes.CORRECTION_BYTES, codes.bytesPerVector());
        for (int i = 0; i < 30; i++) {
            float est = encodeAndScore(codes, v[i], v[30 + i % 10], centre)[0];
            double exact = ScalarCodesOracle.exact(Metric.L2, v[30 + i % 10], v[i]);
            double s =
                    Math.sqrt(
                            ScalarCodesOracle.exact(Metric.L2, v[30 + i % 10], centre)
                                    * ScalarCodesOracle.exact(Metric.L2, v[i], centre));
            // Two 8-bit grids: a few hundredths of |s||r| in the worst case at d=1.
            assertEquals(
                    exact,
                    est,
                    0.05 * s + 1e-5,
                    "dim " + dim + " vector " + i + Seeds.replay(seed));
        }
    }

    // ------------------------------------------------------------------ layout and determinism

    /**
     * Levels read back from the bit planes are in range and sum to the stored sum; padding bits are
     * zero.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4, 7, 8})
    void entryLayout(int bits) {
        int dim = 100;
        ScalarCodes codes = new ScalarCodes(dim, Metric.L2, bits, 3);
        assertEquals(bits * 2 * 8 + 16, codes.bytesPerVector(), "two words per plane at d=100");
        float[][] v = Datasets.clustered(4, 20, dim, 2, 0.3);
        ScalarCodes.Centre c =
                codes.centre(
                        ScalarCodesOracle.mean(
                                v, java.util.stream.IntStream.range(0, 20).toArray(), dim),
                        0);
        byte[] entries = new byte[20 * codes.bytesPerVector()];
        ScalarEncoder enc = codes.encoder();
        boolean topLevelSeen = false;
        for (int i = 0; i < 20; i++) {
            int off = i * codes.bytesPerVector();
            enc.encode(v[i], 0, c, entries, off);
            int sum = 0;
            for (int d = 0; d < dim; d++) {
                int level = codes.levelOf(entries, off, d);
                assertTrue(level >= 0 && level < 1 << bits, "level " + level);
                topLevelSeen |= level == (1 << bits) - 1;
                sum += level;
            }
            assertEquals(sum, codes.levelSumOf(entries, off), "level sum of entry " + i);
            for (int p = 0; p < bits; p++) {
                // Dimensions 100..127 of the second word of every plane are padding.
                long word =
                        java.nio.ByteBuffer.wrap(entries, off + (p * 2 + 1) * 8, 8)
                                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                                .getLong();
                assertEquals(
                        0L, word >>> (100 - 64), "padding bits of plane " + p + ", entry " + i);
            }
            assertTrue(
                    codes.stepOf(entries, off) > 0 && Float.isFinite(codes.lowerOf(entries, off)));
            assertTrue(codes.exactTermOf(entries, off) > 0, "|x - c|^2 of a vector off its centre");
        }
        assertTrue(topLevelSeen, "the grid's top level is used");
    }

    /** Encoding a whole list equals encoding its vectors one by one, byte for byte. */
    @Test
    void encodeListEqualsOneByOne() {
        int dim = 384;
        float[][] v = Datasets.clustered(8, 50, dim, 3, 0.3);
        float[] block = new float[60 * dim];
        int[] offsets = new int[50];
        for (int i = 0; i < 50; i++) {
            offsets[i] = (49 - i) * dim + 7; // out of order and unaligned
            System.arraycopy(v[i], 0, block, offsets[i], dim);
        }
        for (Metric metric : new Metric[] {Metric.L2, Metric.DOT}) {
            ScalarCodes codes = new ScalarCodes(dim, metric, 4, 21);
            ScalarCodes.Centre c =
                    codes.centre(
                            ScalarCodesOracle.mean(
                                    v, java.util.stream.IntStream.range(0, 50).toArray(), dim),
                            0);
            int bpv = codes.bytesPerVector();
            byte[] listed = new byte[3 + 50 * bpv];
            codes.encoder().encodeList(block, offsets, 50, c, listed, 3);
            byte[] single = new byte[bpv];
            ScalarEncoder enc = codes.encoder();
            for (int i = 0; i < 50; i++) {
                enc.encode(v[i], 0, c, single, 0);
                assertArrayEquals(
                        single,
                        Arrays.copyOfRange(listed, 3 + i * bpv, 3 + (i + 1) * bpv),
                        "entry " + i);
            }
        }
    }

    /**
     * A code is a function of the vector, its centre and the seed only: the influence rule's
     * premise. Two codecs with the same seed give the same bytes, whatever else they encoded before
     * (scratch reuse leaks nothing); a centre rebuilt from the same floats gives the same codes
     * (what a saved index needs); another seed gives other bytes.
     */
    @Test
    void codesDependOnVectorCentreAndSeedOnly() {
        int dim = 200;
        float[][] v = Datasets.clustered(9, 30, dim, 2, 0.3);
        float[] mean =
                ScalarCodesOracle.mean(v, java.util.stream.IntStream.range(0, 30).toArray(), dim);
        ScalarCodes a = new ScalarCodes(dim, Metric.L2, 4, 77);
        ScalarCodes b = new ScalarCodes(dim, Metric.L2, 4, 77);
        ScalarCodes other = new ScalarCodes(dim, Metric.L2, 4, 78);
        ScalarEncoder busy = a.encoder();
        byte[] sink = new byte[a.bytesPerVector()];
        ScalarCodes.Centre unrelated = a.centre(v[5], 0);
        for (int i = 0; i < 30; i++) {
            busy.encode(v[i], 0, unrelated, sink, 0);
        }
        ScalarCodes.Centre ca = a.centre(mean, 0);
        ScalarCodes.Centre cb = b.centre(ca.centroid(), 0);
        byte[] ea = new byte[a.bytesPerVector()];
        byte[] eb = new byte[b.bytesPerVector()];
        byte[] eo = new byte[other.bytesPerVector()];
        for (int i = 0; i < 30; i++) {
            busy.encode(v[i], 0, ca, ea, 0);
            b.encoder().encode(v[i], 0, cb, eb, 0);
            other.encoder().encode(v[i], 0, other.centre(mean, 0), eo, 0);
            assertArrayEquals(ea, eb, "vector " + i);
            assertFalse(
                    Arrays.equals(ea, eo),
                    "another seed, another rotation, other levels (vector " + i + ")");
        }
    }

    /**
     * The influence rule's re-encoding: after a member leaves, the list is re-encoded against the
     * mean of the survivors, and the result is byte for byte what a list that never held the
     * removed vector would hold.
     */
    @Test
    void reencodingAgainstTheSurvivorsMeanForgetsTheRemovedMember() {
        int dim = 384;
        float[][] v = Datasets.clustered(12, 40, dim, 1, 0.3);
        ScalarCodes codes = new ScalarCodes(dim, Metric.COSINE, 1, 5);
        for (int i = 0; i < v.length; i++) {
            v[i] = Metric.COSINE.prepare(v[i]);
        }
        float[] block = new float[40 * dim];
        for (int i = 0; i < 40; i++) {
            System.arraycopy(v[i], 0, block, i * dim, dim);
        }
        int bpv = codes.bytesPerVector();
        // The list with all 40 members, then member 17 removed: survivors re-encoded against their
        // mean.
        int[] survivors = java.util.stream.IntStream.range(0, 40).filter(i -> i != 17).toArray();
        ScalarCodes.Centre before =
                codes.centre(
                        ScalarCodesOracle.mean(
                                v, java.util.stream.IntStream.range(0, 40).toArray(), dim),
                        0);
        byte[] old = new byte[40 * bpv];
        int[] all = java.util.stream.IntStream.range(0, 40).map(i -> i * dim).toArray();
        codes.encoder().encodeList(block, all, 40, before, old, 0);
        ScalarCodes.Centre after = codes.centre(ScalarCodesOracle.mean(v, survivors, dim), 0);
        before.wipe();
        assertThrows(
                IllegalArgumentException.class,
                () -> codes.encoder().encode(v[0], 0, before, new byte[bpv], 0),
                "a wiped centre is refused");
        byte[] reencoded = new byte[39 * bpv];
        int[] offsets = Arrays.stream(survivors).map(i -> i * dim).toArray();
        codes.encoder().encodeList(block, offsets, 39, after, reencoded, 0);
        // A list that never held member 17, from a codec of its own.
        ScalarCodes fresh = new ScalarCodes(dim, Metric.COSINE, 1, 5);
        byte[] never = new byte[39 * bpv];
        fresh.encoder()
                .encodeList(
                        block,
                        offsets,
                        39,
                        fresh.centre(ScalarCodesOracle.mean(v, survivors, dim), 0),
                        never,
                        0);
        assertArrayEquals(never, reencoded);
        assertFalse(
                Arrays.equals(Arrays.copyOf(old, 39 * bpv), reencoded),
                "the old codes were relative to a centre that moved");
    }

    /**
     * Entries live in an {@link InvertedList} unchanged ({@code m = bytesPerVector()}): after
     * swap-removals the survivors score exactly as before, bit for bit, and the freed bytes are
     * zero.
     */
    @Test
    void entriesLiveInAnInvertedListWithSwapRemove() {
        long seed = Seeds.draw("ScalarCodesTest.entriesLiveInAnInvertedListWithSwapRemove");
        int dim = 384;
        float[][] v = Datasets.clustered(seed, 101, dim, 2, 0.3);
        ScalarCodes codes = new ScalarCodes(dim, Metric.L2, 1, seed);
        ScalarCodes.Centre c =
                codes.centre(
                        ScalarCodesOracle.mean(
                                v, java.util.stream.IntStream.range(0, 100).toArray(), dim),
                        0);
        int bpv = codes.bytesPerVector();
        InvertedList list = new InvertedList(bpv);
        byte[] entry = new byte[bpv];
        ScalarEncoder enc = codes.encoder();
        for (int i = 0; i < 100; i++) {
            enc.encode(v[i], 0, c, entry, 0);
            list.append(1000 + i, entry, 0);
        }
        ScalarQueryScorer scorer = codes.scorer();
        scorer.setQuery(v[100]);
        scorer.setList(c);
        float[] before = new float[100];
        scorer.score(list.codes(), 0, 100, before, 0);
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int r = 0; r < 37; r++) {
            list.removeAt(rnd.nextInt(list.size()));
        }
        assertEquals(0, list.nonZeroFreedBytes(), "freed entries zeroed" + Seeds.replay(seed));
        float[] after = new float[list.size()];
        scorer.score(list.codes(), 0, list.size(), after, 0);
        for (int pos = 0; pos < list.size(); pos++) {
            int i = list.ordinalAt(pos) - 1000;
            assertEquals(
                    before[i], after[pos], "ordinal " + list.ordinalAt(pos) + Seeds.replay(seed));
        }
    }

    /**
     * One scorer serves many lists and queries: each setList re-prepares, each setQuery re-rotates.
     */
    @Test
    void scorerIsReusableAcrossListsAndQueries() {
        int dim = 100;
        float[][] v = Datasets.clustered(14, 60, dim, 2, 0.3);
        ScalarCodes codes = new ScalarCodes(dim, Metric.DOT, 4, 15);
        ScalarCodes.Centre c1 = codes.centre(v[50], 0);
        ScalarCodes.Centre c2 = codes.centre(v[51], 0);
        byte[] e = new byte[codes.bytesPerVector()];
        codes.encoder().encode(v[0], 0, c1, e, 0);
        byte[] f = new byte[codes.bytesPerVector()];
        codes.encoder().encode(v[1], 0, c2, f, 0);
        ScalarQueryScorer shared = codes.scorer();
        float[] out = new float[1];
        float[] expected = new float[4];
        float[] got = new float[4];
        int k = 0;
        for (float[] q : new float[][] {v[55], v[56]}) {
            for (int list = 0; list < 2; list++) {
                ScalarQueryScorer fresh = codes.scorer();
                fresh.setQuery(q);
                fresh.setList(list == 0 ? c1 : c2);
                fresh.score(list == 0 ? e : f, 0, 1, out, 0);
                expected[k] = out[0];
                shared.setQuery(q);
                shared.setList(list == 0 ? c1 : c2);
                shared.score(list == 0 ? e : f, 0, 1, out, 0);
                got[k++] = out[0];
            }
        }
        assertArrayEquals(expected, got);
    }

    // ------------------------------------------------------------------ bad input

    static void refuses(String fragment, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(
                e.getMessage().contains(fragment),
                "expected '" + fragment + "' in: " + e.getMessage());
    }

    @Test
    void badInputIsRefusedWithAClearMessage() {
        refuses("dimension > 0, got 0", () -> new ScalarCodes(0, Metric.L2, 1, 1));
        refuses("expected a metric, got null", () -> new ScalarCodes(8, null, 1, 1));
        refuses("bits in [1, 8], got 0", () -> new ScalarCodes(8, Metric.L2, 0, 1));
        refuses("bits in [1, 8], got 9", () -> new ScalarCodes(8, Metric.L2, 9, 1));
        refuses("queryBits in [1, 8], got 0", () -> new ScalarCodes(8, Metric.L2, 4, 0, 1));
        refuses("queryBits in [1, 8], got 9", () -> new ScalarCodes(8, Metric.L2, 4, 9, 1));

        ScalarCodes codes = new ScalarCodes(8, Metric.L2, 4, 1);
        float[] ok = {1, 2, 3, 4, 5, 6, 7, 8};
        refuses(
                "centroid expected dimension 8 from offset 0, got 7",
                () -> codes.centre(new float[7], 0));
        refuses(
                "centroid expected dimension 8 from offset 3",
                () -> codes.centre(new float[10], 3));
        refuses(
                "centroid component 2 is NaN",
                () -> codes.centre(new float[] {0, 0, Float.NaN, 0, 0, 0, 0, 0}, 0));
        ScalarCodes.Centre c = codes.centre(ok, 0);
        ScalarEncoder enc = codes.encoder();
        byte[] entry = new byte[codes.bytesPerVector()];
        refuses(
                "vector expected dimension 8 from offset 0, got 7",
                () -> enc.encode(new float[7], 0, c, entry, 0));
        refuses(
                "vector expected dimension 8 from offset 2, got 7",
                () -> enc.encode(new float[9], 2, c, entry, 0));
        refuses(
                "vector has a non-finite component",
                () ->
                        enc.encode(
                                new float[] {0, Float.POSITIVE_INFINITY, 0, 0, 0, 0, 0, 0},
                                0,
                                c,
                                entry,
                                0));
        refuses(
                "do not fit in " + (codes.bytesPerVector() - 1) + " bytes",
                () -> enc.encode(ok, 0, c, new byte[codes.bytesPerVector() - 1], 0));
        ScalarCodes otherCodes = new ScalarCodes(8, Metric.L2, 4, 2);
        refuses("made by other codes", () -> enc.encode(ok, 0, otherCodes.centre(ok, 0), entry, 0));
        refuses("made by nobody (null)", () -> enc.encode(ok, 0, null, entry, 0));
        ScalarCodes.Centre wiped = codes.centre(ok, 0);
        wiped.wipe();
        refuses("the centre was wiped", () -> enc.encode(ok, 0, wiped, entry, 0));
        refuses(
                "expected 3 vector offsets, got 2",
                () ->
                        enc.encodeList(
                                new float[24],
                                new int[2],
                                3,
                                c,
                                new byte[3 * codes.bytesPerVector()],
                                0));
        refuses(
                "vector 1 expected dimension 8 from offset 20",
                () ->
                        enc.encodeList(
                                new float[24],
                                new int[] {0, 20},
                                2,
                                c,
                                new byte[2 * codes.bytesPerVector()],
                                0));

        ScalarQueryScorer scorer = codes.scorer();
        IllegalStateException early =
                assertThrows(IllegalStateException.class, () -> scorer.setList(c));
        assertTrue(
                early.getMessage().contains("setQuery must come before setList"),
                early.getMessage());
        refuses(
                "query expected dimension 8 from offset 0, got 7",
                () -> scorer.setQuery(new float[7]));
        refuses(
                "query component 0 is NaN",
                () -> scorer.setQuery(new float[] {Float.NaN, 0, 0, 0, 0, 0, 0, 0}));
        scorer.setQuery(ok);
        IllegalStateException noList =
                assertThrows(
                        IllegalStateException.class,
                        () -> scorer.score(entry, 0, 1, new float[1], 0));
        assertTrue(
                noList.getMessage().contains("setList must come before score"),
                noList.getMessage());
        refuses("made by other codes", () -> scorer.setList(otherCodes.centre(ok, 0)));
        scorer.setList(c);
        refuses(
                "2 entries of " + codes.bytesPerVector() + " bytes from offset 0 do not fit",
                () -> scorer.score(entry, 0, 2, new float[2], 0));
        refuses(
                "2 scores from offset 0 do not fit in 1 floats",
                () -> scorer.score(new byte[2 * codes.bytesPerVector()], 0, 2, new float[1], 0));
    }

    /**
     * The unrolled popcount paths for 4- and 8-bit queries (an 8-bit query is scored as two 4-bit
     * halves) give exactly the integer the plain loop over every plane pair gives, for every code
     * width and a dimension with a partial last word.
     */
    @Test
    void unrolledLevelDotsEqualThePlainLoop() {
        long seed = Seeds.draw("ScalarCodesTest.unrolledLevelDotsEqualThePlainLoop");
        SplittableRandom rnd = new SplittableRandom(seed);
        int dim = 130;
        for (int queryBits : new int[] {4, 8}) {
            for (int bits = 1; bits <= 8; bits++) {
                ScalarCodes codes = new ScalarCodes(dim, Metric.L2, bits, queryBits, seed);
                float[] centroid = randomVector(rnd, dim);
                ScalarCodes.Centre centre = codes.centre(centroid, 0);
                int n = 20;
                byte[] entries = new byte[n * codes.bytesPerVector()];
                ScalarEncoder encoder = codes.encoder();
                for (int i = 0; i < n; i++) {
                    float[] v = randomVector(rnd, dim);
                    encoder.encode(v, 0, centre, entries, i * codes.bytesPerVector());
                }
                ScalarQueryScorer scorer = codes.scorer();
                scorer.setQuery(randomVector(rnd, dim));
                scorer.setList(centre);
                for (int i = 0; i < n; i++) {
                    int entry = i * codes.bytesPerVector();
                    assertEquals(
                            scorer.levelDotAnyWidth(entries, entry),
                            scorer.levelDot(entries, entry),
                            "bits="
                                    + bits
                                    + " queryBits="
                                    + queryBits
                                    + " entry "
                                    + i
                                    + Seeds.replay(seed));
                }
            }
        }
    }

    private static float[] randomVector(SplittableRandom rnd, int dim) {
        float[] v = new float[dim];
        for (int d = 0; d < dim; d++) {
            v[d] = (float) rnd.nextGaussian();
        }
        return v;
    }
}
