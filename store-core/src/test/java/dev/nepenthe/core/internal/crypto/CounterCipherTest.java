package dev.nepenthe.core.internal.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.testing.Seeds;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Random;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class CounterCipherTest {

    /**
     * The keystream recomputed from its definition: AES of the big-endian 128-bit counter {@code iv
     * + block}, block by block, from the first byte of the stream.
     */
    private static byte[] keystream(byte[] rawKey, byte[] iv, long position, int length)
            throws Exception {
        Cipher ecb = Cipher.getInstance("AES/ECB/NoPadding");
        ecb.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(rawKey, "AES"));
        BigInteger start = new BigInteger(1, iv);
        BigInteger wrap = BigInteger.ONE.shiftLeft(128);
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            long at = position + i;
            byte[] counter = start.add(BigInteger.valueOf(at / 16)).mod(wrap).toByteArray();
            byte[] block = new byte[16];
            int n = Math.min(16, counter.length);
            System.arraycopy(counter, counter.length - n, block, 16 - n, n);
            out[i] = ecb.doFinal(block)[(int) (at % 16)];
        }
        return out;
    }

    @Test
    void slicedCallsGiveTheKeystreamOfOneCallFromAnyPosition() throws Exception {
        long seed = Seeds.draw("slicedCallsGiveTheKeystreamOfOneCallFromAnyPosition");
        Random rnd = new Random(seed);
        for (int round = 0; round < 20; round++) {
            byte[] raw = new byte[DataKey.LENGTH];
            rnd.nextBytes(raw);
            byte[] iv = new byte[CounterCipher.IV_LENGTH];
            rnd.nextBytes(iv);
            if (round == 0) {
                // The low bytes about to carry: the counter must add across them.
                Arrays.fill(iv, 8, 16, (byte) 0xFF);
            }
            long position = rnd.nextInt(1 << 20);
            // Lengths on and around the slice boundaries as well as arbitrary ones.
            int length =
                    switch (round % 4) {
                        case 0 -> CounterCipher.SLICE;
                        case 1 -> 3 * CounterCipher.SLICE + 1 + rnd.nextInt(15);
                        case 2 -> rnd.nextInt(CounterCipher.SLICE);
                        default -> rnd.nextInt(8 * CounterCipher.SLICE);
                    };
            byte[] plain = new byte[length + 5];
            rnd.nextBytes(plain);
            byte[] sealed = new byte[length + 9];
            DataKey key = new DataKey(raw);
            CounterCipher.crypt(CounterCipher.at(key, iv, position), plain, 5, length, sealed, 9);
            byte[] stream = keystream(raw, iv, position, length);
            byte[] expected = new byte[length];
            for (int i = 0; i < length; i++) {
                expected[i] = (byte) (plain[5 + i] ^ stream[i]);
            }
            assertArrayEquals(
                    expected,
                    Arrays.copyOfRange(sealed, 9, 9 + length),
                    "round "
                            + round
                            + ", position "
                            + position
                            + ", length "
                            + length
                            + " ("
                            + Seeds.replay(seed)
                            + ")");
            byte[] back = new byte[length];
            CounterCipher.crypt(CounterCipher.at(key, iv, position), sealed, 9, length, back, 0);
            assertArrayEquals(
                    Arrays.copyOfRange(plain, 5, 5 + length),
                    back,
                    "round " + round + " decrypted");
        }
    }

    @Test
    void oneArrayForInputAndOutputIsRefused() {
        byte[] buf = new byte[64];
        Cipher c =
                CounterCipher.at(
                        new DataKey(new byte[DataKey.LENGTH]),
                        new byte[CounterCipher.IV_LENGTH],
                        0);
        assertThrows(
                IllegalArgumentException.class, () -> CounterCipher.crypt(c, buf, 0, 32, buf, 32));
    }
}
