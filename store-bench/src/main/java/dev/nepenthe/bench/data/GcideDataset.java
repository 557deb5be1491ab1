package dev.nepenthe.bench.data;

import dev.nepenthe.embed.MiniLmEmbedder;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Real sentence embeddings for the benchmarks: the short definitions of Debian's {@code dict-gcide}
 * ({@link GcideDefinitions}) embedded once with all-MiniLM-L6-v2 ({@link MiniLmEmbedder}, 384
 * dimensions, unit length) and cached outside the repository.
 *
 * <p>The cache file holds vectors only, never the texts: a little-endian header (magic {@code
 * NPDSVEC1}, format version, count, dimension, the parsing rules' version, the shuffle seed, and
 * the SHA-256 of the source {@code .dict.dz}), then count x dimension float32. The rows are in a
 * seeded random order of the parsed definitions, so any prefix is a random sample and the
 * benchmarks take their held-out queries from the end. While embedding, rows are appended to a
 * {@code .partial} file, so an interrupted run resumes where it stopped.
 *
 * <p>Why real embeddings: seeded synthetic vectors have no structure of real text, and a graph
 * index's recall and speed depend on it; the harnesses that read this cache measure on what users
 * store. What they found is in docs/BENCHMARKS.md ("The real-embedding dataset" and the runs on
 * gcide).
 *
 * <p>Run as {@code ./nepenthe bench dataset-gcide [limit=N] [threads=2] [batch=64]}.
 */
public final class GcideDataset {

    static final byte[] MAGIC = "NPDSVEC1".getBytes(StandardCharsets.US_ASCII);
    static final int FORMAT_VERSION = 1;
    static final int HEADER_BYTES = 8 + 4 + 4 + 4 + 4 + 8 + 32;
    static final long SHUFFLE_SEED = 20_261_130L;

    private GcideDataset() {}

    /**
     * Where the cached vectors live: {@code $NEPENTHE_DATASETS} or {@code
     * ~/.cache/nepenthe/datasets}.
     */
    public static Path defaultFile() {
        String dir = System.getenv("NEPENTHE_DATASETS");
        Path base =
                dir != null && !dir.isBlank()
                        ? Path.of(dir)
                        : Path.of(
                                System.getProperty("user.home"), ".cache", "nepenthe", "datasets");
        return base.resolve("gcide-minilm-" + MiniLmEmbedder.DIMENSION + ".f32");
    }

    /** Cached vectors, in the file's (shuffled) order. */
    // A carrier of data, never compared or hashed; the rows are handed over, not copied.
    @SuppressWarnings("ArrayRecordComponent")
    public record Vectors(float[][] rows, String sourceSha256) {}

