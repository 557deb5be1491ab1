package dev.nepenthe.bench.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.hnsw.HnswParams;
import java.util.ArrayList;
import java.util.List;

/**
 * Which engines the HNSW comparison runs: the names {@code engines=} and {@code quantized=} accept,
 * and the Java engines made from them in build order, an engine that searches another's index right
 * after the one it borrows from.
 */
final class CompareEngines {

    static final List<String> FLOAT_ENGINES =
            List.of("nepenthe", "lucene", "jvector", "hnswlib", "faiss");
    static final List<String> QUANTIZED_ENGINES =
            List.of(
                    "nepenthe-int8",
                    "nepenthe-int8-beam",
                    "lucene-int7",
                    "lucene-bbq",
                    "jvector-pq",
                    "faiss-sq8");
    static final List<String> ALL_ENGINES =
            List.of(
                    "nepenthe",
                    "nepenthe-256",
                    "nepenthe-512",
                    "nepenthe-int8",
                    "nepenthe-int8-beam",
                    "nepenthe-offheap",
                    "nepenthe-int8-offheap",
                    "lucene",
                    "lucene-util",
                    "lucene-int7",
                    "lucene-bbq",
                    "jvector",
                    "jvector-pq",
                    "hnswlib",
                    "faiss",
                    "faiss-sq8");

    private CompareEngines() {}

    /**
     * The {@code engines=} list (default the float set) plus the quantized set when {@code
     * quantized=true}.
     */
    static List<String> engineNames(BenchArgs a) {
        List<String> names = new ArrayList<>();
        for (String s : a.s("engines", String.join(",", FLOAT_ENGINES)).split(",", -1)) {
            String name = s.trim();
            if (!ALL_ENGINES.contains(name)) {
                throw new IllegalArgumentException(
                        "engine '" + name + "': expected one of " + ALL_ENGINES);
            }
            if (!names.contains(name)) {
                names.add(name);
            }
        }
        if (Boolean.parseBoolean(a.s("quantized", "false"))) {
            for (String q : QUANTIZED_ENGINES) {
                if (!names.contains(q)) {
                    names.add(q);
                }
            }
        }
        return names;
    }

    /**
     * The Java engines in build order; an engine that searches another's index comes right after it
     * (lucene-int7 then lucene-int7+rescore; jvector before jvector-pq, added if not asked for).
     */
    static List<AnnEngine> javaEngines(
            List<String> names, int m, int efc, Metric metric, int oversample, int pqSubspaces) {
        List<AnnEngine> out = new ArrayList<>();
        JVectorEngine jvector = null;
        NepentheEngine ours = null;
        NepentheEngine int8 = null;
        HnswParams params = HnswParams.of(m, efc);
        for (String name : names) {
            switch (name) {
                case "nepenthe" -> {
                    ours = new NepentheEngine(name, Kernels.get(), params, 1, metric);
                    out.add(ours);
                }
                case "nepenthe-int8" -> {
                    int8 =
                            new NepentheEngine(
                                    name,
                                    Kernels.get(),
                                    params.withQuantization(HnswParams.Quantization.INT8),
                                    1,
                                    metric);
                    out.add(int8);
                }
                case "nepenthe-int8-beam" -> {
                    // The same int8 index, re-ranking the whole beam instead of the default 2k.
                    if (int8 == null) {
                        int8 =
                                new NepentheEngine(
                                        "nepenthe-int8",
                                        Kernels.get(),
                                        params.withQuantization(HnswParams.Quantization.INT8),
                                        1,
                                        metric);
                        out.add(int8);
                    }
                    NepentheEngine e = new NepentheEngine(name, Kernels.get(), params, 1, metric);
                    e.searchIndexOf(int8, Integer.MAX_VALUE);
                    out.add(e);
                }
                case "nepenthe-offheap", "nepenthe-int8-offheap" -> {
                    // The same graph as nepenthe or nepenthe-int8 (built first if not asked for),
                    // loaded with its vectors off the heap.
                    boolean quantized = name.equals("nepenthe-int8-offheap");
                    NepentheEngine donor = quantized ? int8 : ours;
                    if (donor == null) {
                        donor =
                                new NepentheEngine(
                                        quantized ? "nepenthe-int8" : "nepenthe",
                                        Kernels.get(),
                                        quantized
                                                ? params.withQuantization(
                                                        HnswParams.Quantization.INT8)
                                                : params,
                                        1,
                                        metric);
                        out.add(donor);
                        if (quantized) {
                            int8 = donor;
                        } else {
                            ours = donor;
                        }
                    }
                    HnswParams own =
                            (quantized
                                            ? params.withQuantization(HnswParams.Quantization.INT8)
                                            : params)
                                    .withStorage(HnswParams.VectorStorage.OFF_HEAP);
                    NepentheEngine e = new NepentheEngine(name, Kernels.get(), own, 1, metric);
                    e.shareGraphOf(donor);
                    out.add(e);
                }
                case "nepenthe-256", "nepenthe-512" -> {
                    int bits = Integer.parseInt(name.substring(name.indexOf('-') + 1));
                    NepentheEngine e;
                    try {
                        e =
                                new NepentheEngine(
                                        name, NepentheEngine.ourKernels(bits), params, 1, metric);
                    } catch (IllegalArgumentException | IllegalStateException x) {
                        throw new IllegalArgumentException(
                                "engine " + name + ": " + x.getMessage(), x);
                    }
                    if (ours != null) {
                        e.shareGraphOf(ours);
                    }
                    out.add(e);
                }
                case "lucene" ->
                        out.add(new LuceneEngine(m, efc, metric, LuceneEngine.Format.FLOAT, false));
                case "lucene-util" -> out.add(new LuceneUtilEngine(m, efc, metric));
                case "lucene-int7", "lucene-bbq" -> {
                    LuceneEngine quantized =
                            new LuceneEngine(
                                    m,
                                    efc,
                                    metric,
                                    name.equals("lucene-int7")
                                            ? LuceneEngine.Format.INT7
                                            : LuceneEngine.Format.BBQ,
                                    false);
                    out.add(quantized);
                    out.add(quantized.rescored(oversample));
                }
                case "jvector", "jvector-pq" -> {
                    if (jvector == null) {
                        jvector = new JVectorEngine(m, efc, metric);
                        out.add(jvector);
                    }
                    if (name.equals("jvector-pq")) {
                        out.add(new JVectorPqEngine(jvector, pqSubspaces));
                    }
                }
                default -> {
                    // a peer (hnswlib, faiss, faiss-sq8): run after the Java engines
                }
            }
        }
        return out;
    }
}
