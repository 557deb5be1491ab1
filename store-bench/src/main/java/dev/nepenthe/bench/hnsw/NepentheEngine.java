package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import dev.nepenthe.hnsw.HnswIndex;
import dev.nepenthe.hnsw.HnswParams;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Nepenthe's HNSW (store-hnsw), L2 or cosine, on the kernels it is given: {@code nepenthe} runs the
 * process's choice ({@link Kernels#get()}), {@code nepenthe-256} and {@code nepenthe-512} the
 * Vector API kernels at that width ({@link #ourKernels(int)}).
 */
final class NepentheEngine implements AnnEngine {
    private final String name;
    private final VectorKernels kernels;
    private final HnswParams params;
    private final int threads;
    private final Metric metric;
    HnswIndex index;

    NepentheEngine(int m, int efConstruction, int threads, Metric metric) {
        this(HnswParams.of(m, efConstruction), threads, metric);
    }

    NepentheEngine(HnswParams params, int threads, Metric metric) {
        this("nepenthe", Kernels.get(), params, threads, metric);
    }

    NepentheEngine(
            String name, VectorKernels kernels, HnswParams params, int threads, Metric metric) {
        this.name = name;
        this.kernels = kernels;
        this.params = params;
        this.threads = threads;
        this.metric = metric;
    }

    /**
     * Our Vector API kernels fixed at {@code vectorBits} (256 or 512) rather than the JVM's
     * preferred width, so a 512-bit machine measures what an AVX2 machine would run too. A width
     * the CPU does not run natively is refused with the reason.
     */
    static VectorKernels ourKernels(int vectorBits) {
        return Kernels.panama(vectorBits);
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * The heap arrays per vector, from the layout (HnswGraph): float32 vectors, int8 codes when
     * quantized (corrections first, padded to whole ints), and the layer-0 list (count plus 2M
     * neighbours) with as many reverse entries; upper layers add about 1/M of that.
     */
    @Override
    public List<Part> footprint() {
        boolean ownStorage = donor != null && donor.params.storage() != params.storage();
        if (sameIndex != null || (donor != null && !ownStorage) || index == null) {
            return List.of();
        }
        long n = index.size();
        int dim = index.dimension();
        List<Part> parts = new ArrayList<>();
        parts.add(
                new Part(
                        params.storage() == HnswParams.VectorStorage.OFF_HEAP
                                ? "float32 vectors (native memory)"
                                : "float32 vectors (heap)",
                        n * dim * 4L));
        if (params.quantization() == HnswParams.Quantization.INT8) {
            parts.add(
                    new Part(
                            "int8 codes with 16 bytes of corrections (heap)",
                            n * (16L + ((dim + 3) / 4) * 4L)));
        }
        parts.add(
                new Part(
                        "layer-0 lists and reverse lists (heap)",
                        n * (1L + 2L * params.m()) * 4L * 2L));
        return parts;
    }

    @Override
    public String buildNote() {
        if (sameIndex != null) {
            return "searches "
                    + sameIndex.name
                    + "'s index, re-ranking "
                    + (rerank == Integer.MAX_VALUE ? "the whole beam" : rerank + " candidates")
                    + " exactly (no build)";
        }
        if (donor != null) {
            return "the graph "
                    + donor.name
                    + " built, saved and loaded with kernels "
                    + kernels.name()
                    + (params.storage() == HnswParams.VectorStorage.OFF_HEAP
                            ? ", its floats off the heap"
                            : "")
                    + " (build time is the load)";
        }
        if (params.quantization() != HnswParams.Quantization.NONE) {
            return "HnswIndex.add of every vector (graph built on floats, int8 codes beside them), "
                    + threads
                    + (threads == 1 ? " thread" : " threads")
                    + ", kernels "
                    + kernels.name();
        }
        return "HnswIndex.add of every vector, "
                + threads
                + (threads == 1 ? " thread" : " threads")
                + ", kernels "
                + kernels.name();
    }

    /**
     * Takes {@code donor}'s graph instead of building one: saved and loaded with this engine's
     * kernels. A single-threaded build is the same graph bit for bit at any kernel width (the
     * kernels agree to the bit and the build is seeded), so rebuilding it per width would only
     * spend minutes; the build table says which engine's build it shares. The graph is loaded with
     * this engine's vector storage, so an off-heap engine searches the donor's very graph.
     */
    void shareGraphOf(NepentheEngine donor) {
        this.donor = donor;
    }

    private NepentheEngine donor;

    /**
     * When set, this engine searches that engine's index (same graph and codes) with its own rerank
     * depth.
     */
    private NepentheEngine sameIndex;

    /** Candidates re-ranked exactly per query in int8 mode; 0 keeps the index default (2k). */
    private int rerank;

    /**
     * Searches {@code other}'s index (built once) re-ranking {@code rerank} candidates per query.
     */
    void searchIndexOf(NepentheEngine other, int rerank) {
        this.sameIndex = other;
        this.rerank = rerank;
    }

    @Override
    public void build(float[][] data) {
        if (sameIndex != null) {
            index = sameIndex.index;
            return;
        }
        boolean otherStorage = donor != null && donor.params.storage() != params.storage();
        if (donor != null
                && donor.index != null
                && (otherStorage || (threads <= 1 && donor.threads <= 1))) {
            try {
                Path file = Files.createTempFile("nepenthe-graph", ".hnsw");
                try {
                    donor.index.save(file);
                    index =
                            HnswIndex.load(
                                    new IndexConfig(
                                            data[0].length,
                                            metric,
                                            Map.of(
                                                    HnswParams.VECTORS,
                                                    params.storage().paramValue()),
                                            42L),
                                    file,
                                    kernels);
                } finally {
                    Files.deleteIfExists(file);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return;
        }
        index = new HnswIndex(data[0].length, metric, params, kernels, data.length);
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
                fs.add(
                        pool.submit(
                                () -> {
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
        SearchParams p = SearchParams.of("efSearch", ef);
        return index.search(
                        query, k, Accept.ALL, rerank > 0 ? p.with(HnswParams.RERANK, rerank) : p)
                .ordinals();
    }
}
