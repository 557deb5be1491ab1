package dev.nepenthe.core.internal.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The bulk forms write exactly the bytes {@link DataOutputStream#writeFloat} and {@code writeInt}
 * write one by one (the oracle), at an offset, across chunk boundaries, and read them back bit for
 * bit, negative zero and NaN included. (A NaN's payload is kept, where writeFloat would
 * canonicalise it; a stored vector holds no NaN.)
 */
class BodyStreamsTest {

    @Test
    void bulkFloatsAndIntsAreTheOneByOneBytes() throws Exception {
        SplittableRandom rnd = new SplittableRandom(23);
        for (int len :
                new int[] {
                    0, 1, 7, 384, (1 << 14) - 1, 1 << 14, (1 << 14) + 5, 3 * (1 << 14) + 11
                }) {
            int off = rnd.nextInt(5);
            float[] f = new float[off + len];
            int[] ints = new int[off + len];
            for (int i = 0; i < f.length; i++) {
                f[i] = Float.intBitsToFloat(rnd.nextInt());
                if (Float.isNaN(f[i])) {
                    f[i] = 1.5f; // writeFloat canonicalises NaN payloads; the payload case is below
                }
                ints[i] = rnd.nextInt();
            }
            if (len > 2) {
                f[off] = -0.0f;
                f[off + 1] = Float.NaN;
            }
            ByteArrayOutputStream one = new ByteArrayOutputStream();
            DataOutputStream o = new DataOutputStream(one);
            for (int i = off; i < off + len; i++) {
                o.writeFloat(f[i]);
            }
            for (int i = off; i < off + len; i++) {
                o.writeInt(ints[i]);
            }
            ByteArrayOutputStream bulk = new ByteArrayOutputStream();
            DataOutputStream b = new DataOutputStream(bulk);
            BodyStreams.writeFloats(b, f, off, len);
            BodyStreams.writeInts(b, ints, off, len);
            assertArrayEquals(one.toByteArray(), bulk.toByteArray(), "len " + len);

            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bulk.toByteArray()));
            float[] fr = new float[off + len];
            int[] ir = new int[off + len];
            BodyStreams.readFloats(in, fr, off, len);
            BodyStreams.readInts(in, ir, off, len);
            for (int i = off; i < off + len; i++) {
                assertEquals(
                        Float.floatToRawIntBits(f[i]),
                        Float.floatToRawIntBits(fr[i]),
                        "len " + len + " float " + i);
                assertEquals(ints[i], ir[i], "len " + len + " int " + i);
            }
            assertEquals(-1, in.read(), "everything consumed");
        }
    }

    @Test
    void aNaNPayloadRoundTrips() throws Exception {
        float[] f = {Float.intBitsToFloat(0x7fc01234)};
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyStreams.writeFloats(new DataOutputStream(out), f, 0, 1);
        float[] back = new float[1];
        BodyStreams.readFloats(
                new DataInputStream(new ByteArrayInputStream(out.toByteArray())), back, 0, 1);
        assertEquals(0x7fc01234, Float.floatToRawIntBits(back[0]));
    }

    @Test
    void aShortStreamEndsWithEofAndAForeignHeaderIsNamed() throws Exception {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(new byte[10]));
        assertThrows(EOFException.class, () -> BodyStreams.readFloats(in, new float[3], 0, 3));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyStreams.writeHeader(new DataOutputStream(out), "nepenthe-hnsw", 2);
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                BodyStreams.readHeader(
                                        new DataInputStream(
                                                new ByteArrayInputStream(out.toByteArray())),
                                        "nepenthe-ivfpq",
                                        1,
                                        2));
        assertTrue(
                e.getMessage()
                        .contains("expected a 'nepenthe-ivfpq' body, got a 'nepenthe-hnsw' body"),
                e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                BodyStreams.readHeader(
                                        new DataInputStream(
                                                new ByteArrayInputStream(out.toByteArray())),
                                        "nepenthe-hnsw",
                                        3,
                                        4));
        assertTrue(
                e.getMessage().contains("version 2") && e.getMessage().contains("3 to 4"),
                e.getMessage());
    }
}
