package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.data.AnnHdf5;
import dev.nepenthe.bench.data.GcideDataset;
import dev.nepenthe.bench.data.VecFiles;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.IntStream;
import org.roaringbitmap.RoaringBitmap;

/**
 * The harnesses' data: seeded clustered vectors (L2), seeded low-rank clusters (cosine) or the
 * cached gcide MiniLM embeddings (cosine), with held-out queries and exact answers.
 */
final class BenchData {
    final float[][] data;
    final float[][] queries;
    final Metric metric;

    /** One line naming the data for the printed tables. */
    final String description;

    BenchData(long seed, int n, int queryCount, int dim, int clusters, double spread) {
        float[][] all = Datasets.clustered(seed, n + queryCount, dim, clusters, spread);
        this.data = Arrays.copyOf(all, n);
        this.queries = Arrays.copyOfRange(all, n, n + queryCount);
        this.metric = Metric.L2;
        this.description =
                String.format(
                        Locale.ROOT,
                        "seeded clustered (%d clusters, spread %.2f), d=%d, L2",
                        clusters,
                        spread,
                        dim);
    }

    private BenchData(float[][] data, float[][] queries, Metric metric, String description) {
        this.data = data;
        this.queries = queries;
        this.metric = metric;
        this.description = description;
    }

    /**
     * The {@code data=} argument: {@code synthetic} (default), {@code lowrank}, {@code gcide},
     * {@code files} (a user's {@code base=} and {@code query=} .fvecs/.bvecs files, {@code
     * metric=L2|COSINE|DOT}) or {@code hdf5} (an ann-benchmarks {@code file=}; its neighbors serve
     * as the truth when {@code n} is the whole train set, else the truth is computed). For gcide
     * the base is the first n rows of the cache and the queries its last {@code queryCount} rows
     * (definitions never inserted); the vectors are prepared for cosine (unit length), so every
     * engine may score them with a dot product.
     */
    static BenchData from(BenchArgs a, int n, int queryCount, int defaultDim) throws IOException {
        String kind = a.s("data", "synthetic");
        return switch (kind) {
            case "synthetic" -> synthetic(a, n, queryCount, defaultDim);
            case "lowrank" -> lowRank(a, n, queryCount, defaultDim);
            case "gcide" -> gcide(a, n, queryCount);
            case "files" -> files(a, n, queryCount);
            case "hdf5" -> hdf5(a, n, queryCount);
            default ->
                    throw new IllegalArgumentException(
                            "data: expected synthetic, lowrank, gcide, files or hdf5, got '"
                                    + kind
                                    + "'");
        };
    }

    private static BenchData synthetic(BenchArgs a, int n, int queryCount, int defaultDim) {
        return new BenchData(
                a.i("seed", 7),
                n,
                queryCount,
                a.i("dim", defaultDim),
                a.i("clusters", 100),
                a.d("spread", 0.3));
    }

    private static BenchData lowRank(BenchArgs a, int n, int queryCount, int defaultDim) {
        // The open bench's data (100 clusters each near its own 16-dimensional plane,
        // the
        // low intrinsic dimension of real embeddings), prepared for cosine as gcide is.
        int dim = a.i("dim", defaultDim);
        int clusters = a.i("clusters", 100);
        int rank = a.i("rank", 16);
        double spread = a.d("spread", 0.3);
        float[][] all =
                Datasets.lowRank(a.i("seed", 7), n + queryCount, dim, clusters, rank, spread);
        IntStream.range(0, all.length)
                .parallel()
                .forEach(i -> all[i] = Metric.COSINE.prepare(all[i]));
        return new BenchData(
                Arrays.copyOf(all, n),
                Arrays.copyOfRange(all, n, n + queryCount),
                Metric.COSINE,
                String.format(
                        Locale.ROOT,
                        "seeded low-rank (%d clusters near %d-dimensional planes,"
                                + " spread %.2f), d=%d, cosine",
                        clusters,
                        rank,
                        spread,
                        dim));
    }

