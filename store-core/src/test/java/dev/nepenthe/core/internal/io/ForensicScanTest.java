package dev.nepenthe.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.testing.Seeds;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ForensicScan#countAny} against a naive oracle (every offset, every needle, compared
 * byte by byte), with needles of 4 to 40 bytes: the text index's verify phase scans for terms
 * of 4 to 7 bytes, which the 8-byte prefix lookup alone could not take.
 */
class ForensicScanTest {

    private static int naive(byte[] hay, List<byte[]> needles) {
        int count = 0;
        for (int i = 0; i < hay.length; i++) {
            for (byte[] n : needles) {
                if (i + n.length <= hay.length && java.util.Arrays.equals(hay, i, i + n.length, n, 0, n.length)) {
                    count++;
                    break;
                }
            }
        }
        return count;
    }

    @Test
    void countAnyMatchesANaiveScanForShortAndLongNeedles() {
        long seed = Seeds.draw("ForensicScanTest.countAny");
        Random rnd = new Random(seed);
        for (int round = 0; round < 200; round++) {
            // A small alphabet, so needles occur often and overlap.
            byte[] hay = new byte[rnd.nextInt(2000)];
            for (int i = 0; i < hay.length; i++) {
                hay[i] = (byte) ('a' + rnd.nextInt(3));
            }
            boolean allLong = rnd.nextBoolean();
            List<byte[]> needles = new ArrayList<>();
            for (int k = 1 + rnd.nextInt(6); k > 0; k--) {
                byte[] n = new byte[(allLong ? 8 : 4) + rnd.nextInt(allLong ? 32 : 8)];
                if (hay.length > n.length && rnd.nextBoolean()) {
                    int at = rnd.nextInt(hay.length - n.length);
                    System.arraycopy(hay, at, n, 0, n.length);
                } else {
                    for (int i = 0; i < n.length; i++) {
                        n[i] = (byte) ('a' + rnd.nextInt(3));
                    }
                }
                needles.add(n);
            }
            assertEquals(naive(hay, needles), ForensicScan.countAny(hay, needles), "round " + round + Seeds.replay(seed));
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ForensicScan.countAny(new byte[10], List.of(new byte[3])));
        assertEquals("needle: expected at least 4 bytes, got 3", e.getMessage());
    }
}
