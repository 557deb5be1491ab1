package dev.nepenthe.core.internal.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.Random;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.api.Test;

/** Opening into a buffer gives what opening into a new array gives, and refuses what it refuses. */
class RecordCipherTest {

    private static DataKey key(int seed) {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) seed);
        return new DataKey(k);
    }

    @Test
    void openIntoAgreesWithOpenAndRefusesAWrongKeyOrAad() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("RecordCipherTest seed " + seed);
        Random rnd = new Random(seed);
        DataKey key = key(1);
        byte[] aad = {1, 2, 3};
        byte[] out = new byte[8192];
        for (int i = 0; i < 100; i++) {
            byte[] plain = new byte[rnd.nextInt(3000)];
            rnd.nextBytes(plain);
            byte[] sealed = RecordCipher.seal(key, aad, plain);
            int n = RecordCipher.openInto(key, aad, sealed, sealed.length, out);
            assertEquals(plain.length, n, "seed " + seed);
            assertArrayEquals(
                    RecordCipher.open(key, aad, sealed), Arrays.copyOf(out, n), "seed " + seed);
            assertArrayEquals(plain, Arrays.copyOf(out, n), "seed " + seed);
        }
        byte[] sealed = RecordCipher.seal(key, aad, new byte[100]);
        assertThrows(
                AEADBadTagException.class,
                () -> RecordCipher.openInto(key(2), aad, sealed, sealed.length, out));
        assertThrows(
                AEADBadTagException.class,
                () -> RecordCipher.openInto(key, new byte[] {9}, sealed, sealed.length, out));
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                RecordCipher.openInto(
                                        key,
                                        aad,
                                        sealed,
                                        sealed.length,
                                        new byte[sealed.length - 1]));
        assertEquals(
                "output buffer of "
                        + (sealed.length - 1)
                        + " bytes for a sealed message of "
                        + sealed.length
                        + " (expected at least as many)",
                e.getMessage());
    }

    @Test
    void aMessageAtTheStartOfALargerBufferOpensAsItselfAndTheRestIsNotRead() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("RecordCipherTest seed " + seed);
        Random rnd = new Random(seed);
        DataKey key = key(1);
        byte[] aad = {4, 5};
        byte[] buffer = new byte[4096];
        byte[] out = new byte[4096];
        for (int i = 0; i < 100; i++) {
            byte[] plain = new byte[rnd.nextInt(3000)];
            rnd.nextBytes(plain);
            byte[] sealed = RecordCipher.seal(key, aad, plain);
            // What the previous, longer message left in the buffer must not count.
            rnd.nextBytes(buffer);
            System.arraycopy(sealed, 0, buffer, 0, sealed.length);
            int n = RecordCipher.openInto(key, aad, buffer, sealed.length, out);
            assertArrayEquals(plain, Arrays.copyOf(out, n), "seed " + seed);
        }
        byte[] sealed = RecordCipher.seal(key, aad, new byte[100]);
        System.arraycopy(sealed, 0, buffer, 0, sealed.length);
        // One byte short of the tag, or one byte of the next message taken in: neither opens.
        assertThrows(
                AEADBadTagException.class,
                () -> RecordCipher.openInto(key, aad, buffer, sealed.length - 1, out));
        assertThrows(
                AEADBadTagException.class,
                () -> RecordCipher.openInto(key, aad, buffer, sealed.length + 1, out));
        assertThrows(
                AEADBadTagException.class, () -> RecordCipher.openInto(key, aad, buffer, 27, out));
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> RecordCipher.openInto(key, aad, sealed, sealed.length + 1, out));
        assertEquals(
                "sealed length "
                        + (sealed.length + 1)
                        + " for a buffer of "
                        + sealed.length
                        + " bytes (expected 0 to the buffer's length)",
                e.getMessage());
    }
}