    private static BenchData gcide(BenchArgs a, int n, int queryCount) throws IOException {
        Path file = Path.of(a.s("file", GcideDataset.defaultFile().toString()));
        float[][] rows = GcideDataset.load(file).rows();
        if (n + queryCount > rows.length) {
            throw new IllegalArgumentException(
                    "data=gcide: n + queries = "
                            + (n + queryCount)
                            + " but the cache "
                            + file
                            + " holds "
                            + rows.length
                            + " vectors");
        }
        float[][] base = new float[n][];
        for (int i = 0; i < n; i++) {
            base[i] = Metric.COSINE.prepare(rows[i]);
        }
        float[][] q = new float[queryCount][];
        for (int i = 0; i < queryCount; i++) {
            q[i] = Metric.COSINE.prepare(rows[rows.length - queryCount + i]);
        }
        BenchData d =
                new BenchData(
                        base,
                        q,
                        Metric.COSINE,
                        "gcide definitions, all-MiniLM-L6-v2, d="
                                + base[0].length
                                + ", cosine ("
                                + rows.length
                                + " cached, queries are the last "
                                + queryCount
                                + ")");
        // Named by the vectors' own modification time too, so a rebuilt cache never
        // meets old answers.
        d.truthCache =
                file.resolveSibling(
                        file.getFileName()
                                + ".truth-n"
                                + n
                                + "-q"
                                + queryCount
                                + "-"
                                + Files.getLastModifiedTime(file).toMillis()
                                + ".ivecs");
        return d;
    }

    private static BenchData files(BenchArgs a, int n, int queryCount) throws IOException {
        // A user's own set: SIFT, GIST or GloVe as .fvecs/.bvecs, scored as the metric=
        // says.
        String baseFile = a.s("base", "");
        String queryFile = a.s("query", "");
        if (baseFile.isEmpty() || queryFile.isEmpty()) {
            throw new IllegalArgumentException(
                    "data=files: expected base=FILE and query=FILE (.fvecs or .bvecs),"
                            + " got base='"
                            + baseFile
                            + "', query='"
                            + queryFile
                            + "'");
        }
        Metric metric = metric(a.s("metric", "L2"));
        float[][] base = VecFiles.readVectors(Path.of(baseFile), n);
        float[][] q = VecFiles.readVectors(Path.of(queryFile), queryCount);
        if (base.length < n || q.length < queryCount || base[0].length != q[0].length) {
            throw new IllegalArgumentException(
                    "data=files: expected "
                            + n
                            + " base and "
                            + queryCount
                            + " query vectors of one dimension, got "
                            + base.length
                            + " of d="
                            + base[0].length
                            + " in "
                            + baseFile
                            + " and "
                            + q.length
                            + " of d="
                            + q[0].length
                            + " in "
                            + queryFile);
        }
        if (metric == Metric.COSINE) {
            Arrays.setAll(base, i -> Metric.COSINE.prepare(base[i]));
            Arrays.setAll(q, i -> Metric.COSINE.prepare(q[i]));
        }
        BenchData d =
                new BenchData(
                        base,
                        q,
                        metric,
                        String.format(
                                Locale.ROOT,
                                "files %s and %s, d=%d, %s",
                                baseFile,
                                queryFile,
                                base[0].length,
                                metric));
        String truthFile = a.s("truth", "");
        if (!truthFile.isEmpty()) {
            d.givenTruth = VecFiles.readIvecs(Path.of(truthFile), queryCount);
            d.truthSource = truthFile;
        }
        return d;
    }

    private static BenchData hdf5(BenchArgs a, int n, int queryCount) throws IOException {
        // An ann-benchmarks file: its train rows are the base, its test rows the
        // queries.
        String file = a.s("file", "");
        if (file.isEmpty()) {
            throw new IllegalArgumentException(
                    "data=hdf5: expected file=FILE.hdf5 (an ann-benchmarks file), got" + " none");
        }
        AnnHdf5.AnnSet set = AnnHdf5.read(Path.of(file), n, queryCount);
        float[][] base = set.train();
        float[][] q = set.test();
        if (set.metric() == Metric.COSINE) {
            Arrays.setAll(base, i -> Metric.COSINE.prepare(base[i]));
            Arrays.setAll(q, i -> Metric.COSINE.prepare(q[i]));
        }
        BenchData d =
                new BenchData(
                        base,
                        q,
                        set.metric(),
                        String.format(
                                Locale.ROOT,
                                "%s (first %d of %d train rows, %d test rows), d=%d," + " %s",
                                file,
                                n,
                                set.trainRows(),
                                queryCount,
                                base[0].length,
                                set.metric()));
        if (n == set.trainRows()) {
            // The file's answers are over its whole train set: good only when the run
            // reads all of it.
            d.givenTruth = set.neighbors();
            d.truthSource = file + " (neighbors)";
        }
        return d;
    }

