package dev.nepenthe.bench.storage;

import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.hnsw.BenchArgs;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.internal.index.TopK;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * What a restart costs, and how it grows: for each size, a real store (AES-GCM, fsync, signed
 * ledger) is loaded with seeded synthetic vectors, checkpointed (which writes the encrypted index
 * generation), closed and opened again, first in a new JVM (what a restart costs: a cold JIT, a
 * heap that grows from its initial size, and memory the process has never touched) and then in the
 * JVM that loaded it (warm, reusing freed memory: what that JVM pays to reopen). Measured: the
 * load, the checkpoint, the generation file's size, both clean opens (the index loaded, not
 * rebuilt), the Java heap in use and the process's resident set after each, search QPS and
 * recall@10 at a few efSearch against exact neighbours (and the QPS at the first efSearch reaching
 * recall 0.95), forgets of five 100-record subjects to SEALED (each destroys a generation's key on
 * the way: the first the loaded one, each later one the generation a checkpoint just wrote; the
 * median of the other four is the warm figure, with its cleanup and verification apart), the close
 * that writes the next generation, and, with {@code rebuild=true}, an open with no generation file:
 * what every open cost before generations existed.
 *
 * <p>Data ({@code data=}): {@code lowrank} (default), 100 clusters each near its own 16-dimensional
 * plane (spread 0.3, {@code rank=} changes the planes' dimension), which has the low intrinsic
 * dimension of real embeddings; or {@code clustered}, 100 isotropic blobs (spread 0.3), in which
 * 384 dimensions leave no near neighbours for a graph to find. The queries are further rows of the
 * same draw, held out of the store.
 *
 * <p>The harness checks its own results: both clean opens must report the index loaded with no
 * catch-up, each forget must seal with exactly its subject's records, each checkpoint must write a
 * generation and no generation file may exist after a forget, and the rebuild open must report a
 * rebuild; otherwise it exits with status 1 after the table.
 *
 * <p>Usage: {@code ./nepenthe bench open sizes=100000,300000 dim=384 index=hnsw queries=200
 * efs=32,64,128 rebuild=true dir=/tmp data=lowrank rank=16}. With {@code keep=true} each size's
 * store is left in {@code dir} (its folder is printed), closed cleanly after the run, so that code
 * can be compared on the same files: copy the folder, then {@code java <the root pom's
 * nepenthe.jvm.flags> -cp store-bench/target/benchmarks.jar dev.nepenthe.bench.storage.OpenBench
 * --fresh-open COPY} opens it once in a new JVM and prints the seconds, the heap and the resident
 * set.
 */
public final class OpenBench {

    private static final String USAGE =
            "./nepenthe bench open sizes=100000,300000 dim=384 index=hnsw|ivfpq queries=200"
                + " efs=32,64,128 rebuild=true dir=/tmp vectors=heap|offheap quantization=none|int8"
                + " (the last two: hnsw) data=lowrank|clustered rank=16 plot=FILE.png (log-log"
                + " growth plot over the sizes) keep=false (true leaves each store in dir)";
    private static final Set<String> KNOWN =
            Set.of(
                    "sizes",
                    "dim",
                    "index",
                    "queries",
                    "efs",
                    "rebuild",
                    "dir",
                    "vectors",
                    "quantization",
                    "data",
                    "rank",
                    "plot",
                    "keep");
    private static final int SUBJECT = 100;

    /**
     * Subjects of SUBJECT records each: the first forget rotates the generation, the rest show a
     * warm forget.
     */
    private static final int TARGETS = 5;

    /** The recall the growth table reads QPS at (the first efSearch that reaches it). */
    private static final double RECALL_TARGET = 0.95;

    record Row(
            int n,
            double loadS,
            double checkpointS,
            double fileMb,
            FreshOpen fresh,
            double openS,
            double indexWaitS,
            double heapMb,
            double rssMb,
            Searches searches,
            double searchedHeapMb,
            double searchedRssMb,
            double forgetS,
            boolean destroyed,
            double laterForgetS,
            double laterCleanupS,
            double laterVerifyS,
            double closeS,
            double rebuildS,
            List<String> wrong) {}

    /**
     * One forget: seconds to SEALED, and of them the cleanup's and the verification's with the
     * seal.
     */
    record Forget(double sealedS, double cleanupS, double verifyS) {
        @Override
        public String toString() {
            // What comes before the cleanup: the request, the mark and the resolve of the scope.
            return String.format(
                    Locale.ROOT,
                    "%.2f s (before the cleanup %.2f, cleanup %.2f, verify and seal %.2f)",
                    sealedS,
                    sealedS - cleanupS - verifyS,
                    cleanupS,
                    verifyS);
        }
    }

    /**
     * QPS and recall per efSearch as text, and the QPS at the first efSearch with recall at or
     * above RECALL_TARGET.
     */
    record Searches(String text, int efAtTarget, double qpsAtTarget) {}

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals(FRESH_OPEN)) {
            freshOpen(Path.of(args[1]));
            return;
        }
        BenchArgs a = new BenchArgs(args, USAGE);
        a.onlyKnown(KNOWN);
        int[] sizes =
                Stream.of(a.s("sizes", "100000").split(",")).mapToInt(Integer::parseInt).toArray();
        int dim = a.i("dim", 384);
        String kind = a.s("index", "hnsw");
        int queries = a.i("queries", 200);
        int[] efs =
                Stream.of(a.s("efs", "32,64,128").split(",")).mapToInt(Integer::parseInt).toArray();
        boolean rebuild = Boolean.parseBoolean(a.s("rebuild", "true"));
        Path base = Path.of(a.s("dir", System.getProperty("java.io.tmpdir")));
        Files.createDirectories(
                base); // dir= names where the stores go; a folder not made yet is made
        IndexSpec index =
                switch (kind) {
                    case "hnsw" ->
                            IndexSpec.of(
                                    "hnsw",
                                    Map.of(
                                            "M",
                                            "16",
                                            "efConstruction",
                                            "100",
                                            "efSearch",
                                            "64",
                                            "vectors",
                                            a.s("vectors", "heap"),
                                            "quantization",
                                            a.s("quantization", "none")));
                    case "ivfpq" ->
                            IndexSpec.of(
                                    "ivfpq",
                                    Map.of(
                                            "nlist",
                                            "256",
                                            "m",
                                            Integer.toString(dim / 8),
                                            "nprobe",
                                            "16",
                                            "rerank",
                                            "64"));
                    default ->
                            throw new IllegalArgumentException(
                                    "index: expected hnsw or ivfpq, got '"
                                            + kind
                                            + "'\nusage: "
                                            + USAGE);
                };
        for (int n : sizes) {
            if (n <= 2 * TARGETS * SUBJECT) {
                throw new IllegalArgumentException(
                        "sizes: expected each above " + 2 * TARGETS * SUBJECT + ", got " + n);
            }
        }
        System.out.println("open bench: " + Machine.describe());
        System.out.printf(
                Locale.ROOT,
                "index=%s %s dim=%d queries=%d, load average at the start %.2f, max heap %d MB%n",
                kind,
                index.params(),
                dim,
                queries,
                Machine.loadAverage(),
                Runtime.getRuntime().maxMemory() >> 20);
        String data = a.s("data", "lowrank");
        int rank = a.i("rank", 16);
        IntFunction<float[][]> draw =
                switch (data) {
                    case "lowrank" -> rows -> Datasets.lowRank(7, rows, dim, 100, rank, 0.3);
                    case "clustered" -> rows -> Datasets.clustered(7, rows, dim, 100, 0.3);
                    default ->
                            throw new IllegalArgumentException(
                                    "data: expected lowrank or clustered, got '"
                                            + data
                                            + "'\nusage: "
                                            + USAGE);
                };
        System.out.println(
                "data="
                        + data
                        + (data.equals("lowrank") ? " rank=" + rank : "")
                        + ", 100 clusters, spread 0.3,"
                        + " queries held out of the same draw");
        boolean keep = Boolean.parseBoolean(a.s("keep", "false"));
        List<Row> rows = new ArrayList<>();
        for (int n : sizes) {
            Path dir = Files.createTempDirectory(base, "nepenthe-open-");
            try {
                rows.add(run(n, dim, index, queries, efs, rebuild, dir, draw));
            } finally {
                if (keep) {
                    System.out.println("n=" + n + ": the store is kept in " + dir);
                } else {
                    TestFiles.deleteTree(dir);
                }
            }
        }
        System.out.println();
        System.out.println(
                "| records | load (s) | checkpoint with index write (s) | index file (MB) | clean"
                    + " open, new JVM (s) | its heap / RSS (MB) | clean open, loading JVM (s) |"
                    + " then waiting for the index (s) | heap after open (MB) | RSS (MB) | QPS /"
                    + " recall@10 by efSearch | QPS at recall@10 >= "
                        + RECALL_TARGET
                        + " (efSearch) | heap / RSS after the searches (MB)"
                        + " | forget 100 records to SEALED (s) | generation destroyed | next "
                        + (TARGETS - 1)
                        + " forgets, each after a checkpoint, median (s) | their cleanup / verify"
                        + " and seal, median (s) | close writing the next (s) | open rebuilding"
                        + " instead (s) |");
        System.out.println(
                "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---|---:|---|---:|---:|");
        for (Row r : rows) {
            System.out.printf(
                    Locale.ROOT,
                    "| %,d | %.1f | %.1f | %.0f | %.2f | %.0f / %.0f | %.2f | %.2f | %.0f | %.0f |"
                        + " %s | %s | %.0f / %.0f | %.2f | %s | %.2f | %.2f / %.2f | %.1f | %s |%n",
                    r.n,
                    r.loadS,
                    r.checkpointS,
                    r.fileMb,
                    r.fresh.openS(),
                    r.fresh.heapMb(),
                    r.fresh.rssMb(),
                    r.openS,
                    r.indexWaitS,
                    r.heapMb,
                    r.rssMb,
                    r.searches.text(),
                    r.searches.efAtTarget() < 0
                            ? "not reached"
                            : String.format(
                                    Locale.ROOT,
                                    "%,.0f (%d)",
                                    r.searches.qpsAtTarget(),
                                    r.searches.efAtTarget()),
                    r.searchedHeapMb,
                    r.searchedRssMb,
                    r.forgetS,
                    r.destroyed ? "yes" : "NO",
                    r.laterForgetS,
                    r.laterCleanupS,
                    r.laterVerifyS,
                    r.closeS,
                    Double.isNaN(r.rebuildS)
                            ? "-"
                            : String.format(Locale.ROOT, "%.1f", r.rebuildS));
        }
        String plot = a.s("plot", "");
        if (!plot.isEmpty()) {
            GrowthPlot.write(
                    Path.of(plot),
                    String.format(
                            Locale.ROOT,
                            "%s %s, %d dimensions, %s data (%s)",
                            kind,
                            index.params(),
                            dim,
                            data,
                            Machine.describe()),
                    rows);
            System.out.println("plot: " + plot);
        }
        System.out.printf(Locale.ROOT, "load average at the end: %.2f%n", Machine.loadAverage());
        List<String> wrong = rows.stream().flatMap(r -> r.wrong.stream()).toList();
        if (!wrong.isEmpty()) {
            wrong.forEach(w -> System.err.println("open bench: " + w));
            System.exit(1);
        }
    }

    private static Row run(
            int n,
            int dim,
            IndexSpec index,
            int nq,
            int[] efs,
            boolean rebuild,
            Path dir,
            IntFunction<float[][]> draw)
            throws Exception {
        // Survivors sit near the subject's vectors, so the probe (threshold 0.9999) flags
        // near-copies only; it still compares every forgotten vector with what it finds.
        // The data is made again for the exact neighbours rather than held: the heap figures are
        // the store's, not the benchmark's copy of the dataset.
        float[][] all = draw.apply(n + nq);
        float[][] data = Arrays.copyOf(all, n);
        float[][] queries = Arrays.copyOfRange(all, n, n + nq);
        all = null;
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(dir.resolve("keys"))
                        .withProbePolicy(new ProbePolicy(0.9999, 0.5));
        List<String> wrong = new ArrayList<>();
        double loadS;
        double checkpointS;
        try (Nepenthe store = Nepenthe.open(dir.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("bench", dim, Metric.COSINE, index));
            long t0 = System.nanoTime();
            for (int start = 0; start < n; start += 1000) {
                List<VectorRecord> batch = new ArrayList<>(1000);
                for (int i = start; i < Math.min(n, start + 1000); i++) {
                    // The first TARGETS * SUBJECT records are the subjects the forgets take; the
                    // rest in tens.
                    batch.add(
                            VectorRecord.builder("r" + i)
                                    .subject(
                                            i < TARGETS * SUBJECT
                                                    ? "target" + i / SUBJECT
                                                    : "s" + i / 10)
                                    .vector(data[i])
                                    .build());
                }
                c.upsertAll(batch);
            }
            loadS = seconds(t0);
            t0 = System.nanoTime();
            c.checkpoint();
            checkpointS = seconds(t0);
            System.out.printf(
                    Locale.ROOT,
                    "n=%d: loaded in %.1f s, checkpoint with the index generation %.1f s%n",
                    n,
                    loadS,
                    checkpointS);
        }
        data = null;
        double fileMb = generations(dir).stream().mapToLong(OpenBench::size).sum() / 1e6;
        double parentRssMb = releaseMemory();
        FreshOpen fresh = openInNewJvm(dir);
        if (!fresh.loaded()) {
            wrong.add(
                    "n="
                            + n
                            + ": the clean open in a new JVM did not load the index as it was"
                            + " written: "
                            + fresh.index());
        }
        System.out.printf(
                Locale.ROOT,
                "n=%d: clean open in a new JVM %.2f s, heap %.0f MB, RSS %.0f MB (this JVM's RSS"
                        + " meanwhile %.0f MB)%n",
                n,
                fresh.openS(),
                fresh.heapMb(),
                fresh.rssMb(),
                parentRssMb);
        System.gc();
        long t0 = System.nanoTime();
        try (Nepenthe store = Nepenthe.open(dir.resolve("data"), opts)) {
            double openS = seconds(t0);
            VectorCollection c = store.collection("bench");
            OpenReport.IndexRecovery r = c.openReport().index();
            if (!r.loaded() || r.added() + r.removed() != 0) {
                wrong.add(
                        "n="
                                + n
                                + ": the clean open did not load the index as it was written: "
                                + r);
            }
            double heapMb = heapUsedMb();
            double rssMb = rssMb();
            System.out.printf(
                    Locale.ROOT,
                    "n=%d: clean open %.2f s (index %s), heap %.0f MB, RSS %.0f MB%n",
                    n,
                    openS,
                    r,
                    heapMb,
                    rssMb);
            Searches searches = searches(c, n, queries, efs, draw);
            double searchedHeapMb = heapUsedMb();
            double searchedRssMb = rssMb();
            Forget first = forget(store, n, 0, wrong);
            double forgetS = first.sealedS();
            // The key is destroyed before the forget seals; the file is deleted right after, beside
            // it.
            boolean destroyed = generationsGone(dir);
            if (!destroyed) {
                wrong.add(
                        "n="
                                + n
                                + ": a generation file exists after the forget sealed: "
                                + generations(dir));
            }
            // Each later forget follows a checkpoint, so it too destroys a generation on its way
            // (the target is a forget with the generation rotated), now with a JIT that
            // has seen a forget: the warm figure. The checkpoints are not timed.
            List<Forget> later = new ArrayList<>();
            for (int t = 1; t < TARGETS; t++) {
                c.checkpoint();
                // (An IVF-PQ index whose codebooks saw a removed vector is not written; see
                // STORAGE.md.)
                if (index.kind().equals("hnsw") && generations(dir).isEmpty()) {
                    wrong.add(
                            "n="
                                    + n
                                    + ": the checkpoint before forget "
                                    + t
                                    + " wrote no generation");
                }
                later.add(forget(store, n, t, wrong));
                if (!generationsGone(dir)) {
                    wrong.add(
                            "n="
                                    + n
                                    + ": a generation file exists after forget "
                                    + t
                                    + " sealed: "
                                    + generations(dir));
                }
            }
            double laterForgetS = median(later.stream().mapToDouble(Forget::sealedS).toArray());
            System.out.printf(
                    Locale.ROOT,
                    "n=%d: forgets %s (generation rotated), then, each after a checkpoint, %s%n",
                    n,
                    first,
                    later);
            t0 = System.nanoTime();
            store.close();
            double closeS = seconds(t0);
            double rebuildS = Double.NaN;
            if (rebuild) {
                for (Path g : generations(dir)) {
                    Files.delete(g);
                }
                System.gc();
                t0 = System.nanoTime();
                try (Nepenthe again = Nepenthe.open(dir.resolve("data"), opts)) {
                    rebuildS = seconds(t0);
                    OpenReport.IndexRecovery rr = again.collection("bench").openReport().index();
                    if (rr.loaded()) {
                        wrong.add(
                                "n="
                                        + n
                                        + ": the open without a generation file reports a load: "
                                        + rr);
                    }
                }
            }
            return new Row(
                    n,
                    loadS,
                    checkpointS,
                    fileMb,
                    fresh,
                    openS,
                    r.millis() / 1e3,
                    heapMb,
                    rssMb,
                    searches,
                    searchedHeapMb,
                    searchedRssMb,
                    forgetS,
                    destroyed,
                    laterForgetS,
                    median(later.stream().mapToDouble(Forget::cleanupS).toArray()),
                    median(later.stream().mapToDouble(Forget::verifyS).toArray()),
                    closeS,
                    rebuildS,
                    wrong);
        }
    }

    /**
     * A clean open in a JVM of its own: seconds, heap and RSS after it, and what the open did with
     * the index.
     */
    record FreshOpen(double openS, double heapMb, double rssMb, boolean loaded, String index) {}

    /**
     * Opens the store at {@code dir} in a new JVM with this one's flags and class path, as a
     * restart would, and reads back what {@link #freshOpen} printed.
     */
    private static FreshOpen openInNewJvm(Path dir) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
        cmd.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        OpenBench.class.getName(),
                        FRESH_OPEN,
                        dir.toString()));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String result = null;
        try (var out =
                new java.io.BufferedReader(
                        new java.io.InputStreamReader(
                                p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith(FRESH_OPEN + " ")) {
                    result = line;
                }
            }
        }
        int exit = p.waitFor();
        if (exit != 0 || result == null) {
            throw new IOException(
                    "the open in a new JVM exited with status "
                            + exit
                            + (result == null ? " and no result" : "")
                            + ": "
                            + String.join(" ", cmd));
        }
        String[] f = result.split(" ", 6);
        return new FreshOpen(
                Double.parseDouble(f[1]),
                Double.parseDouble(f[2]),
                Double.parseDouble(f[3]),
                Boolean.parseBoolean(f[4]),
                f[5]);
    }

    /** The first argument that runs {@link #freshOpen} instead of the benchmark. */
    private static final String FRESH_OPEN = "--fresh-open";

    /** The child's side of {@link #openInNewJvm}: opens, measures, prints one line, closes. */
    private static void freshOpen(Path dir) throws IOException {
        StoreOptions opts = StoreOptions.defaults().withKeystore(dir.resolve("keys"));
        long t0 = System.nanoTime();
        try (Nepenthe store = Nepenthe.open(dir.resolve("data"), opts)) {
            double openS = seconds(t0);
            OpenReport.IndexRecovery r = store.collection("bench").openReport().index();
            System.out.printf(
                    Locale.ROOT,
                    "%s %.3f %.1f %.1f %b %s%n",
                    FRESH_OPEN,
                    openS,
                    heapUsedMb(),
                    rssMb(),
                    r.loaded() && r.added() + r.removed() == 0,
                    r);
        }
    }

    /**
     * Forgets subject {@code "target" + t} and returns what it took; a wrong outcome goes to {@code
     * wrong}.
     */
    private static Forget forget(Nepenthe store, int n, int t, List<String> wrong)
            throws InterruptedException {
        long t0 = System.nanoTime();
        ForgetOperation op =
                store.awaitOperation(
                        store.forget(
                                        ForgetRequest.of(
                                                ForgetScope.subject("target" + t),
                                                "bench-forget-" + t,
                                                "benchmark"))
                                .id(),
                        Duration.ofMinutes(10));
        double s = seconds(t0);
        if (op.state() != OperationState.SEALED || op.totalForgotten() != SUBJECT) {
            wrong.add(
                    "n="
                            + n
                            + ": forget "
                            + t
                            + " ended "
                            + op.state()
                            + " with "
                            + op.totalForgotten()
                            + " records,"
                            + " expected SEALED with "
                            + SUBJECT
                            + ": "
                            + op.note());
        }
        Map<OperationState, java.time.Instant> tl = op.timeline();
        return new Forget(
                s,
                between(tl, OperationState.CLEANUP, OperationState.VERIFYING),
                between(tl, OperationState.VERIFYING, op.state()));
    }

    /** Whether the generation files are gone within 30 seconds. */
    private static boolean generationsGone(Path dir) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!generations(dir).isEmpty()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /**
     * Seconds from the operation's entry into {@code from} to its entry into {@code to}, NaN if it
     * skipped one.
     */
    private static double between(
            Map<OperationState, java.time.Instant> timeline,
            OperationState from,
            OperationState to) {
        java.time.Instant a = timeline.get(from);
        java.time.Instant b = timeline.get(to);
        return a == null || b == null ? Double.NaN : Duration.between(a, b).toNanos() / 1e9;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length == 0 ? Double.NaN : (s[(s.length - 1) / 2] + s[s.length / 2]) / 2;
    }

    /**
     * Single-threaded QPS (median of three passes) and recall@10 against exact neighbours, per
     * efSearch.
     */
    private static Searches searches(
            VectorCollection c, int n, float[][] queries, int[] efs, IntFunction<float[][]> draw) {
        VectorKernels k = Kernels.get();
        float[][] unit = Arrays.copyOf(draw.apply(n + queries.length), n);
        IntStream.range(0, unit.length)
                .parallel()
                .forEach(i -> unit[i] = Metric.COSINE.prepare(unit[i]));
        Set<String>[] truth = new Set[queries.length];
        IntStream.range(0, queries.length)
                .parallel()
                .forEach(
                        q -> {
                            float[] qq = Metric.COSINE.prepare(queries[q]);
                            TopK top = new TopK(10);
                            for (int i = 0; i < unit.length; i++) {
                                top.offer(i, k.dot(qq, 0, unit[i], 0, qq.length));
                            }
                            Set<String> ids = new HashSet<>();
                            for (int o : top.drain(0).ordinals()) {
                                ids.add("r" + o);
                            }
                            truth[q] = ids;
                        });
        StringBuilder out = new StringBuilder();
        int efAtTarget = -1;
        double qpsAtTarget = Double.NaN;
        for (int ef : efs) {
            double[] qps = new double[3];
            long hits = 0;
            for (int pass = -1; pass < 3; pass++) {
                long t0 = System.nanoTime();
                long h = 0;
                for (int q = 0; q < queries.length; q++) {
                    for (SearchHit hit :
                            c.search(
                                    SearchRequest.of(queries[q], 10)
                                            .param("efSearch", ef)
                                            .param("nprobe", Math.max(1, ef / 4)))) {
                        if (truth[q].contains(hit.record().id())) {
                            h++;
                        }
                    }
                }
                if (pass >= 0) {
                    qps[pass] = queries.length / seconds(t0);
                    hits = h;
                }
            }
            Arrays.sort(qps);
            double recall = hits / (10.0 * queries.length);
            out.append(
                    String.format(
                            Locale.ROOT,
                            "%s%d: %.0f / %.3f",
                            out.isEmpty() ? "" : "; ",
                            ef,
                            qps[1],
                            recall));
            if (efAtTarget < 0 && recall >= RECALL_TARGET) {
                efAtTarget = ef;
                qpsAtTarget = qps[1];
            }
        }
        return new Searches(out.toString(), efAtTarget, qpsAtTarget);
    }

    private static List<Path> generations(Path dir) throws IOException {
        Path collections = dir.resolve("data").resolve("collections");
        if (!Files.exists(collections)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(collections)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".idx")).toList();
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    private static double heapUsedMb() {
        System.gc();
        Runtime rt = Runtime.getRuntime();
        return (rt.totalMemory() - rt.freeMemory()) / 1e6;
    }

    /**
     * Lets this JVM give back what the closed store held before a new JVM opens it, as a restart's
     * old process would have: the native vectors and codes are unmapped only once the collector
     * finds them unreachable, and until then the child opened with gigabytes fewer free (at 1M, its
     * huge pages came from reclaimed page cache: 4 s more). Collects, then waits up to 10 s for the
     * resident set to stop falling; returns it.
     */
    private static double releaseMemory() throws InterruptedException {
        double before = Double.MAX_VALUE;
        double now = rssMb();
        for (int i = 0; i < 20 && !Double.isNaN(now) && now < before - 16; i++) {
            System.gc();
            Thread.sleep(500);
            before = now;
            now = rssMb();
        }
        return now;
    }

    /** The resident set from /proc (Linux), or NaN elsewhere. */
    private static double rssMb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1e3;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux
        }
        return Double.NaN;
    }
}
