package dev.nepenthe.server.bench.soak;

import dev.nepenthe.server.bench.soak.SoakBench.Incarnation;
import dev.nepenthe.server.bench.soak.SoakBench.Outcome;
import dev.nepenthe.server.bench.soak.SoakTally.Kind;
import java.util.List;
import java.util.Locale;

/**
 * The soak's report in Markdown: the verdict first, then the checks, the operations, memory and
 * latencies.
 */
final class SoakReport {

    private static final List<Kind> LATENCY_COLUMNS =
            List.of(
                    Kind.UPSERT,
                    Kind.SEARCH,
                    Kind.DELETE,
                    Kind.FORGET,
                    Kind.SEALED,
                    Kind.SNAPSHOT,
                    Kind.RESTART);

    private SoakReport() {}

    static String markdown(Outcome out) {
        SoakOptions o = out.options();
        StringBuilder b = new StringBuilder();
        b.append(
                String.format(
                        Locale.ROOT,
                        "### Soak: %s against a served store (%s, d=%d, cosine), two tenants,"
                                + " restarts every %s s, loopback%n%n",
                        duration(o.seconds()),
                        o.index(),
                        o.dim(),
                        SoakOptions.fmt(o.restartEverySeconds())));
        b.append("Command: `").append(o.command()).append("`.\n\n");
        b.append(
                String.format(
                        Locale.ROOT,
                        "Machine: %d cores (shared), %s %s; load average %.2f at the start, %.2f at"
                            + " the end; %.0f s in all. The server is `nepenthe serve` in its own"
                            + " JVM (-Xmx%s), restarted by the harness: %d clean stops (SIGTERM),"
                            + " %d SIGKILLs.%n%n",
                        Runtime.getRuntime().availableProcessors(),
                        System.getProperty("java.vm.name"),
                        System.getProperty("java.version"),
                        out.loadAtStart(),
                        out.loadAtEnd(),
                        out.seconds(),
                        o.serverHeap(),
                        out.cleanStops(),
                        out.kills()));
        if (!o.fault().equals("none")) {
            b.append("**A deliberate fault was injected (fault=")
                    .append(o.fault())
                    .append("): the checks below must fail.**\n\n");
        }
        if (out.aborted() != null) {
            b.append("**The run stopped early: ").append(out.aborted()).append("**\n\n");
        }
        b.append("| must be 0 | found |\n|---|---:|\n");
        b.append("| acknowledged writes lost (read back absent, older, or changed) | ")
                .append(out.lost())
                .append(" |\n");
        b.append(
                        "| records resurrected (read back where an acknowledged delete, or no"
                                + " write, left none) | ")
                .append(out.resurrected())
                .append(" |\n");
        b.append(
                        "| forgotten records served (get, search by their vectors, search filtered"
                            + " to the subject; summed over checks, plus hits in the workload's own"
                            + " searches) | ")
                .append(out.forgottenServed())
                .append(" |\n");
        b.append("| errors (any failure but UNAVAILABLE in a restart window) | ")
                .append(out.errors())
                .append(" |\n\n");
        b.append("Verdict: ")
                .append(out.passed() ? "**passed**" : "**failed**")
                .append(
                        String.format(
                                Locale.ROOT,
                                "; %d checks, %d forgets SEALED, %d snapshots.%n%n",
                                out.checks().size(),
                                out.sealed(),
                                out.snapshots()));

        b.append(
                "#### Checks against the model\n\n"
                    + "| when | records read back | lost | resurrected | forgotten records probed |"
                    + " forgotten served | errors | seconds |\n"
                    + "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (SoakChecker.Result r : out.checks()) {
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %d | %d | %d | %d | %d | %d | %.1f |%n",
                            r.when(),
                            r.recordsChecked(),
                            r.lost(),
                            r.resurrected(),
                            r.forgottenChecked(),
                            r.forgottenServed(),
                            r.errors(),
                            r.seconds()));
        }

        b.append(
                "\n"
                    + "#### Operations\n\n"
                    + "| operation | acknowledged | UNAVAILABLE in a restart window | errors | p50"
                    + " ms | p99 ms |\n"
                    + "|---|---:|---:|---:|---:|---:|\n");
        for (Kind k : Kind.values()) {
            long[] c = out.tally().counts(k);
            double[] p = out.tally().percentiles(k);
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %d | %d | %d | %s | %s |%n",
                            k.label,
                            c[0],
                            c[1],
                            c[2],
                            p == null ? "-" : ms(p[0]),
                            p == null ? "-" : ms(p[1])));
        }
        if (!out.tally().problems().isEmpty()) {
            b.append("\nErrors (the first ").append(out.tally().problems().size()).append("):\n\n");
            for (SoakTally.Problem p : out.tally().problems()) {
                b.append("- ")
                        .append(p.kind().label)
                        .append(": ")
                        .append(p.what().replace('\n', ' '))
                        .append('\n');
            }
        }

        b.append(
                "\n"
                    + "#### The server's memory\n\n"
                    + "Heap: used after a full collection, read through JMX (the harness attaches"
                    + " to the server's JVM; the server exposes no heap figure of its own). RSS:"
                    + " VmRSS from /proc/PID/status. Each restart is a new process, so each life"
                    + " has its own start and end.\n\n"
                    + "| life | started | up (s) | heap at start (MB) | heap at stop (MB) | RSS at"
                    + " start (MB) | RSS at stop (MB) |\n"
                    + "|---:|---|---:|---:|---:|---:|---:|\n");
        for (Incarnation i : out.incarnations()) {
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %d | %s | %.0f | %s | %s | %s | %s |%n",
                            i.number(),
                            i.started(),
                            i.upSeconds(),
                            mb(i.atStart().heapBytes()),
                            mb(i.atStop().heapBytes()),
                            mb(i.atStart().rssBytes()),
                            mb(i.atStop().rssBytes())));
        }
        out.incarnations().stream()
                .map(i -> i.atStart().heapProblem())
                .filter(p -> p != null)
                .findFirst()
                .ifPresent(p -> b.append("\nThe heap could not be read: ").append(p).append('\n'));

        b.append(
                String.format(
                        Locale.ROOT,
                        "%n#### Latency per %s: p50 / p99 in ms (count)%n%n| from s |",
                        o.bucketSeconds() == 60
                                ? "minute"
                                : SoakOptions.fmt(o.bucketSeconds()) + " s"));
        for (Kind k : LATENCY_COLUMNS) {
            b.append(' ').append(k.label).append(" |");
        }
        b.append(" load average |\n|---:|")
                .append("---:|".repeat(LATENCY_COLUMNS.size() + 1))
                .append('\n');
        for (int bucket : out.tally().buckets()) {
            b.append("| ").append(SoakOptions.fmt(bucket * o.bucketSeconds())).append(" |");
            for (Kind k : LATENCY_COLUMNS) {
                double[] p = out.tally().percentiles(k, bucket);
                b.append(' ')
                        .append(
                                p == null
                                        ? "-"
                                        : ms(p[0]) + " / " + ms(p[1]) + " (" + (long) p[2] + ")")
                        .append(" |");
            }
            double load = out.tally().load(bucket);
            b.append(Double.isNaN(load) ? " - |" : String.format(Locale.ROOT, " %.2f |", load))
                    .append('\n');
        }
        return b.toString();
    }

    private static String duration(double seconds) {
        return seconds % 60 == 0 ? (long) (seconds / 60) + " min" : SoakOptions.fmt(seconds) + " s";
    }

    private static String ms(double v) {
        return v >= 100
                ? String.format(Locale.ROOT, "%.0f", v)
                : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String mb(long bytes) {
        return bytes < 0 ? "n/a" : String.format(Locale.ROOT, "%.0f", bytes / 1048576.0);
    }
}
