package dev.nepenthe.cluster.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.ratis.util.ExitUtils;

/**
 * {@code ./nepenthe bench cluster}: what replication costs and how long its waits are, on this
 * machine. Ingest and search throughput over gRPC with a single-node server, a group of one replica
 * and a group of three; a forget's time to BLOCKED and SEALED on every member; failover from the
 * leader's stop; a lagging replica's catch-up (by the log); and a new replica joining (by a copy of
 * the leader's store). Every replica runs in this one JVM on loopback, so they share the machine's
 * cores: the output says so.
 *
 * <pre>
 * ./nepenthe bench cluster [n=20000] [dim=128] [batch=256] [clients=2] [queries=2000]
 *     [warmup=500] [k=10] [reps=3] [forgets=10] [rounds=5] [catchup=100000] [index=hnsw]
 *     [election-ms=1000-2000] [seed=7] [step-seconds=600]
 *     [only=ingest,search,forget,failover,catchup,join]
 * </pre>
 *
 * Prints one Markdown block on standard output (progress goes to standard error); temporary folders
 * live under java.io.tmpdir and are deleted at the end.
 */
public final class ClusterBench {

    private static final List<String> STEPS =
            List.of("ingest", "search", "forget", "failover", "catchup", "join");

    // Ratis logs every configuration key and election at INFO; held so the level stays set.
    private static final Logger RATIS_LOG = Logger.getLogger("org.apache.ratis");

    private final Map<String, String> o;
    private final List<String> args;
    private final Set<String> only;
    private final int n;
    private final int dim;
    private final int batch;
    private final int clients;
    private final long seed;
    private final Duration step;
    private final List<String> ingestRows = new ArrayList<>();
    private final List<String> searchRows = new ArrayList<>();
    private final List<String> sections = new ArrayList<>();

