package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.PeerProcess;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.hnsw.HnswParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Build time, single-thread query throughput against recall@k, memory and multi-thread scaling for
 * Nepenthe's HNSW and its peers, each run the way its users run it, on the same data (seeded
 * clustered vectors, L2, or with {@code data=gcide} the cached MiniLM embeddings of dict-gcide
 * definitions, cosine) with the same M and efConstruction. Prints Markdown tables.
 *
 * <p>Engines ({@code engines=}, default the float set nepenthe, lucene, jvector, hnswlib, faiss;
 * {@code quantized=true} adds lucene-int7, lucene-bbq, jvector-pq and faiss-sq8):
 *
 * <ul>
 *   <li>{@code nepenthe}: {@link NepentheEngine} on the process's kernels; {@code nepenthe-256} and
 *       {@code nepenthe-512} pin our Vector API kernels to that width.
 *   <li>{@code lucene}: {@link LuceneEngine}, an IndexWriter over MMapDirectory and
 *       KnnFloatVectorQuery through an IndexSearcher. {@code lucene-int7} and {@code lucene-bbq}:
 *       the same with Lucene's 7-bit scalar and binary quantized HNSW formats, each also searched
 *       with a full-precision rescore ({@code +rescore}, {@code oversample=}, default 3). {@code
 *       lucene-util}: {@link LuceneUtilEngine}, lucene-core's internal util.hnsw over float[] on
 *       heap, which earlier versions of this harness called "lucene".
 *   <li>{@code jvector}: {@link JVectorEngine}; {@code jvector-pq}: {@link JVectorPqEngine}, the
 *       same graph with PQ scores and an exact rerank ({@code pqSubspaces=}, default dim / 4). It
 *       needs jvector's graph, so it brings the {@code jvector} engine along.
 *   <li>{@code hnswlib} (python3-hnswlib) and {@code faiss} / {@code faiss-sq8} (python3-faiss,
 *       IndexHNSWFlat / IndexHNSWSQ 8-bit) run afterwards in their own processes through {@link
 *       PeerRunner} on the same files.
 * </ul>
 *
 * <p>Single-thread sweep: first one untimed pass over all queries per Java engine at every swept
 * efSearch (the JIT compiles each engine's whole query path, Lucene's query rewrite included,
 * before any timing). Then per efSearch: one pass per Java engine measures recall, then {@code
 * rounds} timed passes over all queries go round-robin over the Java engines, so a burst of load
 * from elsewhere on a shared machine hits every engine alike; QPS is each engine's median pass. The
 * peers run one batched call per pass on one thread, median of {@code rounds}. The "QPS at recall"
 * table takes, for each engine, the smallest swept efSearch whose recall reaches the target.
 *
 * <p>Scaling ({@code threads=}, default 1,2,4; {@code threads=1} skips it): at the ef where each
 * engine first reaches recall 0.95 and 0.99, QPS with T threads issuing queries concurrently. Java
 * engines: a fixed pool of T threads that take queries from one shared counter, one untimed pass,
 * then {@code rounds} passes round-robin over the engines, median. Peers: one batched call with T
 * threads (hnswlib's num_threads, FAISS's omp_set_num_threads), as their users call them, median of
 * {@code rounds}. lucene-util is not measured above one thread (its graph is not safe to share
 * between searching threads).
 */
public final class HnswCompareBench {

