package dev.nepenthe.bench.forget;

import dev.nepenthe.bench.BenchIndexes;
import dev.nepenthe.bench.BenchStores;
import dev.nepenthe.bench.Machine;
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
import dev.nepenthe.core.internal.forget.SharedPasses;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.TestFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Forget volume: {@code subjects} data subjects of {@code perSubject} records each in a collection
 * of {@code n} records, forgotten one request per subject as a deletion-request queue would send
 * them (back to back, or at {@code rate} requests a second), while one thread searches without
 * pause. Measured per index (HNSW, IVF-PQ): how fast requests reach SEALED, how long the mark
 * ({@code forget()} returning, BLOCKED) and each request's way to SEALED take, search latency
 * during the forgets against the same thread's quiet baseline right before, and how many shared
 * cleanup removals and verification checks the forget worker ran (its batches, docs/FORGET.md,
 * "Forgets that arrive together").
 *
 * <p>Data: seeded clustered vectors (100 clusters, spread 1.0, as {@link ForgetBench}: two records
 * of one cluster sit near cosine 0.5, so the probe at 0.85 finds no false residue). The store is a
 * real one: AES-GCM, fsync before every acknowledgement, the evidence ledger signed. The harness
 * checks its own result: every request must end SEALED having forgotten exactly its subject's
 * records, or it exits with status 1 after the tables.
 *
 * <p>Usage: {@code ./nepenthe bench forget-volume n=100000 dim=384 subjects=1000 perSubject=5
 * index=both rate=0 quiet=5 warmup=0 dir=/tmp}. {@code warmup=N} forgets N other subjects first,
 * outside every table, so the forget path is compiled before the quiet window.
 */
public final class ForgetVolumeBench {

    private static final String USAGE =
            "./nepenthe bench forget-volume n=100000 dim=384 subjects=1000 perSubject=5"
                    + " index=hnsw|ivfpq|both rate=0 quiet=5 warmup=0 dir=/tmp";
    private static final Set<String> KNOWN =
            Set.of("n", "dim", "subjects", "perSubject", "index", "rate", "quiet", "warmup", "dir");

    /** One index's figures. */
    record Result(
            String index,
            int subjects,
            int perSubject,
            double rate,
            double submitSeconds,
            double markP50Ms,
            double markP99Ms,
            double allSealedSeconds,
            double perSecond,
            double sealP50Seconds,
            double sealP99Seconds,
            long removals,
            long checks,
            long cleaned,
            double quietP50,
            double quietP99,
            double duringP50,
            double duringP99,
            int quietCount,
            int duringCount,
            Map<String, Integer> endStates,
            int wrong) {}

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs(args, USAGE);
        a.onlyKnown(KNOWN);
        int n = a.i("n", 100_000);
        int dim = a.i("dim", 384);
        int subjects = a.i("subjects", 1000);
        int perSubject = a.i("perSubject", 5);
        double rate = a.d("rate", 0);
        int quiet = a.i("quiet", 5);
        int warmup = a.i("warmup", 0);
        Path base = Path.of(a.s("dir", System.getProperty("java.io.tmpdir")));
        String index = a.s("index", "both");
        List<String> kinds =
                switch (index) {
                    case "both" -> List.of("hnsw", "ivfpq");
                    case "hnsw", "ivfpq" -> List.of(index);
                    default ->
                            throw new IllegalArgumentException(
                                    "index: expected hnsw, ivfpq or both, got '"
                                            + index
                                            + "'\nusage: "
                                            + USAGE);
                };
        require(
                n > 0
                        && dim > 0
                        && subjects > 0
                        && perSubject > 0
                        && quiet > 0
                        && warmup >= 0
                        && rate >= 0,
                "n, dim, subjects, perSubject and quiet: expected above 0, warmup and rate 0 or"
                        + " more; got n="
                        + n
                        + " dim="
                        + dim
                        + " subjects="
                        + subjects
                        + " perSubject="
                        + perSubject
                        + " quiet="
                        + quiet
                        + " warmup="
                        + warmup
                        + " rate="
                        + rate);
        long forgotten = (long) (subjects + warmup) * perSubject;
        require(
                forgotten <= n / 2,
                "(subjects + warmup) x perSubject = "
                        + forgotten
                        + " records: expected at most half of n="
                        + n
                        + " (the rest are the survivors the searches and the probe run over)");
        require(Files.isDirectory(base), "dir: expected an existing folder, got '" + base + "'");

