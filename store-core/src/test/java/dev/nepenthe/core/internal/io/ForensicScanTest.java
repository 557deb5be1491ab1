package dev.nepenthe.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.testing.Seeds;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ForensicScan#countAny} against a naive oracle (every offset, every needle, compared byte
 * by byte), with needles of 4 to 40 bytes: the text index's verify phase scans for terms of 4 to 7
 * bytes, which the 8-byte prefix lookup alone could not take. Needles sit at the first and last
 * offsets too, where the scan's window starts and ends.
 */
class ForensicScanTest {

    private static int naive(byte[] hay, List<byte[]> needles) {
        int count = 0;
        for (int i = 0; i < hay.length; i++) {
            for (byte[] n : needles) {
                if (i + n.length <= hay.length
                        && java.util.Arrays.equals(hay, i, i + n.length, n, 0, n.length)) {
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
            // Every tenth round has thousands of needles, so the prefix filter is wider than its
            // least and many needles share a prefix.
            for (int k = 1 + rnd.nextInt(round % 10 == 0 ? 3000 : 6); k > 0; k--) {
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
            if (hay.length >= 40 && !needles.isEmpty()) {
                byte[] first = needles.get(0);
                byte[] last = needles.get(needles.size() - 1);
                System.arraycopy(first, 0, hay, 0, first.length);
                System.arraycopy(last, 0, hay, hay.length - last.length, last.length);
            }
            assertEquals(
                    naive(hay, needles),
                    ForensicScan.countAny(hay, needles),
                    "round " + round + Seeds.replay(seed));
        }
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> ForensicScan.countAny(new byte[10], List.of(new byte[3])));
        assertEquals("needle: expected at least 4 bytes, got 3", e.getMessage());
        assertEquals(
                0,
                ForensicScan.countAny(new byte[3], List.of(new byte[4])),
                "a hay shorter than every needle");
        assertEquals(0, ForensicScan.countAny(new byte[10], List.of()), "no needles");
    }
}
