package dev.nepenthe.server.bench.soak;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a soak run does, from {@code key=value} arguments (as the other harnesses take them) and
 * {@code --out FILE}. Every rate is a bound, not a target the run chases: a worker that falls
 * behind does not burst to catch up.
 *
 * @param seconds how long the workload runs (from {@code minutes=} or {@code seconds=})
 * @param seed seeds the workload's choices and the records' vectors
 * @param dim the collection's dimension
 * @param index the collection's index kind (exact, hnsw, ivfpq)
 * @param writesPerSecond upsert requests per second, all writers together (each of 1 to 4 records)
 * @param searchesPerSecond searches per second, all searchers together
 * @param deletesPerSecond delete requests per second
 * @param forgetEverySeconds a subject forgotten this often (each awaited to SEALED before the next)
 * @param snapshotEverySeconds a snapshot this often, into the server's snapshot folder
 * @param restartEverySeconds the server restarted this often
 * @param killShare the share of restarts that are SIGKILL rather than a clean stop (the first two
 *     restarts are one of each whatever the share, so a short run has both)
 * @param serverHeap the server JVM's -Xmx
 * @param bucketSeconds the width of one row of the latency table (a minute by default)
 * @param fault none; or a deliberate fault, so that the checks are seen to fail: {@code rollback}
 *     (a restart onto a snapshot older than acknowledged writes), {@code replay} (a forgotten
 *     subject re-admitted and its records written back, as a stale queue would), or {@code both}
 * @param dir where the run's store, keys, snapshots and server log go (kept when it fails)
 * @param out a file the Markdown report is also written to, or null
 */
record SoakOptions(
        double seconds,
        long seed,
        int dim,
        String index,
        double writesPerSecond,
        double searchesPerSecond,
        double deletesPerSecond,
        double forgetEverySeconds,
        double snapshotEverySeconds,
        double restartEverySeconds,
        double killShare,
        String serverHeap,
        double bucketSeconds,
        String fault,
        Path dir,
        Path out) {

    static final String USAGE =
            "bench soak [minutes=10 | seconds=S] [seed=47] [dim=64] [index=hnsw] [writes=10]"
                    + " [searches=20] [deletes=2] [forget-every=4] [snapshot-every=30]"
                    + " [restart-every=60] [kill-share=0.5] [server-heap=1g] [bucket=60]"
                    + " [fault=none|rollback|replay|both] [dir=TMPDIR] [--out FILE]";

    private static final List<String> FAULTS = List.of("none", "rollback", "replay", "both");

    boolean rollback() {
        return fault.equals("rollback") || fault.equals("both");
    }

    boolean replay() {
        return fault.equals("replay") || fault.equals("both");
    }

    /**
     * Parses the arguments.
     *
     * @throws IllegalArgumentException naming the argument, what was expected and what arrived
     */
    static SoakOptions parse(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        for (String k :
                List.of(
                        "minutes",
                        "seconds",
                        "seed",
                        "dim",
                        "index",
                        "writes",
                        "searches",
                        "deletes",
                        "forget-every",
                        "snapshot-every",
                        "restart-every",
                        "kill-share",
                        "server-heap",
                        "bucket",
                        "fault",
                        "dir",
                        "out")) {
            o.put(k, null);
        }
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--out")) {
                if (i + 1 == args.length) {
                    throw new IllegalArgumentException(
                            "--out: expected a file after it, got nothing");
                }
                o.put("out", args[++i]);
                continue;
            }
            if (a.startsWith("--out=")) {
                o.put("out", a.substring("--out=".length()));
                continue;
            }
            int eq = a.indexOf('=');
            if (eq <= 0 || !o.containsKey(a.substring(0, eq))) {
                throw new IllegalArgumentException(
                        "expected key=value with a key among "
                                + o.keySet()
                                + " (or --out FILE), got '"
                                + a
                                + "'; usage: "
                                + USAGE);
            }
            o.put(a.substring(0, eq), a.substring(eq + 1));
        }
        if (o.get("minutes") != null && o.get("seconds") != null) {
            throw new IllegalArgumentException(
                    "minutes and seconds: expected one of them, got both");
        }
        double seconds =
                o.get("seconds") != null
                        ? positive("seconds", o.get("seconds"))
                        : 60 * positive("minutes", or(o, "minutes", "10"));
        String fault = or(o, "fault", "none");
        if (!FAULTS.contains(fault)) {
            throw new IllegalArgumentException(
                    "fault: expected one of " + FAULTS + ", got '" + fault + "'");
        }
        String index = or(o, "index", "hnsw");
        if (!List.of("exact", "hnsw", "ivfpq").contains(index)) {
            throw new IllegalArgumentException(
                    "index: expected exact, hnsw or ivfpq, got '" + index + "'");
        }
        double killShare = number("kill-share", or(o, "kill-share", "0.5"));
        if (killShare < 0 || killShare > 1) {
            throw new IllegalArgumentException(
                    "kill-share: expected a share from 0 to 1, got " + killShare);
        }
        String heap = or(o, "server-heap", "1g");
        if (!heap.matches("[0-9]+[kKmMgG]?")) {
            throw new IllegalArgumentException(
                    "server-heap: expected a size as -Xmx takes it (512m, 1g), got '" + heap + "'");
        }
        int dim = (int) positive("dim", or(o, "dim", "64"));
        return new SoakOptions(
                seconds,
                (long) number("seed", or(o, "seed", "47")),
                dim,
                index,
                positive("writes", or(o, "writes", "10")),
                positive("searches", or(o, "searches", "20")),
                positive("deletes", or(o, "deletes", "2")),
                positive("forget-every", or(o, "forget-every", "4")),
                positive("snapshot-every", or(o, "snapshot-every", "30")),
                positive("restart-every", or(o, "restart-every", "60")),
                killShare,
                heap,
                positive("bucket", or(o, "bucket", "60")),
                fault,
                o.get("dir") == null ? null : Path.of(o.get("dir")),
                o.get("out") == null ? null : Path.of(o.get("out")));
    }

    /** The arguments that rerun this configuration, as the report's command line shows them. */
    String command() {
        StringBuilder b = new StringBuilder("./nepenthe bench soak ");
        b.append(
                seconds % 60 == 0 ? "minutes=" + (long) (seconds / 60) : "seconds=" + fmt(seconds));
        b.append(" seed=")
                .append(seed)
                .append(" dim=")
                .append(dim)
                .append(" index=")
                .append(index)
                .append(" writes=")
                .append(fmt(writesPerSecond))
                .append(" searches=")
                .append(fmt(searchesPerSecond))
                .append(" deletes=")
                .append(fmt(deletesPerSecond))
                .append(" forget-every=")
                .append(fmt(forgetEverySeconds))
                .append(" snapshot-every=")
                .append(fmt(snapshotEverySeconds))
                .append(" restart-every=")
                .append(fmt(restartEverySeconds))
                .append(" kill-share=")
                .append(fmt(killShare));
        if (!fault.equals("none")) {
            b.append(" fault=").append(fault);
        }
        return b.toString();
    }

    static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    private static String or(Map<String, String> o, String key, String otherwise) {
        return o.get(key) == null ? otherwise : o.get(key);
    }

    private static double number(String key, String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": expected a number, got '" + value + "'");
        }
    }

    private static double positive(String key, String value) {
        double d = number(key, value);
        if (!(d > 0) || Double.isInfinite(d)) {
            throw new IllegalArgumentException(
                    key + ": expected a number above 0, got '" + value + "'");
        }
        return d;
    }
}
