package dev.nepenthe.bench.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import io.jhdf.HdfFile;
import io.jhdf.WritableHdfFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ann-benchmarks HDF5 files, written here with jhdf's writer in the layout ann-benchmarks uses. */
class AnnHdf5Test {

    private static final long SEED = 4_12_2026L;

    private static float[][] rows(SplittableRandom rnd, int n, int dim) {
        float[][] out = new float[n][dim];
        for (float[] r : out) {
            for (int j = 0; j < dim; j++) {
                r[j] = (float) rnd.nextGaussian();
            }
        }
        return out;
    }

    private static Path write(
            Path file, float[][] train, float[][] test, int[][] neighbors, String distance) {
        try (WritableHdfFile w = HdfFile.write(file)) {
            w.putDataset("train", train);
            w.putDataset("test", test);
            w.putDataset("neighbors", neighbors);
            if (distance != null) {
                w.putAttribute("distance", distance);
            }
        }
        return file;
    }

    @Test
    void theFirstRowsAndTheAnswersAreReadBack(@TempDir Path dir) throws IOException {
        System.out.println("AnnHdf5Test seed " + SEED);
        SplittableRandom rnd = new SplittableRandom(SEED);
        float[][] train = rows(rnd, 200, 12);
        float[][] test = rows(rnd, 20, 12);
        int[][] neighbors = new int[20][10];
        for (int[] r : neighbors) {
            for (int j = 0; j < r.length; j++) {
                r[j] = rnd.nextInt(200);
            }
        }
        Path file = write(dir.resolve("t-12-euclidean.hdf5"), train, test, neighbors, "euclidean");
        AnnHdf5.AnnSet all = AnnHdf5.read(file, 200, 20);
        assertEquals(Metric.L2, all.metric());
        assertEquals(200, all.trainRows());
        for (int i = 0; i < 200; i++) {
            assertArrayEquals(train[i], all.train()[i], "train row " + i);
        }
        assertArrayEquals(test[19], all.test()[19]);
        assertArrayEquals(neighbors[7], all.neighbors()[7]);

        AnnHdf5.AnnSet part = AnnHdf5.read(file, 50, 5);
        assertEquals(50, part.train().length);
        assertEquals(5, part.test().length);
        assertArrayEquals(train[49], part.train()[49]);
        assertArrayEquals(neighbors[4], part.neighbors()[4]);
        assertEquals(
                Metric.COSINE,
                AnnHdf5.read(write(dir.resolve("a.hdf5"), train, test, neighbors, "angular"), 10, 1)
                        .metric());
    }

    @Test
    void aFileThatIsNotOneFailsNamingItselfAndWhatIsMissing(@TempDir Path dir) throws IOException {
        SplittableRandom rnd = new SplittableRandom(SEED);
        float[][] train = rows(rnd, 30, 4);
        float[][] test = rows(rnd, 3, 4);
        int[][] neighbors = new int[3][2];

        Path noDistance = write(dir.resolve("nd.hdf5"), train, test, neighbors, null);
        IOException e = assertThrows(IOException.class, () -> AnnHdf5.read(noDistance, 30, 3));
        assertTrue(
                e.getMessage().startsWith(noDistance + ": expected a 'distance' attribute"),
                e.getMessage());

        Path hamming = write(dir.resolve("h.hdf5"), train, test, neighbors, "hamming");
        e = assertThrows(IOException.class, () -> AnnHdf5.read(hamming, 30, 3));
        assertTrue(e.getMessage().contains("got 'hamming'"), e.getMessage());

        Path ok = write(dir.resolve("ok.hdf5"), train, test, neighbors, "euclidean");
        e = assertThrows(IOException.class, () -> AnnHdf5.read(ok, 31, 3));
        assertTrue(
                e.getMessage().contains("asked for 31 rows of 'train', it holds 30"),
                e.getMessage());

        Path text = dir.resolve("text.hdf5");
        Files.writeString(text, "not an HDF5 file");
        e = assertThrows(IOException.class, () -> AnnHdf5.read(text, 1, 1));
        assertTrue(e.getMessage().startsWith(text + ": not a readable HDF5 file"), e.getMessage());

        e = assertThrows(IOException.class, () -> AnnHdf5.read(dir.resolve("missing.hdf5"), 1, 1));
        assertTrue(e.getMessage().contains("no such file"), e.getMessage());
    }
}