    static final String USAGE =
            "hnsw-compare [data=synthetic|lowrank|gcide|files|hdf5] [file=CACHE|FILE.hdf5]"
                + " [base=FILE.fvecs|.bvecs query=FILE truth=FILE.ivecs metric=L2|COSINE|DOT"
                + " (data=files)] [n=100000] [dim=128] [queries=1000] [m=16] [efc=100] [k=10]"
                + " [clusters=100] [rank=16 (lowrank)] [spread=0.3] [seed=7]"
                + " [efs=10,16,24,32,48,64,96,128,192,256,384,512]"
                + " [engines=nepenthe,lucene,jvector,hnswlib,faiss] [quantized=false]"
                + " [threads=1,2,4] [buildThreads=0] [rounds=5] [oversample=3] [pqSubspaces=dim/4]"
                + " [python=/usr/bin/python3] [pythonDir=store-bench/src/main/python]"
                + " [plot=FILE.png (recall against QPS)]\n"
                + "  engines: nepenthe nepenthe-256 nepenthe-512 lucene lucene-util lucene-int7"
                + " lucene-bbq jvector jvector-pq hnswlib faiss faiss-sq8 nepenthe-int8"
                + " nepenthe-int8-beam nepenthe-offheap nepenthe-int8-offheap (the graph of"
                + " nepenthe or nepenthe-int8, its vectors off the heap); quantized=true adds"
                + " nepenthe-int8,nepenthe-int8-beam,lucene-int7,lucene-bbq,jvector-pq,faiss-sq8";

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
    private static final Set<String> ARGUMENTS =
            Set.of(
                    "data",
                    "file",
                    "base",
                    "query",
                    "truth",
                    "metric",
                    "n",
                    "dim",
                    "queries",
                    "m",
                    "efc",
                    "k",
                    "clusters",
                    "rank",
                    "spread",
                    "seed",
                    "efs",
                    "engines",
                    "quantized",
                    "threads",
                    "rounds",
                    "oversample",
                    "pqSubspaces",
                    "python",
                    "pythonDir",
                    "buildThreads",
                    "plot");
    static final double[] SCALING_TARGETS = {0.95, 0.99};
    private static final Map<String, String> PEER_BUILDS =
            Map.of(
                    "hnswlib", "add_items, 1 thread",
                    "faiss", "IndexHNSWFlat.add, 1 OpenMP thread",
                    "faiss-sq8", "IndexHNSWSQ (QT_8bit) train + add, 1 OpenMP thread");

    private HnswCompareBench() {}

    record Point(int ef, double recall, double qps) {}

    /**
     * At one recall target: the ef used (-1: never reached) and QPS per thread count (NaN: not
     * measured).
     */
    record Scaling(int ef, double[] qps) {}

    /** One engine's figures, Java or peer. */
    static final class Result {
        final String name;
        double buildSeconds = Double.NaN;
        String buildNote = "";
        final List<Point> curve = new ArrayList<>();
        final List<AnnEngine.Part> footprint = new ArrayList<>();
        final Map<Double, Scaling> scaling = new LinkedHashMap<>();

        Result(String name) {
            this.name = name;
        }

        /** The smallest swept ef whose recall reaches {@code target}, or null. */
        Point first(double target) {
            return curve.stream().filter(p -> p.recall() >= target).findFirst().orElse(null);
        }
    }

