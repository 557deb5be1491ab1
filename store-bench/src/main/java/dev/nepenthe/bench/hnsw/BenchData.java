package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.testing.Datasets;
import java.util.Arrays;
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
        this.description = String.format(java.util.Locale.ROOT, "seeded clustered (%d clusters, spread %.2f), d=%d, L2",
                clusters, spread, dim);
    }

    private BenchData(float[][] data, float[][] queries, Metric metric, String description) {
        this.data = data;
        this.queries = queries;
        this.metric = metric;
        this.description = description;
    }

    /**
     * The {@code data=} argument: {@code synthetic} (default), {@code lowrank} or {@code gcide}. For gcide the
     * base is the first n rows of the cache and the queries its last {@code queryCount} rows
     * (definitions never inserted); the vectors are prepared for cosine (unit length), so every
     * engine may score them with a dot product.
     */
    static BenchData from(BenchArgs a, int n, int queryCount, int defaultDim) throws java.io.IOException {
        String kind = a.s("data", "synthetic");
        switch (kind) {
            case "synthetic":
                return new BenchData(a.i("seed", 7), n, queryCount, a.i("dim", defaultDim), a.i("clusters", 100),
                        a.d("spread", 0.3));
            case "lowrank": {
                // The open bench's data (100 clusters each near its own 16-dimensional plane, the
                // low intrinsic dimension of real embeddings), prepared for cosine as gcide is.
                int dim = a.i("dim", defaultDim);
                int clusters = a.i("clusters", 100);
                int rank = a.i("rank", 16);
                double spread = a.d("spread", 0.3);
                float[][] all = Datasets.lowRank(a.i("seed", 7), n + queryCount, dim, clusters, rank, spread);
                java.util.stream.IntStream.range(0, all.length).parallel().forEach(i -> all[i] = Metric.COSINE.prepare(all[i]));
                return new BenchData(Arrays.copyOf(all, n), Arrays.copyOfRange(all, n, n + queryCount), Metric.COSINE,
                        String.format(java.util.Locale.ROOT, "seeded low-rank (%d clusters near %d-dimensional planes,"
                                + " spread %.2f), d=%d, cosine", clusters, rank, spread, dim));
            }
            case "gcide": {
                java.nio.file.Path file = java.nio.file.Path.of(a.s("file",
                        dev.nepenthe.bench.data.GcideDataset.defaultFile().toString()));
                float[][] rows = dev.nepenthe.bench.data.GcideDataset.load(file).rows();
                if (n + queryCount > rows.length) {
                    throw new IllegalArgumentException("data=gcide: n + queries = " + (n + queryCount)
                            + " but the cache " + file + " holds " + rows.length + " vectors");
                }
                float[][] base = new float[n][];
                for (int i = 0; i < n; i++) {
                    base[i] = Metric.COSINE.prepare(rows[i]);
                }
                float[][] q = new float[queryCount][];
                for (int i = 0; i < queryCount; i++) {
                    q[i] = Metric.COSINE.prepare(rows[rows.length - queryCount + i]);
                }
                return new BenchData(base, q, Metric.COSINE, "gcide definitions, all-MiniLM-L6-v2, d=" + base[0].length
                        + ", cosine (" + rows.length + " cached, queries are the last " + queryCount + ")");
            }
            default:
                throw new IllegalArgumentException("data: expected synthetic, lowrank or gcide, got '" + kind + "'");
        }
    }

    /** Exact top-k of every query among {@code live} (null: all), by brute force. */
    int[][] truth(int k, RoaringBitmap live) {
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
        return dev.nepenthe.bench.Machine.describe();
    }
}
