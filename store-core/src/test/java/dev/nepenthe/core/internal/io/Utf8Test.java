package dev.nepenthe.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nepenthe.testing.Seeds;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The oracle is {@code String.getBytes(UTF_8)}, on every kind of char it treats apart. */
class Utf8Test {

    @Test
    void lengthAndBytesAreWhatGetBytesGives() {
        long seed = Seeds.draw("lengthAndBytesAreWhatGetBytesGives");
        Random rnd = new Random(seed);
        String[] fixed = {
            "",
            "a",
            "é",
            "\u4e2d",
            "\uD83D\uDE00",
            "\uD83D",
            "\uDE00",
            "\uDE00\uD83D",
            "a\uD83Db",
            "\uD83D\uD83D\uDE00",
            "\u007F\u0080\u07FF\u0800\uFFFF",
            "\uDBFF\uDFFF"
        };
        for (String s : fixed) {
            check(s, "fixed " + Arrays.toString(s.chars().toArray()));
        }
        for (int i = 0; i < 2_000; i++) {
            StringBuilder sb = new StringBuilder();
            for (int j = rnd.nextInt(40); j > 0; j--) {
                sb.append(
                        switch (rnd.nextInt(7)) {
                            case 0 -> (char) rnd.nextInt(0x80);
                            case 1 -> (char) (0x80 + rnd.nextInt(0x780));
                            case 2 -> (char) (0x800 + rnd.nextInt(0xD800 - 0x800));
                            case 3 -> (char) (0xE000 + rnd.nextInt(0x2000));
                            case 4 ->
                                    (char)
                                            (0xD800
                                                    + rnd.nextInt(
                                                            0x400)); // high surrogate, paired or
                            // not
                            case 5 ->
                                    (char)
                                            (0xDC00
                                                    + rnd.nextInt(
                                                            0x400)); // low surrogate, paired or not
                            default ->
                                    new String(Character.toChars(0x10000 + rnd.nextInt(0x100000)));
                        });
            }
            check(sb.toString(), "string " + i + Seeds.replay(seed));
        }
    }

    private static void check(String s, String what) {
        byte[] expected = s.getBytes(StandardCharsets.UTF_8);
        assertEquals(expected.length, Utf8.length(s), what);
        byte[] dst = new byte[2 + Utf8.maxLength(s) + 2];
        assertEquals(expected.length, Utf8.encode(s, dst, 2), what);
        assertArrayEquals(expected, Arrays.copyOfRange(dst, 2, 2 + expected.length), what);
        assertEquals(0, dst[0] | dst[1], what + ": wrote before its offset");
        for (int k = 2 + expected.length; k < dst.length; k++) {
            assertEquals(0, dst[k], what + ": wrote past its length");
        }
    }
}
