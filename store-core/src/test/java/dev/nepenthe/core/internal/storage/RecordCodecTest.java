package dev.nepenthe.core.internal.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The record codec reads back exactly what it wrote, and refuses bytes that end early. */
class RecordCodecTest {

    private static byte[] encode(VectorRecord r) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        RecordCodec.write(new DataOutputStream(bytes), r);
        return bytes.toByteArray();
    }

    /** A record using every field the codec carries, chosen by {@code rnd}. */
    private static VectorRecord randomRecord(Random rnd, int i) {
        float[] v = new float[1 + rnd.nextInt(40)];
        for (int d = 0; d < v.length; d++) {
            // Include values whose bit patterns a careless byte order would scramble visibly.
            v[d] =
                    switch (rnd.nextInt(4)) {
                        case 0 -> Float.MIN_VALUE;
                        case 1 -> -0.0f;
                        default -> (float) rnd.nextGaussian();
                    };
        }
        VectorRecord.Builder b =
                VectorRecord.builder("id-" + i + "-ü").vector(v).tenant("t" + rnd.nextInt(3));
        if (rnd.nextBoolean()) {
            b.subject("subject \u00e9\u4e2d " + rnd.nextInt(5));
        }
        if (rnd.nextBoolean()) {
            b.source(new SourceRef("doc", "s" + rnd.nextInt(9), rnd.nextInt(1000)));
        }
        if (rnd.nextBoolean()) {
            b.text("text with an emoji \ud83d\ude00 and " + rnd.nextLong());
        }
        int m = rnd.nextInt(5);
        for (int k = 0; k < m; k++) {
            switch (rnd.nextInt(4)) {
                case 0 -> b.metadata("s" + k, "value " + rnd.nextInt());
                case 1 -> b.metadata("l" + k, rnd.nextLong());
                case 2 -> b.metadata("d" + k, rnd.nextDouble());
                default -> b.metadata("b" + k, rnd.nextBoolean());
            }
        }
        for (int k = rnd.nextInt(3); k > 0; k--) {
            b.derivedFrom("parent-" + rnd.nextInt(100));
        }
        return b.build();
    }

    @Test
    void readsBackEveryFieldItWrote() throws IOException {
        long seed = new Random().nextLong();
        System.out.println("RecordCodecTest seed " + seed);
        Random rnd = new Random(seed);
        for (int i = 0; i < 500; i++) {
            VectorRecord written = randomRecord(rnd, i);
            byte[] bytes = encode(written);
            VectorRecord read = RecordCodec.read(bytes);
            assertEquals(written, read, "seed " + seed + ", record " + i);
            // equals compares floats through floatToIntBits, which folds NaN payloads together;
            // the raw bits must come back too.
            assertArrayEquals(
                    bitsOf(written.vector()),
                    bitsOf(read.vector()),
                    "seed " + seed + ", record " + i);
            assertEquals(
                    new ArrayList<>(written.metadata().keySet()),
                    new ArrayList<>(read.metadata().keySet()),
                    "metadata order, seed " + seed);
            assertThrows(UnsupportedOperationException.class, () -> read.metadata().put("x", "y"));
            // Written again, the decoded record gives the same bytes.
            assertArrayEquals(bytes, encode(read), "seed " + seed + ", record " + i);
        }
    }

    /**
     * The open's path: a record decoded from the front of a larger buffer (whose tail holds another
     * record's bytes) into a reused vector array when its length fits, else into one of its own;
     * the oracle is the plain decode of the record's exact bytes.
     */
    @Test
    void decodesFromTheFrontOfABufferIntoTheScratchVectorWhenItFits() throws IOException {
        long seed = new Random().nextLong();
        System.out.println("RecordCodecTest scratch seed " + seed);
        Random rnd = new Random(seed);
        byte[] buffer = new byte[1 << 16];
        float[] scratch = new float[8];
        for (int i = 0; i < 300; i++) {
            VectorRecord written = randomRecord(rnd, i);
            byte[] bytes = encode(written);
            byte[] tail = encode(randomRecord(rnd, i + 1000));
            System.arraycopy(bytes, 0, buffer, 0, bytes.length);
            System.arraycopy(
                    tail,
                    0,
                    buffer,
                    bytes.length,
                    Math.min(tail.length, buffer.length - bytes.length));
            VectorRecord read = RecordCodec.read(buffer, bytes.length, scratch);
            assertEquals(RecordCodec.read(bytes), read, "seed " + seed + ", record " + i);
            float[] v = dev.nepenthe.core.internal.record.RecordAccess.vectorUnsafe(read);
            assertEquals(
                    written.vector().length == scratch.length,
                    v == scratch,
                    "seed " + seed + ", record " + i);
        }
        byte[] bytes = encode(randomRecord(rnd, 0));
        System.arraycopy(bytes, 0, buffer, 0, bytes.length);
        IOException e =
                assertThrows(
                        IOException.class,
                        () -> RecordCodec.read(buffer, bytes.length - 1, scratch));
        assertTrue(e.getMessage().contains("ends early"), e.getMessage());
    }

    private static int[] bitsOf(float[] v) {
        int[] out = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = Float.floatToRawIntBits(v[i]);
        }
        return out;
    }

    @Test
    void bytesThatEndEarlyAreRefusedAtEveryLength() throws IOException {
        VectorRecord r =
                VectorRecord.builder("an-id")
                        .tenant("t")
                        .subject("s")
                        .vector(new float[] {1, 2, 3})
                        .source(new SourceRef("doc", "d", 7))
                        .text("some text")
                        .metadata("k", "v")
                        .metadata("n", 3L)
                        .derivedFrom("p")
                        .build();
        byte[] bytes = encode(r);
        List<Integer> refused = new ArrayList<>();
        for (int n = 0; n < bytes.length; n++) {
            byte[] prefix = java.util.Arrays.copyOf(bytes, n);
            IOException e =
                    assertThrows(
                            IOException.class,
                            () -> RecordCodec.read(prefix),
                            "prefix of " + n + " bytes");
            assertTrue(
                    e.getMessage().contains("ends early") || e.getMessage().contains("impossible"),
                    "prefix of " + n + " bytes: " + e.getMessage());
            refused.add(n);
        }
        assertEquals(bytes.length, refused.size());
        assertEquals(r, RecordCodec.read(bytes));
    }

    @Test
    void anUnknownMetadataTagIsNamed() throws IOException {
        VectorRecord r =
                VectorRecord.builder("x").vector(new float[] {1}).metadata("k", 5L).build();
        byte[] bytes = encode(r);
        // The tag follows the key "k": 4 bytes of length and 1 of UTF-8.
        int tag = indexOf(bytes, new byte[] {0, 0, 0, 1, 'k'}) + 5;
        assertEquals(2, bytes[tag], "the long tag, where the layout puts it");
        bytes[tag] = 9;
        IOException e = assertThrows(IOException.class, () -> RecordCodec.read(bytes));
        assertEquals("unknown metadata type tag 9", e.getMessage());
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
