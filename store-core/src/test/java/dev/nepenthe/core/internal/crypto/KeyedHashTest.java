package dev.nepenthe.core.internal.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.nepenthe.testing.Seeds;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * The hashes are written into every file and the evidence ledger, so their layout may never change:
 * HMAC-SHA256, under the master key's "keyed-hash" derivation, of each part as a big-endian 4-byte
 * length and its UTF-8 bytes. Recomputed here from that description.
 */
class KeyedHashTest {

    @Test
    void hashesAreHmacOfLengthPrefixedUtf8Parts() throws Exception {
        long seed = Seeds.draw("hashesAreHmacOfLengthPrefixedUtf8Parts");
        Random rnd = new Random(seed);
        byte[] masterBytes = new byte[32];
        rnd.nextBytes(masterBytes);
        MasterKey master = MasterKey.of(masterBytes);
        KeyedHash hashes = new KeyedHash(master);
        Mac oracle = Mac.getInstance("HmacSHA256");
        oracle.init(new SecretKeySpec(master.derive("keyed-hash"), "HmacSHA256"));
        for (int i = 0; i < 300; i++) {
            String kind = randomString(rnd, 1 + rnd.nextInt(12));
            // Lengths past 255 and 65535 exercise every byte of the prefix; some parts are not
            // ASCII.
            String[] parts = new String[rnd.nextInt(5)];
            for (int p = 0; p < parts.length; p++) {
                int len =
                        switch (rnd.nextInt(4)) {
                            case 0 -> 0;
                            case 1 -> rnd.nextInt(40);
                            case 2 -> 200 + rnd.nextInt(400);
                            default -> 65_000 + rnd.nextInt(2_000);
                        };
                parts[p] = randomString(rnd, len);
            }
            assertArrayEquals(
                    oracle.doFinal(layout(kind, parts)),
                    hashes.of(kind, parts).bytes(),
                    "tuple " + i + Seeds.replay(seed));
        }
        // The prefix is what keeps ("ab", "c") apart from ("a", "bc").
        assertNotEquals(hashes.of("k", "ab", "c"), hashes.of("k", "a", "bc"));
        assertArrayEquals(
                oracle.doFinal(layout("record", "t", "")),
                hashes.of("record", "t", null).bytes(),
                "a null part hashes as the empty string");
    }

    private static byte[] layout(String kind, String... parts) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        writePart(out, kind);
        for (String s : parts) {
            writePart(out, s);
        }
        return bytes.toByteArray();
    }

    private static void writePart(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    private static String randomString(Random rnd, int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append(
                    switch (rnd.nextInt(10)) {
                        case 0 -> 'é';
                        case 1 -> '\u4e2d';
                        case 2 -> "\uD83D\uDE00"; // a pair: one code point, four bytes
                        case 3 ->
                                (char)
                                        (0xD800
                                                + rnd.nextInt(
                                                        0x800)); // a lone surrogate (unless paired
                        // by chance): '?'
                        default -> (char) ('a' + rnd.nextInt(26));
                    });
        }
        return sb.toString();
    }
}
