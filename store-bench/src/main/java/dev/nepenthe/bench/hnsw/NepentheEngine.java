package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.hnsw.HnswIndex;
import dev.nepenthe.hnsw.HnswParams;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Nepenthe's HNSW (store-hnsw), L2 or cosine. */
final class NepentheEngine implements AnnEngine {
    private final HnswParams params;
    private final int threads;
    private final Metric metric;
    HnswIndex index;

    NepentheEngine(int m, int efConstruction, int threads, Metric metric) {
        this(HnswParams.of(m, efConstruction), threads, metric);
    }

    NepentheEngine(HnswParams params, int threads, Metric metric) {
        this.params = params;
        this.threads = threads;
        this.metric = metric;
    }

    @Override
    public String name() {
        return "nepenthe";
    }

    @Override
    public void build(float[][] data) {
        index = new HnswIndex(data[0].length, metric, params, Kernels.get(), data.length);
        if (threads <= 1) {
            for (int i = 0; i < data.length; i++) {
                index.add(i, data[i]);
            }
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int start = t;
                fs.add(pool.submit(() -> {
                    for (int i = start; i < data.length; i += threads) {
                        index.add(i, data[i]);
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } catch (Exception e) {
            throw new IllegalStateException("parallel build failed", e);
        } finally {
            pool.shutdown();
        }
        index.connectUnreachable();
    }

    @Override
    public int[] search(float[] query, int k, int ef) {
        return index.search(query, k, Accept.ALL, SearchParams.of("efSearch", ef)).ordinals();
    }
}
