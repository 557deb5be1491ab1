package dev.nepenthe.bench.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TEXMEX vector files: rows read back bit for bit, and a damaged file refused naming itself and
 * the row.
 */
class VecFilesTest {

    private static final long SEED = 20261204L;

    @Test
    void fvecsAndIvecsRoundTripAndStopAtTheLimit(@TempDir Path dir) throws IOException {
        System.out.println("VecFilesTest seed " + SEED);
        SplittableRandom rnd = new SplittableRandom(SEED);
        float[][] rows = new float[50][24];
        int[][] ids = new int[50][10];
        for (int i = 0; i < rows.length; i++) {
            for (int j = 0; j < 24; j++) {
                rows[i][j] = (float) rnd.nextGaussian();
            }
            for (int j = 0; j < 10; j++) {
                ids[i][j] = rnd.nextInt(1_000_000);
            }
        }
        rows[3][0] = -0.0f;
        rows[4][1] = Float.MIN_VALUE;
        VecFiles.writeFvecs(dir.resolve("b.fvecs"), rows);
        VecFiles.writeIvecs(dir.resolve("t.ivecs"), ids);
        float[][] back = VecFiles.readVectors(dir.resolve("b.fvecs"), Integer.MAX_VALUE);
        assertEquals(50, back.length);
        for (int i = 0; i < rows.length; i++) {
            for (int j = 0; j < 24; j++) {
                assertEquals(
                        Float.floatToRawIntBits(rows[i][j]),
                        Float.floatToRawIntBits(back[i][j]),
                        i + "," + j);
            }
        }
        assertEquals(7, VecFiles.readFvecs(dir.resolve("b.fvecs"), 7).length);
        assertTrue(Arrays.deepEquals(ids, VecFiles.readIvecs(dir.resolve("t.ivecs"), 100)));
    }

    @Test
    void bvecsBytesAreUnsigned(@TempDir Path dir) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(2 * (4 + 3)).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(3).put((byte) 0).put((byte) 127).put((byte) 0xff);
        b.putInt(3).put((byte) 0x80).put((byte) 1).put((byte) 2);
        Files.write(dir.resolve("s.bvecs"), b.array());
        float[][] rows = VecFiles.readVectors(dir.resolve("s.bvecs"), 10);
        assertArrayEquals(new float[] {0, 127, 255}, rows[0]);
        assertArrayEquals(new float[] {128, 1, 2}, rows[1]);
    }

    @Test
    void aDamagedFileFailsNamingItselfAndTheRow(@TempDir Path dir) throws IOException {
        Path cut = dir.resolve("cut.fvecs");
        VecFiles.writeFvecs(cut, new float[][] {{1, 2, 3}, {4, 5, 6}});
        byte[] whole = Files.readAllBytes(cut);
        Files.write(cut, Arrays.copyOf(whole, whole.length - 2));
        IOException e = assertThrows(IOException.class, () -> VecFiles.readFvecs(cut, 10));
        assertTrue(e.getMessage().startsWith(cut + ": row 1 is cut short"), e.getMessage());

        Path mixed = dir.resolve("mixed.fvecs");
        VecFiles.writeFvecs(mixed, new float[][] {{1, 2, 3}, {4, 5}});
        e = assertThrows(IOException.class, () -> VecFiles.readFvecs(mixed, 10));
        assertTrue(
                e.getMessage().contains("row 1 declares dimension 2, the rows before it 3"),
                e.getMessage());

        Path other = dir.resolve("other.fvecs");
        Files.writeString(other, "this is not a vector file at all");
        e = assertThrows(IOException.class, () -> VecFiles.readFvecs(other, 10));
        assertTrue(e.getMessage().startsWith(other + ": row 0 declares dimension"), e.getMessage());

        IllegalArgumentException x =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> VecFiles.readVectors(dir.resolve("v.hdf5"), 1));
        assertTrue(
                x.getMessage().contains("expected a vector file ending in .fvecs or .bvecs"),
                x.getMessage());
    }
}
