package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Filter;
import dev.nepenthe.testing.Seeds;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/**
 * Numeric ranges and comparisons answered from the order tries alone, against {@link Filter#test}
 * on each value (which {@code FilterTest} checks against exact BigDecimal comparisons): values over
 * the whole range of longs and doubles, crowded where the two part (2^53, 2^63, -0.0), and bounds
 * of both kinds, included or not, infinities too. No record's metadata may be read.
 */
class MetadataIndexTest {

    private static final double[] EDGES = {
        0.0,
        -0.0,
        0.5,
        -0.5,
        0x1p52,
        0x1p53,
        0x1p62,
        0x1p63,
        -0x1p63,
        0x1p64,
        -0x1p64,
        Double.MAX_VALUE,
        -Double.MAX_VALUE,
        Double.MIN_VALUE,
        1e300,
        -1e-300,
        9.223372036854774784E18
    };

    private static Number randomNumber(Random rnd) {
        return switch (rnd.nextInt(10)) {
            case 0 -> rnd.nextLong();
            case 1 -> (long) rnd.nextInt(41) - 20;
            case 2 -> (1L << 53) + rnd.nextInt(7) - 3;
            case 3 ->
                    rnd.nextBoolean()
                            ? Long.MAX_VALUE - rnd.nextInt(3)
                            : Long.MIN_VALUE + rnd.nextInt(3);
            case 4 -> (rnd.nextInt(41) - 20) / 4.0;
            case 5 -> EDGES[rnd.nextInt(EDGES.length)];
            case 6 ->
                    Double.longBitsToDouble(rnd.nextLong() & 0x7fefffffffffffffL)
                            * (rnd.nextBoolean() ? 1 : -1);
            case 7 -> (double) ((1L << 53) + rnd.nextInt(7) - 3);
            case 8 -> rnd.nextGaussian() * 1e6;
            default -> (double) (rnd.nextInt(41) - 20);
        };
    }

    private static Filter randomNumericFilter(Random rnd) {
        Number b = randomNumber(rnd);
        return switch (rnd.nextInt(6)) {
            case 0 -> Filter.gt("n", b);
            case 1 -> Filter.gte("n", b);
            case 2 -> Filter.lt("n", b);
            case 3 -> Filter.lte("n", b);
            case 4 -> {
                double x =
                        rnd.nextInt(4) == 0
                                ? Double.NEGATIVE_INFINITY
                                : randomNumber(rnd).doubleValue();
                double y =
                        rnd.nextInt(4) == 0
                                ? Double.POSITIVE_INFINITY
                                : randomNumber(rnd).doubleValue();
                yield Filter.range("n", Math.min(x, y), Math.max(x, y));
            }
            default -> Filter.range("n", b.doubleValue(), b.doubleValue());
        };
    }

    @Test
    void numericRangesAndComparisonsFromTheTriesMatchTest() {
        long seed =
                Seeds.draw("MetadataIndexTest.numericRangesAndComparisonsFromTheTriesMatchTest");
        Random rnd = new Random(seed);
        MetadataIndex index = new MetadataIndex(TestHashes.fresh());
        List<Map<String, Object>> metadata = new ArrayList<>();
        List<long[]> kept = new ArrayList<>();
        RoaringBitmap all = new RoaringBitmap();
        for (int ord = 0; ord < 3000; ord++) {
            // A few records hold a string or nothing at "n": a comparison never matches those.
            Map<String, Object> m =
                    switch (rnd.nextInt(20)) {
                        case 0 -> Map.of("n", "12");
                        case 1 -> Map.of("other", 1L);
                        default -> Map.of("n", randomNumber(rnd));
                    };
            metadata.add(m);
            MetadataIndex.Keys keys = index.keysOf(m);
            index.add(ord, keys);
            kept.add(keys.kept());
            all.add(ord);
        }
        index.publish();
        int matchedSome = 0;
        int notAll = 0;
        for (int trial = 0; trial < 4000; trial++) {
            if (trial == 3000) {
                // Half the records unlinked by the keys their entries keep: the coarser buckets
                // are left through the links, and what remains answers for the survivors.
                for (int ord = 0; ord < metadata.size(); ord += 2) {
                    index.remove(ord, kept.get(ord));
                    all.remove(ord);
                }
                index.publish();
            }
            Filter f = randomNumericFilter(rnd);
            RoaringBitmap expected = new RoaringBitmap();
            for (int ord = 0; ord < metadata.size(); ord++) {
                if (all.contains(ord) && f.test(metadata.get(ord))) {
                    expected.add(ord);
                }
            }
            RoaringBitmap got =
                    index.matching(
                            f,
                            all,
                            index::publishedView,
                            ord -> {
                                throw new AssertionError(
                                        "a numeric filter read a record's metadata");
                            });
            assertEquals(expected, got, "trial " + trial + ": " + f + Seeds.replay(seed));
            matchedSome += expected.isEmpty() ? 0 : 1;
            notAll += expected.getCardinality() < metadata.size() ? 1 : 0;
        }
        assertTrue(
                matchedSome > 1000 && notAll > 1000,
                matchedSome + " matched some, " + notAll + " not all" + Seeds.replay(seed));
        Map<MetadataIndex.Key, RoaringBitmap> expected = new java.util.HashMap<>();
        all.forEach((int ord) -> index.expect(expected, ord, kept.get(ord)));
        assertTrue(
                index.holdsExactly(expected), "the survivors' keys and links" + Seeds.replay(seed));
        all.forEach((int ord) -> index.remove(ord, kept.get(ord)));
        index.publish();
        assertEquals(
                0, index.size(), "keys left after every record was unlinked" + Seeds.replay(seed));
        assertTrue(
                index.holdsExactly(Map.of()),
                "a link left after every record was unlinked" + Seeds.replay(seed));
    }