    public static void main(String[] argv) throws Exception {
        // First, before any Lucene class runs: Lucene states its vectorization choice only once.
        String machine = Machine.describe();
        BenchArgs a = new BenchArgs(argv, USAGE);
        a.onlyKnown(ARGUMENTS);
        int n = a.i("n", 100_000);
        int nq = a.i("queries", 1000);
        int m = a.i("m", 16);
        int efc = a.i("efc", 100);
        int k = a.i("k", 10);
        int rounds = a.i("rounds", 5);
        int oversample = a.i("oversample", 3);
        int[] efs = a.ints("efs", new int[] {10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512});
        int[] threads = a.ints("threads", new int[] {1, 2, 4});
        int buildThreads = a.i("buildThreads", 0);
        List<String> names = engineNames(a);
        BenchData d = BenchData.from(a, n, nq, 128);
        int dim = d.data[0].length;
        int pqSubspaces = a.i("pqSubspaces", Math.max(1, dim / 4));
        // Engines are made before the exact answers, so a name that cannot run fails at once.
        List<AnnEngine> engines = javaEngines(names, m, efc, d.metric, oversample, pqSubspaces);
        int[][] truth = d.truth(k, null);

        System.out.printf(
                Locale.ROOT,
                "### HNSW engines side by side: n=%d, %s, M=%d, efConstruction=%d, %d queries,"
                        + " recall@%d%n%n",
                n,
                d.description,
                m,
                efc,
                nq,
                k);
        System.out.println("Machine: " + machine + "\n");

        Map<String, Result> results = new LinkedHashMap<>();
        int oneThreadLost = -1;
        try {
            List<Result> java = new ArrayList<>();
            for (AnnEngine e : engines) {
                Result r = new Result(e.name());
                System.gc();
                long t0 = System.nanoTime();
                e.build(d.data);
                r.buildSeconds = (System.nanoTime() - t0) / 1e9;
                r.buildNote = e.buildNote();
                r.footprint.addAll(e.footprint());
                results.put(r.name, r);
                java.add(r);
                System.err.printf(Locale.ROOT, "%s: build %.1f s%n", e.name(), r.buildSeconds);
            }
            sweep(engines, java, d.queries, truth, k, efs, rounds);
            if (scales(threads)) {
                scale(engines, java, d.queries, k, threads, rounds);
            }
            for (AnnEngine e : engines) {
                if (buildThreads > 1 && e.name().equals("nepenthe")) {
                    oneThreadLost = selfMisses(e, d, k, efs);
                }
            }
        } finally {
            for (AnnEngine e : engines) {
                e.close();
            }
        }
        // Build throughput on several threads, ours against hnswlib's (asked below): the graph
        // is built again, timed, and dropped.
        Map<String, Double> parallelBuild = new LinkedHashMap<>();
        List<String> parallelQuality = new ArrayList<>();
        if (buildThreads > 1 && names.contains("nepenthe")) {
            NepentheEngine again =
                    new NepentheEngine(
                            "nepenthe",
                            Kernels.get(),
                            HnswParams.of(m, efc),
                            buildThreads,
                            d.metric);
            System.gc();
            long t0 = System.nanoTime();
            again.build(d.data);
            parallelBuild.put("nepenthe", (System.nanoTime() - t0) / 1e9);
            parallelQuality =
                    parallelBuildQuality(
                            again, results.get("nepenthe"), oneThreadLost, d, truth, k, efs);
            again.close();
        }

        // The peers run in their own processes after the Java engines (so their passes are not
        // interleaved with the Java ones): same files, same exact answers.
        boolean hnswlib = names.contains("hnswlib");
        List<String> faissIndexes = new ArrayList<>();
        if (names.contains("faiss")) {
            faissIndexes.add("flat");
        }
        if (names.contains("faiss-sq8")) {
            faissIndexes.add("sq8");
        }
        if (hnswlib || !faissIndexes.isEmpty()) {
            List<String> scaling =
                    scales(threads)
                            ? List.of(
                                    "--scale-threads",
                                    PeerRunner.csv(threads),
                                    "--targets",
                                    targets())
                            : List.of();
            try (PeerRunner peers = new PeerRunner(a, d.data, d.queries, truth)) {
                if (hnswlib) {
                    List<String> extra = new ArrayList<>(List.of("--mode", "compare"));
                    extra.addAll(scaling);
                    if (buildThreads > 1) {
                        extra.addAll(List.of("--build-threads", Integer.toString(buildThreads)));
                    }
                    List<PeerProcess.Line> lines =
                            peers.run(PeerRunner.HNSWLIB, d.metric, m, efc, k, efs, rounds, extra);
                    readPeer(PeerRunner.HNSWLIB, lines, results, threads);
                    for (PeerProcess.Line line : lines) {
                        if (line.what().equals("buildThreads")) {
                            parallelBuild.put("hnswlib", line.d("s"));
                        }
                    }
                }
                if (!faissIndexes.isEmpty()) {
                    List<String> extra =
                            new ArrayList<>(List.of("--indexes", String.join(",", faissIndexes)));
                    extra.addAll(scaling);
                    readPeer(
                            PeerRunner.FAISS,
                            peers.run(PeerRunner.FAISS, d.metric, m, efc, k, efs, rounds, extra),
                            results,
                            threads);
                }
            }
        }

        List<Result> all = new ArrayList<>(results.values());
        CompareTables.build(all);
        CompareTables.memory(all, n, dim);
        CompareTables.sweep(all, efs);
        CompareTables.atRecall(all, k);
        String plot = a.s("plot", "");
        if (!plot.isEmpty()) {
            RecallQpsPlot.write(
                    java.nio.file.Path.of(plot),
                    String.format(
                            Locale.ROOT,
                            "n = %,d, %s, M = %d, efConstruction = %d," + " %d queries",
                            n,
                            d.description,
                            m,
                            efc,
                            nq),
                    all);
        }
        if (scales(threads)) {
            CompareTables.scaling(all, threads);
        }
        if (!parallelBuild.isEmpty()) {
            System.out.printf(
                    Locale.ROOT,
                    "%nBuild on %d threads (n=%d, M=%d, efConstruction=%d):%n%n| engine | build (s)"
                            + " | vectors/s |%n|---|---:|---:|%n",
                    buildThreads,
                    n,
                    m,
                    efc);
            parallelBuild.forEach(
                    (engine, sec) ->
                            System.out.printf(
                                    Locale.ROOT, "| %s | %.1f | %.0f |%n", engine, sec, n / sec));
            Double ours = parallelBuild.get("nepenthe"), theirs = parallelBuild.get("hnswlib");
            if (ours != null && theirs != null) {
                System.out.printf(
                        Locale.ROOT,
                        "%nnepenthe's build throughput / hnswlib's: %.2fx%n",
                        theirs / ours);
            }
        }
        parallelQuality.forEach(System.out::println);
    }

