package dev.nepenthe.bench.ivfpq;

import com.sun.management.OperatingSystemMXBean;
import dev.nepenthe.bench.PeerProcess;
import dev.nepenthe.bench.data.VecFiles;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.ivfpq.IvfPqIndex;
import dev.nepenthe.ivfpq.IvfPqParams;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Nepenthe's IVF-PQ against FAISS {@code IndexIVFPQ} (Debian python3-faiss) on the same data, in
 * one run: build time, single-thread QPS and recall@10 at several nprobe with and without exact
 * re-rank, code memory, and the cost and effect of forgetting 0.1%, 1% and 10% of the vectors. Why:
 * FAISS is the reference IVF-PQ, and our forget takes the removed vectors out of the centroids and
 * codebooks as well as the lists, without a retrain, where FAISS's remove_ids leaves its centroids
 * as they were; the two side by side show what that costs and keeps. The figures are in
 * docs/BENCHMARKS.md ("IVF-PQ").
 *
 * <p>Steps: 1. generate (or read) the data and the exact top-k with {@link ExactIndex}; 2. write
 * base/query/ground truth/removal sets as .fvecs/.ivecs to a temporary directory; 3. measure
 * Nepenthe; 4. run {@code faiss_ivfpq.py} on the same files (after Nepenthe, so the two never share
 * the CPU) and parse its lines; 5. print Markdown tables.
 *
 * <p>Run: {@code java --add-modules=jdk.incubator.vector -cp benchmarks.jar
 * dev.nepenthe.bench.ivfpq.IvfPqBench [--n 100000] [--dim 128] [--queries 1000] [--nlist 256] [--m
 * 16] [--train 10240] ...}; see {@link #usage()}.
 */
public final class IvfPqBench {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Map<String, String> opts;
    private final int k;

    private IvfPqBench(Map<String, String> opts) {
        this.opts = opts;
        this.k = intOpt("k");
    }

    static String usage() {
        return """
        IvfPqBench: Nepenthe IVF-PQ vs FAISS IndexIVFPQ (L2), one run.
          --n N              base vectors (default 100000)
          --dim D            dimension (default 128)
          --queries Q        queries, drawn from the same blobs (default 1000)
          --clusters C       Gaussian blobs (default 100)
          --spread S         blob spread relative to the centres' (default 0.3)
          --seed S           data seed (default 7: the HNSW benchmarks' data)
          --base FILE        read base vectors from an .fvecs or .bvecs file instead (with --query FILE)
          --query FILE       query vectors (.fvecs or .bvecs), used with --base
          --nlist L          inverted lists (default 256)
          --m M              PQ subspaces (default 16)
          --train T          training sample: the first T base vectors (default 40*max(nlist,256))
          --iterations I     k-means iterations, both sides (default 25)
          --nprobes LIST     comma-separated (default 4,16,64)
          --rerank R         exact re-rank depth for the re-ranked rows (default 100)
          --k K              recall@K (default 10)
          --passes P         timed passes over the queries, median kept (default 3)
          --seeds S          extra builds per side with k-means seeds 1..S, recall at nprobe 16 (default 3)
          --python EXE       (default /usr/bin/python3)
          --script FILE      (default store-bench/src/main/python/faiss_ivfpq.py)
          --osq BITS         also OSQ codes (no trained sub-codebook) at these widths, same lists and
                             nprobes, side by side with PQ (default 1,4; none to skip)
          --no-faiss         skip the FAISS side
          --plot FILE        also draw recall against QPS, Nepenthe beside FAISS, as a PNG
        """;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("n", "100000");
        o.put("dim", "128");
        o.put("queries", "1000");
        o.put("clusters", "100");
        o.put("spread", "0.3");
        o.put("seed", "7");
        o.put("nlist", "256");
        o.put("m", "16");
        o.put("iterations", "25");
        o.put("nprobes", "4,16,64");
        o.put("rerank", "100");
        o.put("k", "10");
        o.put("passes", "3");
        o.put("seeds", "3");
        o.put("osq", "1,4");
        o.put("python", "/usr/bin/python3");
        o.put("script", "store-bench/src/main/python/faiss_ivfpq.py");
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                System.out.println(usage());
                return;
            }
            if (a.equals("--no-faiss")) {
                o.put("no-faiss", "true");
                continue;
            }
            if (!a.startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException(
                        "expected --name value, got '" + a + "'\n" + usage());
            }
            String name = a.substring(2);
            if (!o.containsKey(name) && !Set.of("train", "base", "query", "plot").contains(name)) {
                throw new IllegalArgumentException("unknown option --" + name + "\n" + usage());
            }
            o.put(name, args[++i]);
        }
        o.putIfAbsent(
                "train", Integer.toString(40 * Math.max(Integer.parseInt(o.get("nlist")), 256)));
        new IvfPqBench(o).run();
    }

    private int intOpt(String name) {
        return Integer.parseInt(opts.get(name));
    }

    private void run() throws Exception {
        // 1. Data and exact ground truth.
        float[][] base;
        float[][] queries;
        String dataDesc;
        if (opts.containsKey("base")) {
            base = VecFiles.readVectors(Path.of(opts.get("base")), intOpt("n"));
            queries = VecFiles.readVectors(Path.of(opts.get("query")), intOpt("queries"));
            dataDesc = "files " + opts.get("base") + ", " + opts.get("query");
        } else {
            int n = intOpt("n");
            int q = intOpt("queries");
            float[][] all =
                    Datasets.clustered(
                            Long.parseLong(opts.get("seed")),
                            n + q,
                            intOpt("dim"),
                            intOpt("clusters"),
                            Double.parseDouble(opts.get("spread")));
            base = Arrays.copyOf(all, n);
            queries = Arrays.copyOfRange(all, n, n + q);
            dataDesc =
                    "clustered seed="
                            + opts.get("seed")
                            + " blobs="
                            + opts.get("clusters")
                            + " spread="
                            + opts.get("spread")
                            + " (queries: the last "
                            + q
                            + " of the same draw)";
        }
        int n = base.length;
        int dim = base[0].length;
        int nlist = intOpt("nlist");
        int m = intOpt("m");
        int train = Math.min(intOpt("train"), n);
        int iterations = intOpt("iterations");
        int rerank = intOpt("rerank");
        int passes = intOpt("passes");
        int[] nprobes =
                Arrays.stream(opts.get("nprobes").split(","))
                        .mapToInt(s -> Integer.parseInt(s.trim()))
                        .toArray();
        System.err.printf(
                Locale.ROOT,
                "data: n=%d dim=%d queries=%d, %s; kernels=%s%n",
                n,
                dim,
                queries.length,
                dataDesc,
                Kernels.get().name());
        ExactIndex exact = new ExactIndex(dim, Metric.L2);
        for (int i = 0; i < n; i++) {
            exact.add(i, base[i]);
        }
        int[][] truth = new int[queries.length][];
        for (int i = 0; i < queries.length; i++) {
            truth[i] = exact.search(queries[i], k).ordinals();
        }
        exact = null;

        // 2. Files for the FAISS side, and the removal sets (the same ids for both sides).
        Path dir = Files.createTempDirectory("nepenthe-ivfpq-bench");
        VecFiles.writeFvecs(dir.resolve("base.fvecs"), base);
        VecFiles.writeFvecs(dir.resolve("query.fvecs"), queries);
        VecFiles.writeIvecs(dir.resolve("gt.ivecs"), truth);
        double[] fractions = {0.001, 0.01, 0.1};
        String[] labels = {"0.1pct", "1pct", "10pct"};
        int[][] removals = new int[fractions.length][];
        SplittableRandom rnd = new SplittableRandom(7);
        for (int f = 0; f < fractions.length; f++) {
            int count = (int) Math.round(fractions[f] * n);
            Set<Integer> pick = new HashSet<>();
            while (pick.size() < count) {
                pick.add(rnd.nextInt(n));
            }
            removals[f] = pick.stream().mapToInt(Integer::intValue).sorted().toArray();
            VecFiles.writeIvecs(
                    dir.resolve("remove_" + labels[f] + ".ivecs"), new int[][] {removals[f]});
        }

        // 3. Nepenthe.
        IvfPqParams params =
                IvfPqParams.forSize(n, dim)
                        .nlist(nlist)
                        .m(m)
                        .nbits(8)
                        .trainSize(train)
                        .iterations(iterations)
                        .nprobe(16)
                        .rerank(rerank)
                        .autoRetrain(false)
                        .driftLimit(IvfPqParams.DEFAULT_DRIFT_LIMIT)
                        .build();
        long t0 = System.nanoTime();
        long c0 = processCpu();
        IvfPqIndex index = build(base, params, dim, null);
        double[] buildTimes = {
            lastTrainSeconds,
            (System.nanoTime() - t0) / 1e9,
            lastTrainCpuSeconds,
            (processCpu() - c0) / 1e9
        };
        Map<String, double[]> ours = new LinkedHashMap<>();
        List<String> settingKeys = new ArrayList<>();
        List<SearchParams> settings = new ArrayList<>();
        for (int nprobe : nprobes) {
            for (int rr : new int[] {0, rerank}) {
                settingKeys.add(nprobe + "/" + rr);
                settings.add(new SearchParams(Map.of("nprobe", nprobe, "rerank", rr)));
            }
        }
        List<double[]> measured = measure(index, queries, truth, settings, passes);
        for (int i = 0; i < settings.size(); i++) {
            ours.put(settingKeys.get(i), measured.get(i));
        }
        double listBytes = index.listBytesPerVector();
        // 3a. OSQ codes on the same lists' training and nprobes, side by side.
        Map<String, double[]> osqRows = new LinkedHashMap<>();
        if (!opts.get("osq").equals("none")) {
            for (String b : opts.get("osq").split(",", -1)) {
                int bits = Integer.parseInt(b.trim());
                IvfPqParams op = withOsq(params, bits);
                long ts = System.nanoTime();
                IvfPqIndex osqIndex = build(base, op, dim, null);
                double buildS = (System.nanoTime() - ts) / 1e9;
                List<double[]> osqMeasured = measure(osqIndex, queries, truth, settings, passes);
                for (int i = 0; i < settings.size(); i++) {
                    double[] qr = osqMeasured.get(i);
                    osqRows.put(
                            bits + "/" + settingKeys.get(i),
                            new double[] {
                                qr[2], qr[1], qr[0], osqIndex.listBytesPerVector(), buildS
                            });
                }
                osqIndex.close();
            }
        }
        IvfPqIndex.Inspection before = index.inspect();
        Path snapshot = dir.resolve("nepenthe.ivfpq");
        index.save(snapshot);
        IndexConfig config = new IndexConfig(dim, Metric.L2);
        Map<String, double[]> oursForget = new LinkedHashMap<>();
        for (int f = 0; f < fractions.length; f++) {
            IvfPqIndex copy = IvfPqIndex.load(config, snapshot);
            int[] ids = removals[f];
            long membersRemoved = Arrays.stream(ids).filter(copy.lineage()::contains).count();
            long s = cpu();
            copy.removeAll(ids);
            double removeS = (cpu() - s) / 1e9;
            s = cpu();
            IvfPqIndex.Inspection afterRemove = copy.inspect();
            double verifyS = (cpu() - s) / 1e9;
            Set<Integer> gone = new HashSet<>();
            for (int id : ids) {
                gone.add(id);
            }
            int[][] survivorsTruth = survivorTruth(base, queries, gone, dim);
            SearchParams sp = new SearchParams(Map.of("nprobe", 16, "rerank", rerank));
            double rRepaired = measure(copy, queries, survivorsTruth, sp, 1)[1];
            s = processCpu();
            copy.retrain();
            double retrainS = (processCpu() - s) / 1e9;
            IvfPqIndex.Inspection afterRetrain = copy.inspect();
            s = processCpu();
            IvfPqIndex rebuilt = build(base, params, dim, gone);
            double rebuildS = (processCpu() - s) / 1e9;
            double rRetrain = measure(copy, queries, survivorsTruth, sp, 1)[1];
            double rRebuild = measure(rebuilt, queries, survivorsTruth, sp, 1)[1];
            oursForget.put(
                    labels[f],
                    new double[] {
                        ids.length,
                        removeS,
                        retrainS,
                        rebuildS,
                        afterRemove.maxCentroidDeviation(),
                        membersRemoved,
                        afterRemove.report().isClean() ? 1 : 0,
                        afterRetrain.report().isClean() ? 1 : 0,
                        verifyS,
                        rRetrain,
                        rRebuild,
                        rRepaired
                    });
        }

        // 3b. Recall spread over k-means seeds (same training sample), nprobe 16.
        Map<String, double[]> seedRecall = new LinkedHashMap<>();
        for (int seedNo = 1; seedNo <= intOpt("seeds"); seedNo++) {
            IvfPqIndex other = buildSeeded(base, params, dim, seedNo);
            seedRecall.put(
                    Integer.toString(seedNo),
                    new double[] {
                        measure(
                                other,
                                queries,
                                truth,
                                new SearchParams(Map.of("nprobe", 16, "rerank", 0)),
                                1)[1],
                        measure(
                                other,
                                queries,
                                truth,
                                new SearchParams(Map.of("nprobe", 16, "rerank", rerank)),
                                1)[1]
                    });
        }

        // 4. FAISS on the same files.
        Map<String, Map<String, String>> faiss = new LinkedHashMap<>();
        if (!opts.containsKey("no-faiss")) {
            faiss = runFaiss(dir, nlist, m, train, iterations, rerank, passes);
        }

        // 5. Tables.
        PrintTables.print(
                n,
                dim,
                queries.length,
                dataDesc,
                nlist,
                m,
                train,
                iterations,
                rerank,
                k,
                passes,
                Kernels.get().name(),
                buildTimes,
                ours,
                nprobes,
                listBytes,
                before.maxCentroidDeviation(),
                oursForget,
                labels,
                seedRecall,
                faiss);
        PrintTables.printOsq(osqRows, ours, faiss, k);
        if (opts.containsKey("plot")) {
            IvfPqPlot.write(
                    Path.of(opts.get("plot")),
                    String.format(
                            Locale.ROOT,
                            "n = %,d, d = %d, %s, nlist = %d," + " m = %d, %d queries",
                            n,
                            dim,
                            dataDesc,
                            nlist,
                            m,
                            queries.length),
                    nprobes,
                    rerank,
                    ours,
                    faiss);
        }
        deleteRecursively(dir);
    }

    private double lastTrainSeconds;
    private double lastTrainCpuSeconds;

    /**
     * CPU time of the calling thread, ns: unlike wall time, barely moved by other processes on a
     * shared machine.
     */
    private static long cpu() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /**
     * CPU time of the whole process, ns (every thread: for work done on the index's training
     * thread).
     */
    private static long processCpu() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * Adds every base vector not in {@code skip}. The add that reaches {@code trainSize} starts the
     * training in the background; it is timed from that add until it serves (wall, and the
     * process's CPU: the training runs on the index's own thread), with no other add meanwhile, so
     * the figure is the training's alone, as FAISS's train() is.
     */
    private IvfPqIndex build(float[][] base, IvfPqParams params, int dim, Set<Integer> skip) {
        IvfPqIndex index = new IvfPqIndex(dim, Metric.L2, params, 1234L);
        for (int i = 0; i < base.length; i++) {
            if (skip != null && skip.contains(i)) {
                continue;
            }
            if (!index.isTrained() && index.size() == params.trainSize() - 1) {
                long s = System.nanoTime();
                long c = processCpu();
                index.add(i, base[i]);
                index.awaitTraining();
                lastTrainSeconds = (System.nanoTime() - s) / 1e9;
                lastTrainCpuSeconds = (processCpu() - c) / 1e9;
            } else {
                index.add(i, base[i]);
            }
        }
        if (!index.isTrained()) {
            long s = System.nanoTime();
            long c = processCpu();
            index.train();
            lastTrainSeconds = (System.nanoTime() - s) / 1e9;
            lastTrainCpuSeconds = (processCpu() - c) / 1e9;
        }
        return index;
    }

    private IvfPqIndex buildSeeded(float[][] base, IvfPqParams params, int dim, long seed) {
        IvfPqIndex index = new IvfPqIndex(dim, Metric.L2, params, seed);
        for (int i = 0; i < base.length; i++) {
            index.add(i, base[i]);
        }
        index.awaitTraining();
        return index;
    }

    private int[][] survivorTruth(float[][] base, float[][] queries, Set<Integer> gone, int dim) {
        ExactIndex exact = new ExactIndex(dim, Metric.L2);
        for (int i = 0; i < base.length; i++) {
            if (!gone.contains(i)) {
                exact.add(i, base[i]);
            }
        }
        int[][] t = new int[queries.length][];
        for (int i = 0; i < queries.length; i++) {
            t[i] = exact.search(queries[i], k).ordinals();
        }
        return t;
    }

    /** {wall-clock qps, recall@k, CPU-time qps} for one setting: see the list form. */
    private double[] measure(
            IvfPqIndex index, float[][] queries, int[][] truth, SearchParams sp, int passes) {
        return measure(index, queries, truth, List.of(sp), passes).get(0);
    }

    /**
     * {wall-clock qps, recall@k, CPU-time qps} for each setting: medians of the passes after one
     * untimed pass of every setting. The passes go round-robin over the settings, so a slow stretch
     * of a shared machine (or the JIT still at work) lands on all of them alike instead of on
     * whichever setting happened to be measured first.
     */
    private List<double[]> measure(
            IvfPqIndex index,
            float[][] queries,
            int[][] truth,
            List<SearchParams> settings,
            int passes) {
        long sink = 0;
        double[][] times = new double[settings.size()][passes];
        double[][] cpus = new double[settings.size()][passes];
        double[] recalls = new double[settings.size()];
        for (int p = -1; p < passes; p++) {
            for (int si = 0; si < settings.size(); si++) {
                SearchParams sp = settings.get(si);
                long s = System.nanoTime();
                long c = cpu();
                int hits = 0;
                for (int i = 0; i < queries.length; i++) {
                    SearchResult r = index.search(queries[i], k, Accept.ALL, sp);
                    sink += r.visited();
                    if (p == passes - 1) {
                        hits += overlap(r.ordinals(), truth[i]);
                    }
                }
                if (p >= 0) {
                    times[si][p] = (System.nanoTime() - s) / 1e9;
                    cpus[si][p] = (cpu() - c) / 1e9;
                }
                if (p == passes - 1) {
                    recalls[si] = hits / (double) (queries.length * k);
                }
            }
        }
        if (sink == 42) {
            System.err.print(""); // keeps the JIT from dropping the searches
        }
        List<double[]> out = new ArrayList<>();
        for (int si = 0; si < settings.size(); si++) {
            Arrays.sort(times[si]);
            Arrays.sort(cpus[si]);
            out.add(
                    new double[] {
                        queries.length / times[si][passes / 2],
                        recalls[si],
                        queries.length / cpus[si][passes / 2]
                    });
        }
        return out;
    }

    private static int overlap(int[] found, int[] truth) {
        int hits = 0;
        for (int f : found) {
            for (int t : truth) {
                if (f == t) {
                    hits++;
                    break;
                }
            }
        }
        return hits;
    }

    private Map<String, Map<String, String>> runFaiss(
            Path dir, int nlist, int m, int train, int iterations, int rerank, int passes)
            throws IOException, InterruptedException {
        List<String> cmd =
                List.of(
                        opts.get("python"),
                        opts.get("script"),
                        "--dir",
                        dir.toString(),
                        "--nlist",
                        "" + nlist,
                        "--m",
                        "" + m,
                        "--nbits",
                        "8",
                        "--train",
                        "" + train,
                        "--niter",
                        "" + iterations,
                        "--k",
                        "" + k,
                        "--rerank",
                        "" + rerank,
                        "--nprobes",
                        opts.get("nprobes"),
                        "--passes",
                        "" + passes,
                        "--seeds",
                        opts.get("seeds"));
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        for (PeerProcess.Line line :
                PeerProcess.run(
                        cmd,
                        "faiss",
                        "is python3-faiss installed? apt-get install python3-faiss")) {
            Map<String, String> kv = line.kv();
            String key = line.what();
            if (kv.containsKey("nprobe")) {
                key += " " + kv.get("nprobe") + "/" + kv.get("rerank");
            } else if (kv.containsKey("seed")) {
                key += " " + kv.get("seed") + "/" + kv.get("rerank");
            } else if (kv.containsKey("label")) {
                key += " " + kv.get("label");
            }
            out.put(key, kv);
        }
        return out;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The same settings with OSQ codes of {@code bits} bits in place of PQ. */
    private static IvfPqParams withOsq(IvfPqParams p, int bits) {
        return new IvfPqParams(
                p.nlist(),
                p.m(),
                p.nbits(),
                p.trainSize(),
                p.iterations(),
                p.nprobe(),
                p.rerank(),
                p.autoRetrain(),
                p.driftLimit(),
                IvfPqParams.Codes.OSQ,
                bits);
    }
}
