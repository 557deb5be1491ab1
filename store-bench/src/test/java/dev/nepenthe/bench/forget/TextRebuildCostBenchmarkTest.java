package dev.nepenthe.bench.forget;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The text rebuild-cost benchmark's smoke, as CI runs it: a few hundred texts through the set-up,
 * the timed method and the check JMH would call; and the check's control, a repair that removed
 * nothing, fails it.
 */
class TextRebuildCostBenchmarkTest {

    private static TextRebuildCostBenchmark tiny(String removed, String how) throws Exception {
        TextRebuildCostBenchmark b = new TextRebuildCostBenchmark();
        b.index = "text";
        b.n = 400;
        b.removed = removed;
        b.how = how;
        b.setUp();
        return b;
    }

    @ParameterizedTest
    @CsvSource({"1,repair", "10%,repair", "1,rebuild", "10%,rebuild"})
    void everyInvocationPassesItsOwnCheck(String removed, String how) throws Exception {
        TextRebuildCostBenchmark b = tiny(removed, how);
        try {
            for (int round = 0; round < 2; round++) {
                b.buildWhole();
                b.forget();
                b.check(); // throws when the result is wrong
            }
        } finally {
            b.tearDown();
        }
    }

    @ParameterizedTest
    @CsvSource({"1", "10%"})
    void aRepairThatRemovedNothingFailsTheCheck(String removed) throws Exception {
        TextRebuildCostBenchmark b = tiny(removed, "repair");
        try {
            b.buildWhole();
            b.skipTheWorkForTheControl();
            IllegalStateException e = assertThrows(IllegalStateException.class, b::check);
            int survivors = 400 - RebuildCostBenchmark.count(removed, 400);
            assertTrue(
                    e.getMessage().contains("expected " + survivors + " documents, found 400"),
                    e.getMessage());
        } finally {
            b.tearDown();
        }
    }
}