    /**
     * About how many vectors, evenly spaced, the parallel build's check searches for themselves.
     */
    private static final int SELF_SAMPLE = 10_000;

    /**
     * What racing inserts cost the graph: recall@k of the graph built on several threads beside the
     * one-thread build's at each swept ef, and how many vectors a search for their own vector (at
     * the largest swept ef) leaves outside their top k in each. A node an insert left on an island,
     * linked to from somewhere but not from near it, is reachable and still not found;
     * near-duplicates that outscore a vector's own copy count here too, in both graphs.
     */
    static List<String> parallelBuildQuality(
            AnnEngine built,
            Result oneThread,
            int oneThreadLost,
            BenchData d,
            int[][] truth,
            int k,
            int[] efs)
            throws Exception {
        List<String> out = new ArrayList<>();
        out.add(
                String.format(
                        Locale.ROOT,
                        "%nThe graph built on several threads, searched like the one-thread"
                            + " build:%n%n| efSearch | recall@%d, one thread | recall@%d, several"
                            + " threads |%n|---:|---:|---:|",
                        k,
                        k));
        for (int ef : efs) {
            double parallel = BenchData.recall(truth, Throughput.answers(built, d.queries, k, ef));
            Point one =
                    oneThread == null
                            ? null
                            : oneThread.curve.stream()
                                    .filter(p -> p.ef() == ef)
                                    .findFirst()
                                    .orElse(null);
            out.add(
                    String.format(
                            Locale.ROOT,
                            "| %d | %s | %.4f |",
                            ef,
                            one == null ? "-" : String.format(Locale.ROOT, "%.4f", one.recall()),
                            parallel));
        }
        int step = Math.max(1, d.data.length / SELF_SAMPLE);
        out.add(
                String.format(
                        Locale.ROOT,
                        "%nVectors outside their own top %d (efSearch %d), of the %d searched (one"
                                + " in %d): one thread %s, several threads %d.",
                        k,
                        Arrays.stream(efs).max().orElse(k),
                        (d.data.length + step - 1) / step,
                        step,
                        oneThreadLost < 0 ? "-" : Integer.toString(oneThreadLost),
                        selfMisses(built, d, k, efs)));
        return out;
    }

    /**
     * How many of the sampled vectors (one in n / {@link #SELF_SAMPLE}) a search for their own
     * vector, at the largest swept ef, leaves outside its top k.
     */
    static int selfMisses(AnnEngine built, BenchData d, int k, int[] efs) throws Exception {
        int ef = Arrays.stream(efs).max().orElse(k);
        int step = Math.max(1, d.data.length / SELF_SAMPLE);
        int lost = 0;
        for (int i = 0; i < d.data.length; i += step) {
            int self = i;
            if (Arrays.stream(built.search(d.data[i], k, ef)).noneMatch(o -> o == self)) {
                lost++;
            }
        }
        return lost;
    }

