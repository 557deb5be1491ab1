package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.ExactIndex;
import dev.nepenthe.core.testing.Datasets;
import java.util.Arrays;
import org.roaringbitmap.RoaringBitmap;

/** Seeded clustered vectors, held-out queries from the same distribution, exact answers. */
final class BenchData {
    final float[][] data;
    final float[][] queries;

    BenchData(long seed, int n, int queryCount, int dim, int clusters, double spread) {
        float[][] all = Datasets.clustered(seed, n + queryCount, dim, clusters, spread);
        this.data = Arrays.copyOf(all, n);
        this.queries = Arrays.copyOfRange(all, n, n + queryCount);
    }

    /** Exact top-k of every query among {@code live} (null: all), by brute force. */
    int[][] truth(int k, RoaringBitmap live) {
        ExactIndex exact = new ExactIndex(data[0].length, Metric.L2);
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
        return Runtime.getRuntime().availableProcessors() + " cores (shared), " + System.getProperty("java.vm.name") + " "
                + System.getProperty("java.version") + ", kernels " + dev.nepenthe.core.vector.Kernels.get().name();
    }
}
