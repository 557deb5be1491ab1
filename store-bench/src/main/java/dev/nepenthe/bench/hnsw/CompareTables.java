package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.hnsw.HnswCompareBench.Point;
import dev.nepenthe.bench.hnsw.HnswCompareBench.Result;
import dev.nepenthe.bench.hnsw.HnswCompareBench.Scaling;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Prints {@link HnswCompareBench}'s Markdown tables, one method per table, to stdout. */
final class CompareTables {
    private static final String OURS = "nepenthe";

    private CompareTables() {}

    static void build(List<Result> all) {
        System.out.println("| engine | build (s, 1 thread) | what the build covers |");
        System.out.println("|---|---:|---|");
        for (Result r : all) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s | %s |%n",
                    r.name,
                    Double.isNaN(r.buildSeconds)
                            ? "-"
                            : String.format(Locale.ROOT, "%.1f", r.buildSeconds),
                    r.buildNote);
        }
        System.out.println();
    }

    /**
     * Bytes per vector of each part an engine reports (Lucene: its files by extension). Parts under
     * {@value #SMALL_PART} bytes per vector (metadata, segment info) share one row that names them.
     */
    static void memory(List<Result> all, int n, int dim) {
        if (all.stream().allMatch(r -> r.footprint.isEmpty())) {
            return;
        }
        System.out.printf(
                Locale.ROOT, "Memory per vector (n=%d; raw float32 = %d bytes):%n%n", n, 4 * dim);
        System.out.println("| engine | part | bytes / vector | MB |");
        System.out.println("|---|---|---:|---:|");
        for (Result r : all) {
            long total = 0;
            long small = 0;
            List<String> smallNames = new ArrayList<>();
            for (AnnEngine.Part p : r.footprint) {
                total += p.bytes();
                if (p.bytes() < SMALL_PART * n) {
                    small += p.bytes();
                    smallNames.add(p.what().replaceFirst(" .*", ""));
                    continue;
                }
                row(r.name, p.what(), p.bytes(), n);
            }
            if (!smallNames.isEmpty()) {
                row(r.name, "other: " + String.join(" ", smallNames), small, n);
            }
            if (r.footprint.size() > 1) {
                row(r.name, "total", total, n);
            }
        }
        System.out.println();
    }

    private static final double SMALL_PART = 0.5;

    private static void row(String engine, String part, long bytes, int n) {
        System.out.printf(
                Locale.ROOT,
                "| %s | %s | %.1f | %.1f |%n",
                engine,
                part,
                bytes / (double) n,
                bytes / 1e6);
    }

    /** Recall and single-thread QPS per efSearch, two columns per engine. */
    static void sweep(List<Result> all, int[] efs) {
        StringBuilder head = new StringBuilder("| efSearch |");
        StringBuilder rule = new StringBuilder("|---:|");
        for (Result r : all) {
            head.append(' ').append(r.name).append(" recall | ").append(r.name).append(" QPS |");
            rule.append("---:|---:|");
        }
        System.out.println(head);
        System.out.println(rule);
        for (int ef : efs) {
            StringBuilder row = new StringBuilder("| " + ef + " |");
            for (Result r : all) {
                Point p = r.curve.stream().filter(x -> x.ef() == ef).findFirst().orElse(null);
                row.append(
                        p == null
                                ? " - | - |"
                                : String.format(
                                        Locale.ROOT, " %.4f | %.0f |", p.recall(), p.qps()));
            }
            System.out.println(row);
        }
        System.out.println();
    }

    /**
     * Single-thread QPS at the smallest swept ef reaching each recall target, and ours over each
     * peer's.
     */
    static void atRecall(List<Result> all, int k) {
        Result ours = all.stream().filter(r -> r.name.equals(OURS)).findFirst().orElse(null);
        StringBuilder head = new StringBuilder("| recall@" + k + " target |");
        int columns = all.size();
        for (Result r : all) {
            head.append(' ').append(r.name).append(" QPS (ef) |");
        }
        if (ours != null) {
            for (Result r : all) {
                if (r != ours) {
                    head.append(" nepenthe / ").append(r.name).append(" |");
                    columns++;
                }
            }
        }
        System.out.println(head);
        System.out.println("|---:|" + "---:|".repeat(columns));
        for (double target : new double[] {0.90, 0.95, 0.99}) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %.2f |", target));
            for (Result r : all) {
                Point p = r.first(target);
                row.append(
                        p == null
                                ? " not reached |"
                                : String.format(Locale.ROOT, " %.0f (%d) |", p.qps(), p.ef()));
            }
            if (ours != null) {
                Point o = ours.first(target);
                for (Result r : all) {
                    if (r != ours) {
                        Point p = r.first(target);
                        row.append(
                                o == null || p == null
                                        ? " - |"
                                        : String.format(
                                                Locale.ROOT, " %.2fx |", o.qps() / p.qps()));
                    }
                }
            }
            System.out.println(row);
        }
        System.out.println();
    }

    /**
     * QPS with T concurrent threads at each engine's ef for recall 0.95 and 0.99, and the ratio to
     * the first T.
     */
    static void scaling(List<Result> all, int[] threads) {
        StringBuilder head = new StringBuilder("| engine | recall target | ef |");
        StringBuilder rule = new StringBuilder("|---|---:|---:|");
        for (int t = 0; t < threads.length; t++) {
            head.append(' ')
                    .append(threads[t])
                    .append(threads[t] == 1 ? " thread" : " threads")
                    .append(" QPS |");
            rule.append("---:|");
            if (t > 0) {
                head.append(' ').append(threads[t]).append(" / ").append(threads[0]).append(" |");
                rule.append("---:|");
            }
        }
        System.out.println(head);
        System.out.println(rule);
        for (double target : HnswCompareBench.SCALING_TARGETS) {
            for (Result r : all) {
                Scaling s = r.scaling.get(target);
                StringBuilder row =
                        new StringBuilder(
                                String.format(Locale.ROOT, "| %s | %.2f |", r.name, target));
                if (s == null || s.ef() < 0) {
                    row.append(" not reached |").append(" - |".repeat(2 * threads.length - 1));
                    System.out.println(row);
                    continue;
                }
                row.append(' ').append(s.ef()).append(" |");
                for (int t = 0; t < threads.length; t++) {
                    double q = s.qps()[t];
                    row.append(
                            Double.isNaN(q)
                                    ? " not measured |"
                                    : String.format(Locale.ROOT, " %.0f |", q));
                    if (t > 0) {
                        double base = s.qps()[0];
                        row.append(
                                Double.isNaN(q) || Double.isNaN(base)
                                        ? " - |"
                                        : String.format(Locale.ROOT, " %.2fx |", q / base));
                    }
                }
                System.out.println(row);
            }
        }
        System.out.println();
    }
}
