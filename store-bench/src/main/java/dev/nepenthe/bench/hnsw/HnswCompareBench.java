package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.PeerProcess;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.hnsw.HnswParams;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Build time, single-thread query throughput against recall@k, memory and multi-thread scaling for
 * Nepenthe's HNSW and its peers, each run the way its users run it, on the same data (seeded
 * clustered vectors, L2, or with {@code data=gcide} the cached MiniLM embeddings of dict-gcide
 * definitions, cosine) with the same M and efConstruction. Prints Markdown tables. Why: a graph
 * index is only worth its physical deletes if it also holds its own against the libraries users
 * would otherwise pick; the figures are in docs/BENCHMARKS.md ("HNSW").
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
    // Never compared or hashed; its qps array is filled in place as thread counts are measured.
    @SuppressWarnings("ArrayRecordComponent")
    record Scaling(int ef, double[] qps) {
        /** At {@code ef}, nothing measured yet for any of {@code threads} thread counts. */
        static Scaling unmeasured(int ef, int threads) {
            double[] qps = new double[threads];
            Arrays.fill(qps, Double.NaN);
            return new Scaling(ef, qps);
        }
    }

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
        List<String> names = CompareEngines.engineNames(a);
        BenchData d = BenchData.from(a, n, nq, 128);
        int dim = d.data[0].length;
        int pqSubspaces = a.i("pqSubspaces", Math.max(1, dim / 4));
        // Engines are made before the exact answers, so a name that cannot run fails at once.
        List<AnnEngine> engines =
                CompareEngines.javaEngines(names, m, efc, d.metric, oversample, pqSubspaces);
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
            CompareSweeps.sweep(engines, java, d.queries, truth, k, efs, rounds);
            if (scales(threads)) {
                CompareSweeps.scale(engines, java, d.queries, k, threads, rounds);
            }
            for (AnnEngine e : engines) {
                if (buildThreads > 1 && e.name().equals("nepenthe")) {
                    oneThreadLost = ParallelBuildCheck.selfMisses(e, d, k, efs);
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
                    ParallelBuildCheck.parallelBuildQuality(
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
        Path plot = a.path("plot");
        if (plot != null) {
            RecallQpsPlot.write(
                    plot,
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
                                    x -> Scaling.unmeasured((int) line.d("ef"), threads.length));
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
