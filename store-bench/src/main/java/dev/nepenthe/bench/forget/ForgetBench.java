package dev.nepenthe.bench.forget;

import dev.nepenthe.bench.BenchIndexes;
import dev.nepenthe.bench.BenchStores;
import dev.nepenthe.bench.Stats;
import dev.nepenthe.bench.hnsw.BenchArgs;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * What a forget costs in a loaded store: for one subject with 10, 100 and 1,000 records in a
 * collection of {@code n} records (HNSW and IVF-PQ), the time until {@code forget} returns (the
 * mark: BLOCKED) and until the operation is SEALED, with the time spent in each phase; and search
 * latency on other threads before and while the forgets run.
 *
 * <p>Data: seeded clustered vectors (100 clusters, spread 1.0, so two records of one cluster sit
 * near cosine 0.5 and the verification probe at 0.85 finds no false residue). The store is a real
 * one: AES-GCM, fsync before every acknowledgement, the evidence ledger signed.
 *
 * <p>With {@code writesPerSec=W} (W > 0) a writer thread upserts W records a second in batches of
 * 10 (half new records, half replacements of existing ones) from the end of the quiet window on, so
 * the latency table has three columns: quiet (searches alone), with the writer, and with the writer
 * and the forgets.
 *
 * <p>Usage: {@code ./nepenthe bench forget n=100000 dim=384 sizes=10,100,1000 reps=3
 * index=hnsw,ivfpq searchThreads=1 writesPerSec=0 warmup=0 slowMs=2 slowDetail=0}. {@code warmup=N}
 * forgets N subjects of each size before measuring (outside every table), so the forget path is
 * compiled; searches slower than {@code slowMs} during forgets are counted by the operation's state
 * and by whether the search thread was on the CPU for most of it ({@code slowDetail=1} lists each).
 */
public final class ForgetBench {

    private static final String USAGE =
            "./nepenthe bench forget n=100000 dim=384 sizes=10,100,1000 reps=3 index=hnsw,ivfpq"
                    + " searchThreads=1 writesPerSec=0 warmup=0 slowMs=2 slowDetail=0 dir=/tmp"
                    + " plot=FILE.png (search latency quiet and during forgets)";

    record Row(
            String index,
            int size,
            List<Double> markMs,
            List<Double> sealedMs,
            List<Double> holdCheckMs,
            List<Double> cleanupMs,
            List<Double> verifyMs,
            List<String> states) {}

    record Latency(
            String index,
            double baseP50,
            double baseP99,
            double writerP99,
            double duringP50,
            double duringP99,
            int baseCount,
            int writerCount,
            int duringCount,
            long written) {}

    /** Searches slower than this (during forgets) are classified by phase and by CPU share. */
    private static double slowMs;

    private static boolean slowDetail;

    /** Subjects of each size forgotten before measuring, to compile the forget path. */
    private static int warmup;

    /** Records a second the writer thread upserts (0: no writer). */
    private static int writesPerSec;

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs(args, USAGE);
        int n = a.i("n", 100_000);
        int dim = a.i("dim", 384);
        int[] sizes = a.ints("sizes", new int[] {10, 100, 1000});
        int reps = a.i("reps", 3);
        int searchThreads = a.i("searchThreads", 1);
        slowMs = a.i("slowMs", 2);
        warmup = a.i("warmup", 0);
        writesPerSec = a.i("writesPerSec", 0);
        slowDetail = a.i("slowDetail", 0) == 1;
        Path base = Path.of(a.s("dir", System.getProperty("java.io.tmpdir")));
        List<String> kinds = List.of(a.s("index", "hnsw,ivfpq").split(","));
        System.out.printf(
                Locale.ROOT,
                "forget bench: n=%d dim=%d sizes=%s reps=%d searchThreads=%d writesPerSec=%d"
                        + " cores=%d load=%.2f%n",
                n,
                dim,
                Arrays.toString(sizes),
                reps,
                searchThreads,
                writesPerSec,
                Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());