        System.out.println("forget-volume bench: " + Machine.describe());
        System.out.printf(
                Locale.ROOT,
                "n=%d dim=%d subjects=%d perSubject=%d rate=%s quiet=%d s warmup=%d load average"
                        + " at the start %.2f%n",
                n,
                dim,
                subjects,
                perSubject,
                rate == 0 ? "back to back" : rate + "/s",
                quiet,
                warmup,
                Machine.loadAverage());
        List<Result> results = new ArrayList<>();
        for (String kind : kinds) {
            Path dir = Files.createTempDirectory(base, "nepenthe-forget-volume-");
            try {
                results.add(run(kind, dir, n, dim, subjects, perSubject, rate, quiet, warmup));
            } finally {
                TestFiles.deleteTree(dir);
            }
        }
        System.out.println();
        System.out.println(
                "| index | subjects x records | arrival | submit all (s) | forget() returns p50 /"
                    + " p99 (ms) | until all SEALED (s) | requests/s to SEALED | submit to SEALED"
                    + " p50 / p99 (s) | cleanup removals / verification checks | requests per"
                    + " removal | end states |");
        System.out.println("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for (Result r : results) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %d x %d | %s | %.1f | %.2f / %.2f | %.1f | %.1f | %.2f / %.2f | %d / %d"
                            + " | %.1f | %s |%n",
                    r.index(),
                    r.subjects(),
                    r.perSubject(),
                    r.rate() == 0 ? "back to back" : r.rate() + "/s",
                    r.submitSeconds(),
                    r.markP50Ms(),
                    r.markP99Ms(),
                    r.allSealedSeconds(),
                    r.perSecond(),
                    r.sealP50Seconds(),
                    r.sealP99Seconds(),
                    r.removals(),
                    r.checks(),
                    r.removals() == 0 ? Double.NaN : (double) r.cleaned() / r.removals(),
                    r.endStates());
        }
        System.out.println();
        System.out.println(
                "| index | search p50 quiet / during forgets (ms) | p99 quiet / during forgets (ms)"
                        + " | p99 during / quiet | searches quiet / during |");
        System.out.println("|---|---:|---:|---:|---:|");
        for (Result r : results) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %.3f / %.3f | %.3f / %.3f | %.2f | %d / %d |%n",
                    r.index(),
                    r.quietP50(),
                    r.duringP50(),
                    r.quietP99(),
                    r.duringP99(),
                    r.duringP99() / r.quietP99(),
                    r.quietCount(),
                    r.duringCount());
        }
        System.out.printf(Locale.ROOT, "load average at the end: %.2f%n", Machine.loadAverage());
        int wrong = results.stream().mapToInt(Result::wrong).sum();
        if (wrong > 0) {
            System.err.println(
                    "forget-volume: "
                            + wrong
                            + " requests did not end SEALED with exactly their subject's "
                            + perSubject
                            + " records (see the lines above)");
            System.exit(1);
        }
    }

    private static Result run(
            String kind,
            Path dir,
            int n,
            int dim,
            int subjects,
            int perSubject,
            double rate,
            int quiet,
            int warmup)
            throws Exception {
        IndexSpec index = BenchIndexes.forKind(kind, dim, Map.of(), false);
        float[][] data = Datasets.clustered(7, n, dim, 100, 1.0);
        float[][] queries = Datasets.clustered(8, 1000, dim, 100, 1.0);
        try (Nepenthe store = BenchStores.open(dir)) {
            VectorCollection c = BenchStores.createBench(store, dim, index);
            // The measured subjects take the first records, the warm-up subjects the next, and
            // filler subjects of ten the rest.
            long t0 = System.nanoTime();
            BenchStores.load(
                    c,
                    n,
                    i ->
                            VectorRecord.builder("r" + i)
                                    .subject(subjectOf(i, subjects, warmup, perSubject))
                                    .vector(data[i])
                                    .build());
            // Fold the load's write-ahead log into segments now, so the first forget does not
            // pay for checkpointing the whole load.
            c.checkpoint();
            System.out.printf(
                    Locale.ROOT,
                    "%s: loaded %d records in %.1f s%n",
                    kind,
                    n,
                    (System.nanoTime() - t0) / 1e9);

            for (int w = 0; w < warmup; w++) {
                ForgetOperation op =
                        store.forget(
                                ForgetRequest.of(
                                        ForgetScope.subject("warmup-" + w),
                                        "warmup-" + w,
                                        "benchmark"));
                store.awaitOperation(op.id(), Duration.ofMinutes(10));
            }
            if (warmup > 0) {
                System.out.printf(Locale.ROOT, "%s: %d warm-up forgets done%n", kind, warmup);
            }

            // One search thread, without pause; each latency is kept with the phase it ran in
            // (0: not measured, 1: quiet, 2: forgets), if the phase did not change under it.
            AtomicInteger phase = new AtomicInteger(0);
            AtomicBoolean stop = new AtomicBoolean();
            List<Double> quietMs = new ArrayList<>();
            List<Double> duringMs = new ArrayList<>();
            Thread searcher =
                    new Thread(
                            () -> {
                                int q = 0;
                                while (!stop.get()) {
                                    int before = phase.get();
                                    long s = System.nanoTime();
                                    c.search(SearchRequest.of(queries[q++ % queries.length], 10));
                                    double ms = (System.nanoTime() - s) / 1e6;
                                    if (before != 0 && phase.get() == before) {
                                        (before == 1 ? quietMs : duringMs).add(ms);
                                    }
                                }
                            },
                            "bench-search");
            searcher.start();
            Thread.sleep(1000); // the search path warms up before the quiet window
            phase.set(1);
            Thread.sleep(quiet * 1000L);

            long removals = SharedPasses.removals();
            long checks = SharedPasses.checks();
            long cleaned = SharedPasses.operationsCleaned();
            List<String> ids = new ArrayList<>(subjects);
            List<Instant> submitted = new ArrayList<>(subjects);
            List<Double> markMs = new ArrayList<>(subjects);
            phase.set(2);
            long start = System.nanoTime();
            long periodNanos = rate > 0 ? (long) (1e9 / rate) : 0;
            for (int s = 0; s < subjects; s++) {
                if (periodNanos > 0) {
                    long wait = start + s * periodNanos - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                }
                Instant at = Instant.now();
                long m = System.nanoTime();
                ForgetOperation op =
                        store.forget(
                                ForgetRequest.of(
                                        ForgetScope.subject("subject-" + s),
                                        "queue-" + s,
                                        "gdpr-art17"));
                markMs.add((System.nanoTime() - m) / 1e6);
                ids.add(op.id());
                submitted.add(at);
            }
            double submitSeconds = (System.nanoTime() - start) / 1e9;
            List<ForgetOperation> done = new ArrayList<>(subjects);
            for (String id : ids) {
                done.add(store.awaitOperation(id, Duration.ofMinutes(60)));
            }
            phase.set(0);
            stop.set(true);
            searcher.join();
            removals = SharedPasses.removals() - removals;
            checks = SharedPasses.checks() - checks;
            cleaned = SharedPasses.operationsCleaned() - cleaned;

            Map<String, Integer> states = new TreeMap<>();
            List<Double> sealSeconds = new ArrayList<>();
            Instant lastSealed = submitted.get(0);
            int wrong = 0;
            for (int s = 0; s < subjects; s++) {
                ForgetOperation op = done.get(s);
                states.merge(op.state().name(), 1, Integer::sum);
                Instant sealed = op.timeline().get(OperationState.SEALED);
                if (op.state() != OperationState.SEALED || op.totalForgotten() != perSubject) {
                    wrong++;
                    System.out.printf(
                            Locale.ROOT,
                            "%s: request %d (%s) ended %s having forgotten %d records, expected %d:"
                                    + " %s%n",
                            kind,
                            s,
                            op.id(),
                            op.state(),
                            op.totalForgotten(),
                            perSubject,
                            op.note());
                } else {
                    sealSeconds.add(Duration.between(submitted.get(s), sealed).toNanos() / 1e9);
                    if (sealed.isAfter(lastSealed)) {
                        lastSealed = sealed;
                    }
                }
            }
            double allSealed = Duration.between(submitted.get(0), lastSealed).toNanos() / 1e9;
            System.out.printf(
                    Locale.ROOT,
                    "%s: %d requests submitted in %.1f s, all settled after %.1f s; %d cleanup"
                            + " removals, %d verification checks%n",
                    kind,
                    subjects,
                    submitSeconds,
                    allSealed,
                    removals,
                    checks);
            return new Result(
                    kind,
                    subjects,
                    perSubject,
                    rate,
                    submitSeconds,
                    Stats.pct(markMs, 50),
                    Stats.pct(markMs, 99),
                    allSealed,
                    subjects / allSealed,
                    Stats.pct(sealSeconds, 50),
                    Stats.pct(sealSeconds, 99),
                    removals,
                    checks,
                    cleaned,
                    Stats.pct(quietMs, 50),
                    Stats.pct(quietMs, 99),
                    Stats.pct(duringMs, 50),
                    Stats.pct(duringMs, 99),
                    quietMs.size(),
                    duringMs.size(),
                    states,
                    wrong);
        }
    }

    /**
     * Who record {@code i} belongs to: a measured subject, a warm-up subject, or a filler subject
     * of ten.
     */
    private static String subjectOf(int i, int subjects, int warmup, int perSubject) {
        if (i < subjects * perSubject) {
            return "subject-" + i / perSubject;
        }
        int j = i - subjects * perSubject;
        if (j < warmup * perSubject) {
            return "warmup-" + j / perSubject;
        }
        return "filler-" + j / 10;
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message + "\nusage: " + USAGE);
        }
    }
}