    /**
     * Reads the cache; costs count x dimension x 4 bytes of heap. Throws with the command to run
     * when the file is missing.
     */
    public static Vectors load(Path file) throws IOException {
        if (!Files.exists(file)) {
            throw new IOException(
                    "no cached gcide vectors at "
                            + file
                            + "; run ./nepenthe bench dataset-gcide first (embeds ~150k definitions"
                            + " once)");
        }
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 20);
                DataInputStream in = new DataInputStream(raw)) {
            byte[] head = new byte[HEADER_BYTES];
            in.readFully(head);
            ByteBuffer h = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
            byte[] magic = new byte[8];
            h.get(magic);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new IOException(
                        file
                                + ": expected a Nepenthe dataset file (magic NPDSVEC1), got other"
                                + " bytes");
            }
            int version = h.getInt();
            if (version != FORMAT_VERSION) {
                throw new IOException(
                        file
                                + ": expected dataset format version "
                                + FORMAT_VERSION
                                + ", got "
                                + version);
            }
            int count = h.getInt();
            int dim = h.getInt();
            h.getInt(); // rules version
            h.getLong(); // shuffle seed
            byte[] sha = new byte[32];
            h.get(sha);
            long expected = (long) HEADER_BYTES + 4L * count * dim;
            if (Files.size(file) != expected) {
                throw new IOException(
                        file
                                + ": header says "
                                + count
                                + " x "
                                + dim
                                + " ("
                                + expected
                                + " bytes), file has "
                                + Files.size(file)
                                + " bytes (truncated?)");
            }
            float[][] rows = new float[count][dim];
            byte[] buf = new byte[4 * dim];
            for (int i = 0; i < count; i++) {
                in.readFully(buf);
                ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(rows[i]);
            }
            return new Vectors(rows, HexFormat.of().formatHex(sha));
        }
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String s : argv) {
            int eq = s.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(
                        "argument '"
                                + s
                                + "': expected name=value; usage: dataset-gcide"
                                + " [dict=/usr/share/dictd/gcide.dict.dz] [out=FILE] [limit=0"
                                + " (all)] [threads=2] [batch=64]");
            }
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        Path dict = Path.of(a.getOrDefault("dict", GcideDefinitions.DEFAULT_DICT.toString()));
        Path out = Path.of(a.getOrDefault("out", defaultFile().toString()));
        int limit = Integer.parseInt(a.getOrDefault("limit", "0"));
        int threads = Integer.parseInt(a.getOrDefault("threads", "2"));
        int batch = Integer.parseInt(a.getOrDefault("batch", "64"));
        build(dict, out, limit, threads, batch);
    }

    /**
     * The dictionary's definitions in the cache's row order (parsed, deduplicated, shuffled with
     * the dataset's fixed seed): row i of a cache built from this dictionary is the embedding of
     * text i. Costs the parse of the whole dictionary, and its text on the heap for a moment.
     */
    public static List<String> textsInRowOrder(Path dict) throws IOException {
        List<String> texts = new ArrayList<>(GcideDefinitions.parse(dict));
        Collections.shuffle(texts, new Random(SHUFFLE_SEED));
        return texts;
    }

    /** The seed of the row order (see {@link #textsInRowOrder}). */
    public static long shuffleSeed() {
        return SHUFFLE_SEED;
    }

    /** SHA-256 of a file, hex: what a cache's {@link Vectors#sourceSha256()} is compared with. */
    public static String sha256Hex(Path file) throws IOException {
        return HexFormat.of().formatHex(sha256(file));
    }

    static byte[] sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int r; (r = in.read(buf)) > 0; ) {
                md.update(buf, 0, r);
            }
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * 1. parse and dedupe the definitions; 2. shuffle them with the fixed seed; 3. embed in batches
     * on {@code threads} threads, appending to the partial file (resuming if one for the same
     * source exists); 4. write header + rows and rename into place.
     */
    static void build(Path dict, Path out, int limit, int threads, int batch) throws Exception {
        byte[] sha = sha256(dict);
        if (Files.exists(out)) {
            Vectors v = load(out);
            if (v.sourceSha256().equals(HexFormat.of().formatHex(sha))
                    && (limit == 0 || v.rows().length >= limit)) {
                System.err.printf(
                        Locale.ROOT,
                        "dataset-gcide: %s already holds %d vectors of this dictionary%n",
                        out,
                        v.rows().length);
                return;
            }
        }
        // 1-2.
        long t0 = System.nanoTime();
        List<String> texts = textsInRowOrder(dict);
        if (limit > 0 && limit < texts.size()) {
            texts = texts.subList(0, limit);
        }
        int dim = MiniLmEmbedder.DIMENSION;
        System.err.printf(
                Locale.ROOT,
                "dataset-gcide: %d definitions parsed in %.1f s%n",
                texts.size(),
                (System.nanoTime() - t0) / 1e9);

        // 3. The partial file is named after the source hash, so rows from another dictionary
        // version are never mixed in.
        Files.createDirectories(out.getParent());
        Path partial =
                out.resolveSibling(
                        out.getFileName() + "." + HexFormat.of().formatHex(sha, 0, 8) + ".partial");
        long rowBytes = 4L * dim;
        int done = Files.exists(partial) ? (int) (Files.size(partial) / rowBytes) : 0;
        if (done > 0) {
            System.err.printf(
                    Locale.ROOT, "dataset-gcide: resuming after %d rows in %s%n", done, partial);
        }
        MiniLmEmbedder embedder = new MiniLmEmbedder();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long start = System.nanoTime();
        int startDone = done;
        try (var ch =
                Files.newByteChannel(
                        partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.truncate(done * rowBytes);
            ch.position(done * rowBytes);
            long lastPrint = 0;
            int chunk = batch * threads;
            while (done < texts.size()) {
                int from = done;
                int to = Math.min(texts.size(), from + chunk);
                List<Future<List<float[]>>> parts = new ArrayList<>();
                for (int s = from; s < to; s += batch) {
                    List<String> slice = texts.subList(s, Math.min(to, s + batch));
                    parts.add(
                            pool.submit(
                                    () -> {
                                        List<float[]> r = new ArrayList<>(slice.size());
                                        for (String t : slice) {
                                            r.add(embedder.embed(t));
                                        }
                                        return r;
                                    }));
                }
                ByteBuffer bb =
                        ByteBuffer.allocate((int) ((to - from) * rowBytes))
                                .order(ByteOrder.LITTLE_ENDIAN);
                for (Future<List<float[]>> f : parts) {
                    for (float[] v : f.get()) {
                        if (v.length != dim) {
                            throw new IllegalStateException(
                                    "embedder returned "
                                            + v.length
                                            + " dimensions, expected "
                                            + dim);
                        }
                        for (float x : v) {
                            bb.putFloat(x);
                        }
                    }
                }
                bb.flip();
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
                done = to;
                long now = System.nanoTime();
                if (now - lastPrint > 30e9 || done == texts.size()) {
                    lastPrint = now;
                    double rate = (done - startDone) / ((now - start) / 1e9);
                    System.err.printf(
                            Locale.ROOT,
                            "dataset-gcide: %d / %d embedded, %.0f texts/s, about %.0f min left%n",
                            done,
                            texts.size(),
                            rate,
                            (texts.size() - done) / rate / 60);
                }
            }
        } finally {
            pool.shutdown();
        }
        // 4.
        Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
        try (OutputStream o = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 20);
                InputStream rows = Files.newInputStream(partial)) {
            ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            h.put(MAGIC)
                    .putInt(FORMAT_VERSION)
                    .putInt(texts.size())
                    .putInt(dim)
                    .putInt(GcideDefinitions.RULES_VERSION)
                    .putLong(SHUFFLE_SEED)
                    .put(sha);
            o.write(h.array());
            rows.transferTo(o);
        }
        Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.delete(partial);
        System.err.printf(
                Locale.ROOT,
                "dataset-gcide: wrote %d x %d vectors to %s%n",
                texts.size(),
                dim,
                out);
    }
}
