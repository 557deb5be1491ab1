package dev.nepenthe.bench.text;

import static dev.nepenthe.bench.text.TextSettings.DIM;

import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * What the text benchmark's sections share: query words and seeded vectors, pass order, timing,
 * folder sizes and progress lines.
 */
final class TextBenchHelpers {

    private TextBenchHelpers() {}

    /**
     * A real store's options: AES-GCM, fsync before every acknowledgement; the keystore in its own
     * folder.
     */
    static StoreOptions options(Path keystore) {
        return StoreOptions.defaults().withKeystore(keystore);
    }

    /**
     * Three words of the text, at seeded random positions, kept in their order. Words are runs of
     * letters; words of three or more letters are preferred (short ones are mostly stop words the
     * analyzer drops).
     */
    static String threeWords(String text, Random rnd) {
        List<String> words = new ArrayList<>();
        for (String w : text.split("[^\\p{L}]+", -1)) {
            if (w.length() >= 3) {
                words.add(w);
            }
        }
        if (words.size() < 3) {
            words.clear();
            for (String w : text.split("[^\\p{L}]+", -1)) {
                if (!w.isEmpty()) {
                    words.add(w);
                }
            }
        }
        List<Integer> positions = new ArrayList<>();
        for (int i = 0; i < words.size(); i++) {
            positions.add(i);
        }
        Collections.shuffle(positions, rnd);
        List<Integer> picked = new ArrayList<>(positions.subList(0, Math.min(3, positions.size())));
        Collections.sort(picked);
        StringBuilder q = new StringBuilder();
        for (int p : picked) {
            q.append(q.isEmpty() ? "" : " ").append(words.get(p));
        }
        // A definition of digits and signs only would leave nothing; keep the request valid.
        return q.isEmpty() ? "nothing" : q.toString();
    }

    /**
     * Seeded unit vectors (Gaussian, normalised): no structure, the worst case for a graph index.
     */
    static float[][] unitVectors(long seed, int count) {
        Random r = new Random(seed);
        float[][] out = new float[count][DIM];
        for (float[] v : out) {
            double norm = 0;
            for (int j = 0; j < DIM; j++) {
                v[j] = (float) r.nextGaussian();
                norm += v[j] * v[j];
            }
            float inv = (float) (1 / Math.sqrt(norm));
            for (int j = 0; j < DIM; j++) {
                v[j] *= inv;
            }
        }
        return out;
    }

    static <T> List<T> rotate(List<T> xs, int by) {
        List<T> out = new ArrayList<>(xs);
        Collections.rotate(out, -(by % Math.max(1, xs.size())));
        return out;
    }

    static int[] rotate(int[] xs, int by) {
        List<Integer> l = rotate(Arrays.stream(xs).boxed().toList(), by);
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    static <T> List<Double> doubles(List<T> xs, ToDoubleFunction<T> f) {
        return xs.stream().map(x -> f.applyAsDouble(x)).toList();
    }

    static <T> List<String> strings(List<T> xs, Function<T, String> f) {
        return xs.stream().map(f).toList();
    }

    static String join(int[] xs) {
        return String.join(",", Arrays.stream(xs).mapToObj(Integer::toString).toList());
    }

    /** Lucene segments in a folder: one .si file each (file names survive our encryption). */
    static int countSegments(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return (int) files.filter(p -> p.getFileName().toString().endsWith(".si")).count();
        }
    }

    static long folderBytes(Path folder) throws IOException {
        try (Stream<Path> files = Files.walk(folder)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    static double secondsSince(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static double msSince(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    /** Progress on stderr: counts and times only. */
    static void log(String format, Object... args) {
        System.err.printf(Locale.ROOT, "text bench: " + format + "%n", args);
    }

    /** Deletes {@code dir} and all below it, if it is there. */
    static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            TestFiles.deleteTree(dir);
        }
    }
}
