package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The replacement ring answers "what moved after stamp s" exactly while it holds every such move,
 * and says it cannot (null) once they may have been overwritten: a search then runs again rather
 * than trust a partial answer.
 */
class ReplacementLogTest {

    @Test
    void movesAfterAStampOldestFirstAndNullOnceTheRingWrappedPastThem() {
        ReplacementLog log = new ReplacementLog();
        assertEquals(List.of(), log.since(0), "an empty ring: nothing moved");
        for (int i = 1; i <= 10; i++) {
            log.append(i * 2L, i, 100 + i); // stamps 2, 4, ..., 20
        }
        assertEquals(
                List.of(new ReplacementLog.Move(18, 9, 109), new ReplacementLog.Move(20, 10, 110)),
                log.since(16));
        assertEquals(
                List.of(new ReplacementLog.Move(18, 9, 109), new ReplacementLog.Move(20, 10, 110)),
                log.since(17));
        assertEquals(List.of(), log.since(20));
        assertEquals(10, log.since(0).size(), "every move, while the ring never wrapped");
        assertEquals(new ReplacementLog.Move(2, 1, 101), log.since(0).get(0));
        // Ordinals past 2^31 / 2 and negative halves survive the packing.
        log.append(22, Integer.MAX_VALUE, 0);
        assertEquals(List.of(new ReplacementLog.Move(22, Integer.MAX_VALUE, 0)), log.since(20));

        for (int i = 0; i < ReplacementLog.CAPACITY; i++) {
            log.append(1000 + i, i, i + 1);
        }
        assertNull(
                log.since(20),
                "moves after stamp 20 were overwritten: the ring cannot say what they were");
        assertNull(
                log.since(1000), "the oldest kept slot is the next to be overwritten: not trusted");
        List<ReplacementLog.Move> recent = log.since(1000 + ReplacementLog.CAPACITY - 3);
        assertEquals(
                List.of(
                        new ReplacementLog.Move(
                                1000 + ReplacementLog.CAPACITY - 2,
                                ReplacementLog.CAPACITY - 2,
                                ReplacementLog.CAPACITY - 1),
                        new ReplacementLog.Move(
                                1000 + ReplacementLog.CAPACITY - 1,
                                ReplacementLog.CAPACITY - 1,
                                ReplacementLog.CAPACITY)),
                recent);
    }
}
