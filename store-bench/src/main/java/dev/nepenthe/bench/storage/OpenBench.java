package dev.nepenthe.bench.storage;

import dev.nepenthe.bench.BenchIndexes;
import dev.nepenthe.bench.BenchStores;
import dev.nepenthe.bench.Machine;
import dev.nepenthe.bench.hnsw.BenchArgs;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
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
    static final int SUBJECT = 100;

    /**
     * Subjects of SUBJECT records each: the first forget rotates the generation, the rest show a
     * warm forget.
     */
    private static final int TARGETS = 5;

    /** The recall the growth table reads QPS at (the first efSearch that reaches it). */
    static final double RECALL_TARGET = 0.95;

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
     * QPS and recall per efSearch as text, and the QPS at the first efSearch with recall at or
     * above RECALL_TARGET.
     */
    record Searches(String text, int efAtTarget, double qpsAtTarget) {}

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals(FreshOpen.FRESH_OPEN)) {
            FreshOpen.measureAndPrint(Path.of(args[1]));
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
        IndexSpec index;
        try {
            index =
                    BenchIndexes.forKind(
                            kind,
                            dim,
                            Map.of(
                                    "vectors",
                                    a.s("vectors", "heap"),
                                    "quantization",
                                    a.s("quantization", "none")),
                            false);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "\nusage: " + USAGE, e);
        }
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
        Path plot = a.path("plot");
        if (plot != null) {
            GrowthPlot.write(
                    plot,
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

    // The store is closed by hand inside its try, to time the close that writes the next
    // generation; the try's own close then does nothing.
    @SuppressWarnings("try")
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
        StoreOptions opts = BenchStores.options(dir).withProbePolicy(new ProbePolicy(0.9999, 0.5));
        List<String> wrong = new ArrayList<>();
        double loadS;
        double checkpointS;
        try (Nepenthe store = BenchStores.open(dir, opts)) {
            VectorCollection c = BenchStores.createBench(store, dim, index);
            long t0 = System.nanoTime();
            // The first TARGETS * SUBJECT records are the subjects the forgets take; the rest in
            // tens.
            float[][] rows = data;
            BenchStores.load(
                    c,
                    n,
                    i ->
                            VectorRecord.builder("r" + i)
                                    .subject(
                                            i < TARGETS * SUBJECT
                                                    ? "target" + i / SUBJECT
                                                    : "s" + i / 10)
                                    .vector(rows[i])
                                    .build());
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
        double fileMb =
                Generations.generations(dir).stream().mapToLong(Generations::size).sum() / 1e6;
        double parentRssMb = MemoryUse.releaseMemory();
        FreshOpen fresh = FreshOpen.inNewJvm(dir);
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
        try (Nepenthe store = BenchStores.open(dir, opts)) {
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
            double heapMb = MemoryUse.heapUsedMb();
            double rssMb = MemoryUse.rssMb();
            System.out.printf(
                    Locale.ROOT,
                    "n=%d: clean open %.2f s (index %s), heap %.0f MB, RSS %.0f MB%n",
                    n,
                    openS,
                    r,
                    heapMb,
                    rssMb);
            Searches searches = RecallSweep.sweep(c, n, queries, efs, draw);
            double searchedHeapMb = MemoryUse.heapUsedMb();
            double searchedRssMb = MemoryUse.rssMb();
            TargetForget.Forget first = TargetForget.forget(store, n, 0, wrong);
            double forgetS = first.sealedS();
            // The key is destroyed before the forget seals; the file is deleted right after, beside
            // it.
            boolean destroyed = Generations.generationsGone(dir);
            if (!destroyed) {
                wrong.add(
                        "n="
                                + n
                                + ": a generation file exists after the forget sealed: "
                                + Generations.generations(dir));
            }
            // Each later forget follows a checkpoint, so it too destroys a generation on its way
            // (the target is a forget with the generation rotated), now with a JIT that
            // has seen a forget: the warm figure. The checkpoints are not timed.
            List<TargetForget.Forget> later = new ArrayList<>();
            for (int t = 1; t < TARGETS; t++) {
                c.checkpoint();
                // (An IVF-PQ index whose codebooks saw a removed vector is not written; see
                // STORAGE.md.)
                if (index.kind().equals("hnsw") && Generations.generations(dir).isEmpty()) {
                    wrong.add(
                            "n="
                                    + n
                                    + ": the checkpoint before forget "
                                    + t
                                    + " wrote no generation");
                }
                later.add(TargetForget.forget(store, n, t, wrong));
                if (!Generations.generationsGone(dir)) {
                    wrong.add(
                            "n="
                                    + n
                                    + ": a generation file exists after forget "
                                    + t
                                    + " sealed: "
                                    + Generations.generations(dir));
                }
            }
            double laterForgetS =
                    median(later.stream().mapToDouble(TargetForget.Forget::sealedS).toArray());
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
                for (Path g : Generations.generations(dir)) {
                    Files.delete(g);
                }
                System.gc();
                t0 = System.nanoTime();
                try (Nepenthe again = BenchStores.open(dir, opts)) {
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
                    median(later.stream().mapToDouble(TargetForget.Forget::cleanupS).toArray()),
                    median(later.stream().mapToDouble(TargetForget.Forget::verifyS).toArray()),
                    closeS,
                    rebuildS,
                    wrong);
        }
    }

    static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length == 0 ? Double.NaN : (s[(s.length - 1) / 2] + s[s.length / 2]) / 2;
    }
}