        List<Row> rows = new ArrayList<>();
        List<Latency> latencies = new ArrayList<>();
        for (String kind : kinds) {
            Path dir = Files.createTempDirectory(base, "nepenthe-forget-bench-");
            try {
                run(kind, dir, n, dim, sizes, reps, searchThreads, rows, latencies);
            } finally {
                TestFiles.deleteTree(dir);
            }
        }
        System.out.println();
        System.out.println(
                "| index | records in subject | forget() returns, BLOCKED (ms) | until SEALED (ms)"
                        + " | BLOCKED to CLEANUP (ms) | cleanup (ms) | verify and seal (ms) | end"
                        + " states |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---|");
        for (Row r : rows) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %d | %.2f | %.0f | %.1f | %.0f | %.0f | %s |%n",
                    r.index(),
                    r.size(),
                    Stats.median(r.markMs()),
                    Stats.median(r.sealedMs()),
                    Stats.median(r.holdCheckMs()),
                    Stats.median(r.cleanupMs()),
                    Stats.median(r.verifyMs()),
                    String.join(",", r.states().stream().distinct().toList()));
        }
        System.out.println("(medians of " + reps + " subjects per row)");
        System.out.println();
        String during = writesPerSec > 0 ? "writer + forgets" : "during forgets";
        System.out.println(
                "| index | search p50 quiet (ms) | p99 quiet (ms) | p99 with writer (ms) | p50 "
                        + during
                        + " (ms)"
                        + " | p99 "
                        + during
                        + " (ms) | p99 "
                        + during
                        + " / quiet | searches quiet / writer / forgets"
                        + " | records written |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (Latency l : latencies) {
            // Without a writer (writesPerSec=0) its phase never ran: a dash, not a percentile of
            // nothing.
            String writerP99 =
                    l.writerCount() == 0 ? "-" : String.format(Locale.ROOT, "%.3f", l.writerP99());
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %.3f | %.3f | %s | %.3f | %.3f | %.2f | %d / %d / %d | %d |%n",
                    l.index(),
                    l.baseP50(),
                    l.baseP99(),
                    writerP99,
                    l.duringP50(),
                    l.duringP99(),
                    l.duringP99() / l.baseP99(),
                    l.baseCount(),
                    l.writerCount(),
                    l.duringCount(),
                    l.written());
        }
        System.out.printf(
                Locale.ROOT,
                "load average at the end: %.2f%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        Path plot = a.path("plot");
        if (plot != null) {
            ForgetLatencyPlot.write(
                    plot,
                    String.format(
                            Locale.ROOT,
                            "n = %,d, d = %d, subjects of %s records," + " %d search thread(s)",
                            n,
                            dim,
                            Arrays.toString(sizes),
                            searchThreads),
                    latencies);
        }
    }

    // A search sample packs the operation's state into its double[] as the ordinal, read back
    // in the same run and never stored.
    @SuppressWarnings("EnumOrdinal")
    private static void run(
            String kind,
            Path dir,
            int n,
            int dim,
            int[] sizes,
            int reps,
            int searchThreads,
            List<Row> rows,
            List<Latency> latencies)
            throws Exception {
        IndexSpec index = BenchIndexes.forKind(kind, dim, Map.of(), true);
        float[][] data = Datasets.clustered(7, n, dim, 100, 1.0);
        float[][] queries = Datasets.clustered(8, 1000, dim, 100, 1.0);
        try (Nepenthe store = BenchStores.open(dir)) {
            VectorCollection c = BenchStores.createBench(store, dim, index);
            // Target subjects take the first records; the rest belong to filler subjects of 10.
            List<String> subjectOf = new ArrayList<>(n);
            for (String role : new String[] {"warmup", "target"}) {
                for (int size : sizes) {
                    for (int r = 0; r < (role.equals("warmup") ? warmup : reps); r++) {
                        for (int i = 0; i < size; i++) {
                            subjectOf.add(role + "-" + size + "-" + r);
                        }
                    }
                }
            }
            if (subjectOf.size() > n / 2) {
                throw new IllegalArgumentException(
                        "sizes x (reps + warmup) = "
                                + subjectOf.size()
                                + " records: expected at most"
                                + " half of n="
                                + n);
            }
            while (subjectOf.size() < n) {
                subjectOf.add("filler-" + subjectOf.size() / 10);
            }
            long t0 = System.nanoTime();
            BenchStores.load(
                    c,
                    n,
                    i ->
                            VectorRecord.builder("r" + i)
                                    .subject(subjectOf.get(i))
                                    .vector(data[i])
                                    .build());
            // Fold the ingest's write-ahead log into segments now, so that the first forget does
            // not pay for checkpointing the whole load.
            c.checkpoint();
            // IVF-PQ trains in the background once trainSize vectors are in: forgets are measured
            // against the trained index, as a store that has been up a while serves them.
            while (c.describeIndex().stats().getOrDefault("training", 0).intValue() == 1) {
                Thread.sleep(200);
            }
            System.out.printf(
                    Locale.ROOT,
                    "%s: loaded %d records in %.1f s%n",
                    kind,
                    n,
                    (System.nanoTime() - t0) / 1e9);

            // Searches on other threads, each latency stamped with whether a forget was running.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean forgetting = new AtomicBoolean();
            AtomicBoolean writing = new AtomicBoolean();
            AtomicLong written = new AtomicLong();
            AtomicBoolean measuring = new AtomicBoolean();
            AtomicReference<String> currentOp = new AtomicReference<>();
            AtomicLong opStart = new AtomicLong();
            List<List<double[]>> samples = new ArrayList<>();
            List<Thread> searchers = new ArrayList<>();
            for (int t = 0; t < searchThreads; t++) {
                List<double[]> mine = new ArrayList<>();
                samples.add(mine);
                int offset = t * 97;
                Thread th =
                        new Thread(
                                () -> {
                                    int q = offset;
                                    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
                                    while (!stop.get()) {
                                        int during = forgetting.get() ? 2 : writing.get() ? 1 : 0;
                                        long cpu = mx.getCurrentThreadCpuTime();
                                        long s = System.nanoTime();
                                        c.search(
                                                SearchRequest.of(
                                                        queries[q++ % queries.length], 10));
                                        double ms = (System.nanoTime() - s) / 1e6;
                                        double cpuMs = (mx.getCurrentThreadCpuTime() - cpu) / 1e6;
                                        int nowPhase = forgetting.get() ? 2 : writing.get() ? 1 : 0;
                                        if (measuring.get() && during == nowPhase) {
                                            String id = currentOp.get();
                                            double phase = -1;
                                            if (during == 2 && ms > slowMs && id != null) {
                                                phase =
                                                        store.operation(id)
                                                                .map(
                                                                        o ->
                                                                                (double)
                                                                                        o.state()
                                                                                                .ordinal())
                                                                .orElse(-1.0);
                                            }
                                            mine.add(
                                                    new double[] {
                                                        during,
                                                        ms,
                                                        cpuMs,
                                                        phase,
                                                        (s - opStart.get()) / 1e6
                                                    });
                                        }
                                    }
                                },
                                "bench-search-" + t);
                th.start();
                searchers.add(th);
            }
            // Warm-up forgets, outside every table: the first forgets after start-up compile the
            // forget path, and on two cores the compiler threads then compete with the searches
            // (measured: BENCHMARKS.md). The searches are already warm from the load.
            int key = 0;
            for (int size : sizes) {
                for (int r = 0; r < warmup; r++) {
                    ForgetOperation op =
                            store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("warmup-" + size + "-" + r),
                                            "bench-" + key++,
                                            "benchmark"));
                    store.awaitOperation(op.id(), Duration.ofMinutes(10));
                }
            }
            if (warmup > 0) {
                System.out.printf(
                        Locale.ROOT, "%s: %d warm-up forgets done%n", kind, warmup * sizes.length);
            }
            Thread.sleep(warmup > 0 ? 1000 : 0); // the searches warm up too
            measuring.set(true);
            Thread.sleep(5000); // the quiet window
            Thread writer = null;
            if (writesPerSec > 0) {
                // Upserts at a steady rate, new records and replacements of filler records (never a
                // target subject's), each batch fsynced like any acknowledged write.
                int firstFiller =
                        n - (int) subjectOf.stream().filter(x -> x.startsWith("filler-")).count();
                writer =
                        new Thread(
                                () -> {
                                    Random rnd = new Random(9);
                                    long periodNanos = 10 * 1_000_000_000L / writesPerSec;
                                    long next = System.nanoTime();
                                    for (int b = 0; !stop.get(); b++) {
                                        List<VectorRecord> batch = new ArrayList<>(10);
                                        for (int i = 0; i < 10; i++) {
                                            boolean replace = i % 2 == 1;
                                            int from = firstFiller + rnd.nextInt(n - firstFiller);
                                            String id = replace ? "r" + from : "w" + b + "-" + i;
                                            // A filler's vector: a copy of a target's would be
                                            // residue the probe rightly finds.
                                            float[] v =
                                                    data[
                                                            firstFiller
                                                                    + rnd.nextInt(n - firstFiller)];
                                            batch.add(
                                                    VectorRecord.builder(id)
                                                            .subject(
                                                                    replace
                                                                            ? subjectOf.get(from)
                                                                            : "writer-" + b)
                                                            .vector(v)
                                                            .build());
                                        }
                                        // Two replacements of one filler record in a batch are not
                                        // allowed: keep the first.
                                        Map<String, VectorRecord> unique = new LinkedHashMap<>();
                                        batch.forEach(r -> unique.putIfAbsent(r.id(), r));
                                        c.upsertAll(List.copyOf(unique.values()));
                                        written.addAndGet(unique.size());
                                        next += periodNanos;
                                        long wait = next - System.nanoTime();
                                        if (wait > 0) {
                                            LockSupport.parkNanos(wait);
                                        }
                                    }
                                },
                                "bench-writer");
                writing.set(true);
                writer.start();
                Thread.sleep(5000); // the writer-only window
            }
            for (int size : sizes) {
                Row row =
                        new Row(
                                kind,
                                size,
                                new ArrayList<>(),
                                new ArrayList<>(),
                                new ArrayList<>(),
                                new ArrayList<>(),
                                new ArrayList<>(),
                                new ArrayList<>());
                for (int r = 0; r < reps; r++) {
                    long s = System.nanoTime();
                    opStart.set(s);
                    forgetting.set(true);
                    ForgetOperation op =
                            store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("target-" + size + "-" + r),
                                            "bench-" + key++,
                                            "benchmark"));
                    double markMs = (System.nanoTime() - s) / 1e6;
                    currentOp.set(op.id());
                    ForgetOperation done = store.awaitOperation(op.id(), Duration.ofMinutes(10));
                    double sealedMs = (System.nanoTime() - s) / 1e6;
                    forgetting.set(false);
                    Map<OperationState, Instant> tl = done.timeline();
                    row.markMs().add(markMs);
                    row.sealedMs().add(sealedMs);
                    row.holdCheckMs()
                            .add(between(tl, OperationState.BLOCKED, OperationState.CLEANUP));
                    row.cleanupMs()
                            .add(between(tl, OperationState.CLEANUP, OperationState.VERIFYING));
                    row.verifyMs().add(between(tl, OperationState.VERIFYING, done.state()));
                    row.states().add(done.state().name());
                    if (done.totalForgotten() != size) {
                        throw new IllegalStateException(
                                "operation forgot "
                                        + done.totalForgotten()
                                        + " records, expected "
                                        + size
                                        + " ("
                                        + done.note()
                                        + ")");
                    }
                    System.out.printf(
                            Locale.ROOT,
                            "%s size=%d rep=%d: mark %.2f ms, %s after %.0f ms%n",
                            kind,
                            size,
                            r,
                            markMs,
                            done.state(),
                            sealedMs);
                    Thread.sleep(300); // let the searchers log some "before"-like samples between
                    // forgets
                }
                rows.add(row);
            }
            stop.set(true);
            for (Thread th : searchers) {
                th.join();
            }
            if (writer != null) {
                writer.join();
            }
            List<Double> before = new ArrayList<>();
            List<Double> withWriter = new ArrayList<>();
            List<Double> during = new ArrayList<>();
            Map<String, int[]> slowByPhase = new TreeMap<>();
            for (List<double[]> l : samples) {
                for (double[] x : l) {
                    (x[0] == 2 ? during : x[0] == 1 ? withWriter : before).add(x[1]);
                    if (x[0] == 2 && x[1] > slowMs) {
                        String ph = x[3] < 0 ? "?" : OperationState.values()[(int) x[3]].name();
                        int[] cnt = slowByPhase.computeIfAbsent(ph, k -> new int[2]);
                        cnt[0]++;
                        if (slowDetail) {
                            System.out.printf(
                                    Locale.ROOT,
                                    "  slow search %s at +%.0f ms: %.2f ms wall, %.2f ms cpu%n",
                                    ph,
                                    x[4],
                                    x[1],
                                    x[2]);
                        }
                        if (x[2] > 0.5 * x[1]) {
                            cnt[1]++; // mostly on CPU: the search itself was slow, not
                            // descheduled or waiting
                        }
                    }
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "%s: searches during forgets slower than %.1f ms, by the operation's state"
                            + " [count, of which mostly on CPU]:",
                    kind,
                    slowMs);
            slowByPhase.forEach(
                    (k, v) -> System.out.printf(Locale.ROOT, " %s=%d/%d", k, v[0], v[1]));
            System.out.println();
            latencies.add(
                    new Latency(
                            kind,
                            Stats.pct(before, 50),
                            Stats.pct(before, 99),
                            Stats.pct(withWriter, 99),
                            Stats.pct(during, 50),
                            Stats.pct(during, 99),
                            before.size(),
                            withWriter.size(),
                            during.size(),
                            written.get()));
        }
    }

    /**
     * Milliseconds from entering {@code from} to entering {@code to}, per the operation's timeline.
     */
    private static double between(
            Map<OperationState, Instant> tl, OperationState from, OperationState to) {
        Instant a = tl.get(from);
        Instant b = tl.get(to);
        return a == null || b == null ? Double.NaN : Duration.between(a, b).toNanos() / 1e6;
    }
}
