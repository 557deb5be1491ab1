package dev.nepenthe.core.internal.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class VectorColumnTest {

    @Test
    void rowsReadBackAcrossChunkBoundariesAndAClearedRowIsZerosAlone() {
        long seed = new Random().nextLong();
        System.out.println("VectorColumnTest seed " + seed);
        Random rnd = new Random(seed);
        for (int dim : new int[] {1, 3, 384, 1536}) {
            VectorColumn column = new VectorColumn(dim);
            // Ordinals at, before and after chunk boundaries (every chunk size is a power of two
            // from 16 to 1024 rows), and far out.
            int[] ordinals = {0, 1, 15, 16, 17, 511, 512, 1023, 1024, 1025, 4097, 100_003};
            Map<Integer, float[]> written = new HashMap<>();
            for (int ord : ordinals) {
                float[] v = new float[dim];
                for (int i = 0; i < dim; i++) {
                    v[i] = (float) rnd.nextGaussian();
                }
                column.set(ord, v);
                written.put(ord, v);
            }
            float[] out = new float[dim];
            for (int ord : ordinals) {
                column.read(ord, out);
                assertArrayEquals(written.get(ord), out, "dim " + dim + " ordinal " + ord);
            }
            column.read(2, out);
            assertArrayEquals(new float[dim], out, "a row never written reads as zeros");
            column.read(5_000_000, out);
            assertArrayEquals(new float[dim], out, "a row past every chunk reads as zeros");

            column.clear(1024);
            column.read(1024, out);
            assertArrayEquals(new float[dim], out, "the cleared row");
            for (int ord : new int[] {1023, 1025}) {
                column.read(ord, out);
                assertArrayEquals(
                        written.get(ord), out, "a neighbour of the cleared row, ordinal " + ord);
            }
            long rowBytes = (long) dim * Float.BYTES;
            assertTrue(
                    column.bytes() >= 100_004L * rowBytes
                            && column.bytes() <= (100_004L + 1024) * rowBytes,
                    "the chunks up to the highest ordinal, no more: " + column.bytes() + " bytes");
        }
    }

    /** What an open does: reserve the rows, then store them from several threads at once. */
    @Test
    void reservedRowsTakeVectorsFromManyThreadsAndNothingBeyondThem() {
        int dim = 384;
        int rows = 5_000;
        VectorColumn column = new VectorColumn(dim);
        column.set(3, new float[dim]); // a chunk that exists before the reservation stays
        column.reserve(rows);
        long rowBytes = (long) dim * Float.BYTES;
        assertTrue(
                column.bytes() >= rows * rowBytes && column.bytes() <= (rows + 1024L) * rowBytes,
                column.bytes() + " bytes");
        java.util.stream.IntStream.range(0, rows)
                .parallel()
                .forEach(
                        ord -> {
                            float[] v = new float[dim];
                            java.util.Arrays.fill(v, ord + 0.5f);
                            column.setReserved(ord, v);
                        });
        float[] out = new float[dim];
        for (int ord = 0; ord < rows; ord++) {
            column.read(ord, out);
            for (float x : out) {
                assertEquals(ord + 0.5f, x, 0f, "ordinal " + ord);
            }
        }
        int beyond = (int) (column.bytes() / rowBytes);
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class,
                        () -> column.setReserved(beyond, new float[dim]));
        assertTrue(e.getMessage().contains("beyond the reserved rows"), e.getMessage());
    }

    @Test
    void aVectorOfAnotherDimensionIsRefusedSayingWhatWasExpected() {
        VectorColumn column = new VectorColumn(4);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> column.set(0, new float[3]));
        assertEquals("expected a vector of dimension 4, got 3", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new VectorColumn(0));
    }
}
