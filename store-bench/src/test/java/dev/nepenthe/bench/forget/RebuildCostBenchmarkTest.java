package dev.nepenthe.bench.forget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.index.VectorIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The rebuild-cost benchmark's smoke, as CI runs it: every index, fraction and strategy on a few
 * hundred vectors, through the set-up, the timed method and the check JMH would call, so the
 * benchmark cannot rot; and the check's control, a "repair" that removed nothing, fails it.
 */
class RebuildCostBenchmarkTest {

    private static RebuildCostBenchmark tiny(String index, String removed, String how)
            throws Exception {
        RebuildCostBenchmark b = new RebuildCostBenchmark();
        b.index = index;
        b.n = 600;
        b.dim = 16;
        b.removed = removed;
        b.how = how;
        b.setUp();
        return b;
    }

    @ParameterizedTest
    @CsvSource({
        "hnsw,1,repair",
        "hnsw,10%,repair",
        "hnsw,10%,rebuild",
        "ivfpq,1,repair",
        "ivfpq,10%,repair",
        "ivfpq,10%,rebuild"
    })
    void everyInvocationPassesItsOwnCheck(String index, String removed, String how)
            throws Exception {
        RebuildCostBenchmark b = tiny(index, removed, how);
        for (int round = 0; round < 2; round++) {
            b.copyBuilt();
            VectorIndex out = b.forget();
            assertEquals(600 - RebuildCostBenchmark.count(removed, 600), out.size());
            b.check(); // throws when the result is wrong
        }
    }

    @ParameterizedTest
    @CsvSource({"hnsw", "ivfpq"})
    void aRepairThatRemovedNothingFailsTheCheck(String index) throws Exception {
        RebuildCostBenchmark b = tiny(index, "1%", "repair");
        b.copyBuilt();
        b.skipTheWorkForTheControl();
        IllegalStateException e = assertThrows(IllegalStateException.class, b::check);
        assertTrue(e.getMessage().contains("is still live"), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource({"hnsw", "ivfpq"})
    void aResultWithItsRowsMixedUpFailsTheRecallCheck(String index) throws Exception {
        RebuildCostBenchmark b = tiny(index, "1%", "rebuild");
        b.shiftTheVectorsForTheControl();
        IllegalStateException e = assertThrows(IllegalStateException.class, b::check);
        assertTrue(e.getMessage().contains("below the fresh build's"), e.getMessage());
    }

    @Test
    void removedCountsAndPercentagesAreReadOrRefused() {
        assertEquals(1, RebuildCostBenchmark.count("1", 20_000));
        assertEquals(20, RebuildCostBenchmark.count("0.1%", 20_000));
        assertEquals(2_000, RebuildCostBenchmark.count("10%", 20_000));
        assertEquals(1, RebuildCostBenchmark.count("0.1%", 100)); // at least one record
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> RebuildCostBenchmark.count("ten", 100));
        assertTrue(e.getMessage().contains("got 'ten'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RebuildCostBenchmark.count("100%", 100));
    }
}