    private ClusterBench(List<String> args) {
        this.args = List.copyOf(args);
        o = new LinkedHashMap<>();
        for (String kv :
                List.of(
                        "n=20000",
                        "dim=128",
                        "batch=256",
                        "clients=2",
                        "queries=2000",
                        "warmup=500",
                        "k=10",
                        "reps=3",
                        "forgets=10",
                        "rounds=5",
                        "catchup=100000",
                        "index=hnsw",
                        "election-ms=1000-2000",
                        "seed=7",
                        "step-seconds=600",
                        "only=" + String.join(",", STEPS))) {
            o.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0 || !o.containsKey(a.substring(0, eq))) {
                throw new IllegalArgumentException(
                        "bench cluster: expected key=value with a key among "
                                + o.keySet()
                                + ", got '"
                                + a
                                + "'");
            }
            o.put(a.substring(0, eq), a.substring(eq + 1));
        }
        only = new LinkedHashSet<>(Arrays.asList(o.get("only").split(",", -1)));
        if (!STEPS.containsAll(only)) {
            throw new IllegalArgumentException(
                    "only: expected steps among " + STEPS + ", got '" + o.get("only") + "'");
        }
        n = positive("n");
        dim = positive("dim");
        batch = positive("batch");
        clients = positive("clients");
        seed = Long.parseLong(o.get("seed"));
        step = Duration.ofSeconds(positive("step-seconds"));
        for (String key :
                List.of("queries", "warmup", "k", "reps", "forgets", "rounds", "catchup")) {
            positive(key);
        }
        if (only.contains("forget") && positive("forgets") > (n + 19) / 20) {
            throw new IllegalArgumentException(
                    "forgets: expected at most one per 20 records ("
                            + (n + 19) / 20
                            + " for n="
                            + n
                            + "), got "
                            + o.get("forgets"));
        }
        if (!o.get("index").matches("exact|hnsw|ivfpq")) {
            throw new IllegalArgumentException(
                    "index: expected exact, hnsw or ivfpq, got '" + o.get("index") + "'");
        }
        election();
    }

    private int positive(String key) {
        try {
            int v = Integer.parseInt(o.get(key));
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // falls through to the refusal
        }
        throw new IllegalArgumentException(
                key + ": expected a positive whole number, got '" + o.get(key) + "'");
    }

    private Duration[] election() {
        String[] mm = o.get("election-ms").split("-", -1);
        try {
            if (mm.length == 2) {
                Duration min = Duration.ofMillis(Long.parseLong(mm[0]));
                Duration max = Duration.ofMillis(Long.parseLong(mm[1]));
                if (min.toMillis() >= 50 && max.compareTo(min) > 0) {
                    return new Duration[] {min, max};
                }
            }
        } catch (NumberFormatException e) {
            // falls through to the refusal
        }
        throw new IllegalArgumentException(
                "election-ms: expected MIN-MAX in milliseconds, 50 <= MIN < MAX, got '"
                        + o.get("election-ms")
                        + "'");
    }

    /**
     * Runs the benchmark and prints its Markdown block.
     *
     * @param args key=value parameters (see the class comment)
     */
    public static void main(String[] args) {
        try {
            run(List.of(args), System.out);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
        } catch (Exception e) {
            System.err.println("bench cluster: failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    /**
     * Runs the steps asked for and prints the Markdown block to {@code out}.
     *
     * @param args key=value parameters
     * @param out where the block goes
     * @throws IllegalArgumentException if a parameter is unknown or out of range
     * @throws Exception if a step fails or is not done within its bound (the message says which)
     */
    public static void run(List<String> args, PrintStream out) throws Exception {
        new ClusterBench(args).run(out);
    }

    private void run(PrintStream out) throws Exception {
        RATIS_LOG.setLevel(Level.WARNING);
        // Ratis ends the process when a server fails for good; here a failure is a message.
        ExitUtils.disableSystemExit();
        String loadBefore = loadAverage();
        Path root = Files.createTempDirectory("nepenthe-cluster-bench");
        try {
            try (BenchGroup three = replicas(root.resolve("three"), 3)) {
                String last;
                if (only.contains("ingest") || only.contains("search")) {
                    progress("a single server, a group of one and a group of three, interleaved");
                    try (BenchGroup plain = BenchGroup.plainServer(root.resolve("server"));
                            BenchGroup one = replicas(root.resolve("one"), 1)) {
                        last =
                                ingestAndSearch(
                                        List.of(
                                                new Setup(plain, "single server (no Raft)"),
                                                new Setup(one, "1 replica (a Raft group of one)"),
                                                new Setup(three, "3 replicas")));
                    }
                } else {
                    progress("a group of three replicas");
                    last = ingestAndSearch(List.of(new Setup(three, "3 replicas")));
                }
                if (only.contains("forget")) {
                    progress("forgets");
                    forgets(three, last);
                }
                if (only.contains("failover")) {
                    progress("failovers");
                    failovers(three);
                }
                if (only.contains("catchup")) {
                    progress("catch-up");
                    catchUp(three);
                }
                if (only.contains("join")) {
                    progress("a fourth replica joins");
                    join(three);
                }
            }
        } finally {
            delete(root);
        }
        print(out, loadBefore, loadAverage());
    }

    private BenchGroup replicas(Path folder, int count) throws IOException {
        Duration[] e = election();
        return BenchGroup.replicas(folder, count, e[0], e[1]);
    }

    /** A group under measurement and the name its rows carry. */
    private record Setup(BenchGroup group, String name) {}

    /** One search measurement: a setup, with stale reads or not. */
    private record SearchRun(Setup setup, boolean stale) {}

    /**
     * Ingests {@code reps} collections into every setup (one, untimed, when ingest is not asked
     * for) and searches the last; returns the prefix of the last one's records. Rounds are
     * interleaved: each round visits every setup in turn, so a drift of the machine (the JIT
     * warming, another process) falls on all of them alike.
     */
    private String ingestAndSearch(List<Setup> setups) throws Exception {
        Map<Setup, Integer> leaders = new LinkedHashMap<>();
        Map<Setup, List<Double>> rates = new LinkedHashMap<>();
        for (Setup s : setups) {
            leaders.put(s, s.group().awaitLeader(step));
            rates.put(s, new ArrayList<>());
        }
        boolean timed = only.contains("ingest");
        int reps = timed ? positive("reps") : 1;
        for (int r = 0; r < reps; r++) {
            for (Setup s : setups) {
                int leader = leaders.get(s);
                s.group().create(leader, "bench-" + r, dim, o.get("index"));
                rates.get(s)
                        .add(
                                Load.ingest(
                                        s.group(),
                                        leader,
                                        Load.batches(
                                                "bench-" + r, "r" + r, n, dim, batch, seed + r),
                                        clients,
                                        step));
            }
        }
        if (timed) {
            for (Setup s : setups) {
                ingestRows.add(
                        "| " + s.name() + " | " + Spread.of(rates.get(s)).cells("%.0f") + " |");
            }
        }
        String collection = "bench-" + (reps - 1);
        for (Setup s : setups) {
            BenchGroup g = s.group();
            if (!g.plain()) {
                long committed = g.committed(leaders.get(s));
                for (int i = 0; i < g.size(); i++) {
                    g.awaitApplied(i, committed, step);
                }
            }
        }
        if (only.contains("search")) {
            searchInterleaved(setups, collection);
        }
        return "r" + (reps - 1);
    }

    private void searchInterleaved(List<Setup> setups, String collection) throws Exception {
        Map<SearchRun, List<Double>> qps = new LinkedHashMap<>();
        for (Setup s : setups) {
            qps.put(new SearchRun(s, false), new ArrayList<>());
            if (!s.group().plain()) {
                qps.put(new SearchRun(s, true), new ArrayList<>());
            }
        }
        for (int r = 0; r < positive("reps"); r++) {
            for (Map.Entry<SearchRun, List<Double>> e : qps.entrySet()) {
                BenchGroup g = e.getKey().setup().group();
                boolean stale = e.getKey().stale();
                e.getValue()
                        .add(
                                Load.search(
                                        g,
                                        IntStream.range(0, g.size()).boxed().toList(),
                                        stale,
                                        collection,
                                        dim,
                                        positive("k"),
                                        positive("warmup"),
                                        positive("queries"),
                                        clients,
                                        seed + 1_000L * (r + 1) + (stale ? 500 : 0),
                                        step));
            }
        }
        for (Map.Entry<SearchRun, List<Double>> e : qps.entrySet()) {
            BenchGroup g = e.getKey().setup().group();
            String reads = g.plain() ? "local" : e.getKey().stale() ? "stale" : "linearizable";
            String where = g.size() > 1 ? ", spread over all" : "";
            searchRows.add(
                    "| "
                            + e.getKey().setup().name()
                            + where
                            + " | "
                            + reads
                            + " | "
                            + Spread.of(e.getValue()).cells("%.0f")
                            + " |");
        }
    }

    private void forgets(BenchGroup g, String prefix) throws Exception {
        GroupPhases.Forgets f = GroupPhases.forgets(g, prefix, positive("forgets"), step);
        sections.add(
                "#### Forget with 3 replicas: milliseconds from the call, subjects of 20"
                        + " records\n\n"
                        + "| measure | median | min | max | rounds |\n"
                        + "|---|---:|---:|---:|---:|\n"
                        + "| forget() returns (reads blocked on every replica) | "
                        + Spread.of(f.returned()).cells("%.1f")
                        + " |\n"
                        + "| settled: every replica attested (GetOperation polled every 20 ms) | "
                        + Spread.of(f.sealed()).cells("%.0f")
                        + " |\n\n"
                        + "States forget() returned: "
                        + states(f.returnedStates())
                        + "; settled states: "
                        + states(f.endStates())
                        + ". Forget i goes through replica i mod 3. A forget settles SEALED, or"
                        + " NEEDS_REVIEW when a replica's probe finds survivors close to what it"
                        + " forgot (random vectors of few dimensions do).\n"
                        + f.unsealed().stream()
                                .map(u -> "\nNot sealed: " + u + "\n")
                                .collect(Collectors.joining()));
    }

    private static String states(Map<String, Integer> counts) {
        return counts.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(", "));
    }

    private void failovers(BenchGroup g) throws Exception {
        GroupPhases.Failovers f =
                GroupPhases.failovers(g, "bench-0", dim, positive("rounds"), step);
        sections.add(
                "#### Failover with 3 replicas: milliseconds from the leader's stop\n\n"
                        + "| measure | median | min | max | rounds |\n"
                        + "|---|---:|---:|---:|---:|\n"
                        + "| the leader's Replica.close() returns | "
                        + Spread.of(f.stop()).cells("%.0f")
                        + " |\n"
                        + "| another replica is leader and ready | "
                        + Spread.of(f.ready()).cells("%.0f")
                        + " |\n"
                        + "| first write through a surviving replica acknowledged | "
                        + Spread.of(f.write()).cells("%.0f")
                        + " |\n\n"
                        + "Election timeouts "
                        + o.get("election-ms")
                        + " ms. The write (one record, through the replica after the old leader,"
                        + " retried every 20 ms on failure) is sent once the old leader is closed;"
                        + " the stopped replica is started again and caught up between rounds.\n");
    }

    private void catchUp(BenchGroup g) throws Exception {
        GroupPhases.CatchUp c =
                GroupPhases.catchUp(
                        g, "bench-0", dim, positive("catchup"), batch, clients, seed, step);
        sections.add(
                "#### Catch-up of a replica "
                        + c.records()
                        + " records behind (3 replicas)\n\n"
                        + "| measure | median | min | max | rounds |\n"
                        + "|---|---:|---:|---:|---:|\n"
                        + "| Replica.start returns (ms) | "
                        + Spread.of(List.of(c.startMillis())).cells("%.0f")
                        + " |\n"
                        + "| first entry written while it was down applied (ms from the start) | "
                        + Spread.of(List.of(c.firstMillis())).cells("%.0f")
                        + " |\n"
                        + "| applied index reaches the leader's commit index (ms from the start) | "
                        + Spread.of(List.of(c.catchUpMillis())).cells("%.0f")
                        + " |\n"
                        + "| records caught up per second | "
                        + Spread.of(List.of(c.recordsPerSecond())).cells("%.0f")
                        + " |\n\n"
                        + "A follower stopped, "
                        + c.records()
                        + " records written through the leader in batches of "
                        + batch
                        + ", the follower started again: "
                        + c.entries()
                        + " log entries to apply. Until the first entry, the leader is waiting to"
                        + " retry the follower it lost: the replicas' appender retry policy"
                        + " (raft.server.log.appender.retry.policy: 10 retries 1 ms apart, 50"
                        + " 200 ms apart, then one a second).\n");
    }

    private void join(BenchGroup g) throws Exception {
        GroupPhases.Join j = GroupPhases.join(g, step);
        sections.add(
                "#### A fourth replica joins by a copy of the leader's store\n\n"
                        + "| measure (ms from its start) | median | min | max | rounds |\n"
                        + "|---|---:|---:|---:|---:|\n"
                        + "| the new replica's Replica.start returns (it waits to be added) | "
                        + Spread.of(List.of(j.startMillis())).cells("%.0f")
                        + " |\n"
                        + "| AddReplica returns: the copy fetched and installed, the configuration"
                        + " committed | "
                        + Spread.of(List.of(j.addMillis())).cells("%.0f")
                        + " |\n"
                        + "| caught up: it applied up to the leader's commit index | "
                        + Spread.of(List.of(j.caughtUpMillis())).cells("%.0f")
                        + " |\n\n"
                        + String.format(
                                Locale.ROOT,
                                "The group holds every record written above (the copy holds log"
                                        + " index %d); the new replica's folder holds %.1f MiB once"
                                        + " caught up. It is removed again afterwards.%n",
                                j.copyIndex(),
                                j.folderBytes() / 1048576.0));
    }

    private void print(PrintStream out, String loadBefore, String loadAfter) {
        Duration[] e = election();
        out.printf(
                "### Cluster: replicated ingest, search, forget, failover and catch-up%n%n"
                        + "Every replica runs in this one JVM on loopback: all replicas share"
                        + " the machine's %d cores (and its disk), and the clients run on them"
                        + " too.%n%n"
                        + "Machine: %d cores (shared), %s %s. Load average before %s, after %s"
                        + " (1, 5 and 15 minutes).%n%n"
                        + "```%n./nepenthe bench cluster%s%n```%n%n"
                        + "Parameters: %s. Vectors uniform random in [-1, 1) per coordinate,"
                        + " seed %d; cosine, index %s; election timeouts %d-%d ms.%n%n",
                Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                loadBefore,
                loadAfter,
                args.isEmpty() ? "" : " " + String.join(" ", args),
                o.entrySet().stream()
                        .map(x -> x.getKey() + "=" + x.getValue())
                        .collect(Collectors.joining(" ")),
                seed,
                o.get("index"),
                e[0].toMillis(),
                e[1].toMillis());
        if (!ingestRows.isEmpty()) {
            out.printf(
                    "#### Ingest throughput: records/s, n=%d, d=%d, batch %d, %d clients,"
                            + " through the leader%n%n",
                    n, dim, batch, clients);
            out.println("| setup | median | min | max | rounds |");
            out.println("|---|---:|---:|---:|---:|");
            ingestRows.forEach(out::println);
            out.println();
            out.println(
                    "Rounds interleaved: each round ingests into every setup in turn; all three"
                            + " groups run at once, idle but for the one measured.");
            out.println();
        }
        if (!searchRows.isEmpty()) {
            out.printf(
                    "#### Search throughput: queries/s, k=%s, %s queries after %s of warm-up,"
                            + " %d clients, over n=%d%n%n",
                    o.get("k"), o.get("queries"), o.get("warmup"), clients, n);
            out.println("| setup | reads | median | min | max | rounds |");
            out.println("|---|---|---:|---:|---:|---:|");
            searchRows.forEach(out::println);
            out.println();
        }
        sections.forEach(out::println);
    }

    /** The 1, 5 and 15 minute load averages (/proc/loadavg), or the JVM's 1 minute one. */
    static String loadAverage() {
        try {
            String[] f =
                    Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII)
                            .strip()
                            .split("\\s+", -1);
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return String.format(
                    "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }

    private static void progress(String what) {
        System.err.println("bench cluster: " + what + "...");
    }

    private static void delete(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