    /**
     * The {@code engines=} list (default the float set) plus the quantized set when {@code
     * quantized=true}.
     */
    static List<String> engineNames(BenchArgs a) {
        List<String> names = new ArrayList<>();
        for (String s : a.s("engines", String.join(",", FLOAT_ENGINES)).split(",")) {
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

    private static String targets() {
        StringBuilder out = new StringBuilder();
        for (double t : SCALING_TARGETS) {
            out.append(out.isEmpty() ? "" : ",").append(t);
        }
        return out.toString();
    }

    private static boolean scales(int[] threads) {
        return !(threads.length == 1 && threads[0] == 1);
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

    private static void sweep(
            List<AnnEngine> engines,
            List<Result> results,
            float[][] queries,
            int[][] truth,
            int k,
            int[] efs,
            int rounds)
            throws Exception {
        for (AnnEngine e : engines) {
            for (int ef : efs) {
                Throughput.answers(e, queries, k, ef);
            }
        }
        double[][] recalls = new double[efs.length][engines.size()];
        for (int e = 0; e < efs.length; e++) {
            for (int i = 0; i < engines.size(); i++) {
                recalls[e][i] =
                        BenchData.recall(
                                truth, Throughput.answers(engines.get(i), queries, k, efs[e]));
            }
        }
        // Round after round over every efSearch, rather than every round of one efSearch before the
        // next: a slow stretch of the machine (or the JIT still settling) then costs one pass of
        // each efSearch, which the median drops, instead of all the passes of the first one.
        double[][][] passes = new double[efs.length][engines.size()][rounds];
        for (int p = 0; p < rounds; p++) {
            for (int e = 0; e < efs.length; e++) {
                for (int i = 0; i < engines.size(); i++) {
                    passes[e][i][p] = Throughput.pass(engines.get(i), queries, k, efs[e]);
                }
            }
            System.err.printf(Locale.ROOT, "round %d of %d done%n", p + 1, rounds);
        }
        for (int e = 0; e < efs.length; e++) {
            for (int i = 0; i < engines.size(); i++) {
                results.get(i)
                        .curve
                        .add(new Point(efs[e], recalls[e][i], Throughput.median(passes[e][i])));
            }
        }
    }

    private static void scale(
            List<AnnEngine> engines,
            List<Result> results,
            float[][] queries,
            int k,
            int[] threads,
            int rounds)
            throws Exception {
        for (double target : SCALING_TARGETS) {
            for (Result r : results) {
                Point at = r.first(target);
                double[] qps = new double[threads.length];
                Arrays.fill(qps, Double.NaN);
                r.scaling.put(target, new Scaling(at == null ? -1 : at.ef(), qps));
            }
        }
        for (int t = 0; t < threads.length; t++) {
            int count = threads[t];
            ExecutorService pool = Executors.newFixedThreadPool(count);
            try {
                for (double target : SCALING_TARGETS) {
                    List<Integer> measured = new ArrayList<>();
                    for (int i = 0; i < engines.size(); i++) {
                        if (results.get(i).scaling.get(target).ef() >= 0
                                && (count == 1 || engines.get(i).concurrentSearch())) {
                            measured.add(i);
                        }
                    }
                    double[][] passes = new double[engines.size()][rounds];
                    for (int i : measured) {
                        Throughput.pass(
                                pool,
                                count,
                                engines.get(i),
                                queries,
                                k,
                                results.get(i).scaling.get(target).ef());
                    }
                    for (int p = 0; p < rounds; p++) {
                        for (int i : measured) {
                            passes[i][p] =
                                    Throughput.pass(
                                            pool,
                                            count,
                                            engines.get(i),
                                            queries,
                                            k,
                                            results.get(i).scaling.get(target).ef());
                        }
                    }
                    for (int i : measured) {
                        results.get(i).scaling.get(target).qps()[t] = Throughput.median(passes[i]);
                    }
                }
            } finally {
                pool.shutdown();
            }
            System.err.printf(Locale.ROOT, "%d threads done%n", count);
        }
    }

    /**
     * Adds a peer script's build, memory, sweep and scaling lines to the results, by engine name.
     */
    private static void readPeer(
            PeerRunner.Peer peer,
            List<PeerProcess.Line> lines,
            Map<String, Result> results,
            int[] threads) {
        for (PeerProcess.Line line : lines) {
            String engine = line.kv().getOrDefault("engine", peer.tag());
            Result r = results.computeIfAbsent(engine, Result::new);
            switch (line.what()) {
                case "build" -> {
                    r.buildSeconds = line.d("s");
                    r.buildNote = PEER_BUILDS.getOrDefault(engine, "");
                }
                case "memory" ->
                        r.footprint.add(
                                new AnnEngine.Part(line.kv().get("part"), (long) line.d("bytes")));
                case "search" ->
                        r.curve.add(new Point((int) line.d("ef"), line.d("recall"), line.d("qps")));
                case "scale" -> {
                    double target = line.d("target");
                    Scaling s =
                            r.scaling.computeIfAbsent(
                                    target,
                                    x -> {
                                        double[] qps = new double[threads.length];
                                        Arrays.fill(qps, Double.NaN);
                                        return new Scaling((int) line.d("ef"), qps);
                                    });
                    if (s.ef() >= 0) {
                        int t =
                                Arrays.stream(threads)
                                        .boxed()
                                        .toList()
                                        .indexOf((int) line.d("threads"));
                        if (t >= 0) {
                            s.qps()[t] = line.d("qps");
                        }
                    }
                }
                default -> {
                    // other lines are echoed only
                }
            }
        }
    }
}