    /**
     * An open's shared keys give every record the keys it would get alone: values that repeat,
     * numbers that share buckets, and values equal as numbers but of other types (3 and 3.0, 0 and
     * -0.0), which the memo holds apart.
     */
    @Test
    void theOpensSharedKeysAreTheKeysEachRecordGetsAlone() {
        long seed = Seeds.draw("MetadataIndexTest.theOpensSharedKeysAreTheKeysEachRecordGetsAlone");
        Random rnd = new Random(seed);
        dev.nepenthe.core.internal.crypto.KeyedHash hashes = TestHashes.fresh();
        MetadataIndex index = new MetadataIndex(hashes);
        // The same records linked one by one, and as an open links them: in bulk, by shared keys.
        MetadataIndex opened = new MetadataIndex(hashes);
        opened.startBulk();
        OpenMemo memo = new OpenMemo();
        Object[] alike = {3L, 3.0, 0L, 0.0, -0.0, true, false, "3", "0"};
        List<long[]> kept = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            Map<String, Object> m =
                    Map.of(
                            "n",
                            randomNumber(rnd),
                            "year",
                            1990L + rnd.nextInt(35),
                            "s",
                            "v" + rnd.nextInt(9),
                            "k",
                            alike[rnd.nextInt(alike.length)],
                            "t",
                            "doc " + rnd.nextInt(50) + " of part-" + rnd.nextInt(4));
            MetadataIndex.Keys alone = index.keysOf(m);
            MetadataIndex.Keys shared = index.keysOf(m, memo);
            assertArrayEqualsSeeded(
                    alone.kept(), shared.kept(), "record " + i + "'s kept keys", seed);
            assertEquals(
                    alone.values().length,
                    shared.values().length,
                    "record " + i + "'s values" + Seeds.replay(seed));
            for (int v = 0; v < alone.values().length; v++) {
                org.junit.jupiter.api.Assertions.assertArrayEquals(
                        alone.values()[v].kept(),
                        shared.values()[v].kept(),
                        "record " + i + ", value " + v + Seeds.replay(seed));
                org.junit.jupiter.api.Assertions.assertArrayEquals(
                        alone.values()[v].chain(),
                        shared.values()[v].chain(),
                        "record " + i + ", value " + v + "'s chain" + Seeds.replay(seed));
            }
            index.add(i, alone);
            opened.add(i, shared);
            kept.add(alone.kept());
        }
        index.publish();
        opened.endBulk();
        opened.publish();
        Map<MetadataIndex.Key, RoaringBitmap> expected = new java.util.HashMap<>();
        for (int i = 0; i < kept.size(); i++) {
            index.expect(expected, i, kept.get(i));
        }
        assertTrue(
                index.holdsExactly(expected),
                "the index linked record by record" + Seeds.replay(seed));
        assertTrue(opened.holdsExactly(expected), "the index linked in bulk" + Seeds.replay(seed));
    }

    private static void assertArrayEqualsSeeded(
            long[] expected, long[] got, String what, long seed) {
        org.junit.jupiter.api.Assertions.assertArrayEquals(
                expected, got, what + Seeds.replay(seed));
    }
}