    /** Exact answers the user gave with the files (truth=), for every query, or null. */
    private int[][] givenTruth;

    private String truthSource;

    /**
     * Where the exact answers over the whole base are cached (gcide: beside the vectors, outside
     * the repository), or null; written by the first run that computes them at a k at least as
     * large.
     */
    private Path truthCache;

    private static Metric metric(String name) {
        for (Metric m : Metric.values()) {
            if (m.name().equalsIgnoreCase(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "metric: expected one of "
                        + Arrays.toString(Metric.values())
                        + ", got '"
                        + name
                        + "'");
    }

    /**
     * Exact top-k of every query among {@code live} (null: all): the user's truth file or the cache
     * when they hold the whole base's answers to k, else by brute force (and cached).
     */
    int[][] truth(int k, RoaringBitmap live) {
        if (live == null && givenTruth != null) {
            return prefix(givenTruth, k, truthSource);
        }
        if (live == null && truthCache != null && Files.isRegularFile(truthCache)) {
            try {
                int[][] cached = VecFiles.readIvecs(truthCache, queries.length);
                if (cached.length == queries.length && cached[0].length >= k) {
                    return prefix(cached, k, truthCache.toString());
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        int[][] computed = bruteForce(k, live);
        if (live == null && truthCache != null) {
            try {
                Path tmp = truthCache.resolveSibling(truthCache.getFileName() + ".tmp");
                VecFiles.writeIvecs(tmp, computed);
                Files.move(
                        tmp,
                        truthCache,
                        StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                System.err.println(
                        "bench: could not cache the exact answers at "
                                + truthCache
                                + ": "
                                + e.getMessage());
            }
        }
        return computed;
    }

    private int[][] prefix(int[][] rows, int k, String source) {
        if (rows.length < queries.length || rows[0].length < k) {
            throw new IllegalArgumentException(
                    source
                            + ": expected the "
                            + k
                            + " nearest of each of "
                            + queries.length
                            + " queries, found "
                            + rows.length
                            + " rows of "
                            + rows[0].length);
        }
        int[][] out = new int[queries.length][];
        for (int q = 0; q < queries.length; q++) {
            out[q] = Arrays.copyOf(rows[q], k);
            for (int ord : out[q]) {
                if (ord < 0 || ord >= data.length) {
                    throw new IllegalArgumentException(
                            source
                                    + ": query "
                                    + q
                                    + " names base vector "
                                    + ord
                                    + ", but the"
                                    + " run reads "
                                    + data.length
                                    + " (its answers are over a larger base: give n= its full size,"
                                    + " or leave the truth out to compute it)");
                }
            }
        }
        return out;
    }

    private int[][] bruteForce(int k, RoaringBitmap live) {
        ExactIndex exact = new ExactIndex(data[0].length, metric);
        for (int i = 0; i < data.length; i++) {
            if (live == null || live.contains(i)) {
                exact.add(i, data[i]);
            }
        }
        int[][] out = new int[queries.length][];
        for (int q = 0; q < queries.length; q++) {
            out[q] = exact.search(queries[q], k).ordinals();
        }
        return out;
    }

    static double recall(int[][] truth, int[][] got) {
        double sum = 0;
        for (int q = 0; q < truth.length; q++) {
            int hit = 0;
            for (int t : truth[q]) {
                for (int g : got[q]) {
                    if (g == t) {
                        hit++;
                        break;
                    }
                }
            }
            sum += truth[q].length == 0 ? 1 : hit / (double) truth[q].length;
        }
        return sum / truth.length;
    }

    static String machine() {
        return Machine.describe();
    }
}
