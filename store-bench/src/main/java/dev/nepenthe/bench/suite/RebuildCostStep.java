package dev.nepenthe.bench.suite;

import dev.nepenthe.bench.Plots;
import dev.nepenthe.bench.forget.RebuildCostBenchmark;
import java.awt.BasicStroke;
import java.io.IOException;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.openjdk.jmh.results.RunResult;

/**
 * The suite's rebuild-cost step: {@link RebuildCostBenchmark} under JMH with the profile's sizes,
 * then a table of median times (repair, rebuild, their ratio) and a log-log plot of both against
 * the records removed.
 */
final class RebuildCostStep implements BenchSuite.Step {

    /**
     * One JMH result: a parameter set and its median time, ms, over {@code samples} invocations.
     */
    record Point(
            String index,
            int n,
            int dim,
            int removed,
            String how,
            double medianMs,
            double minMs,
            double maxMs,
            long samples) {}

    @Override
    public String name() {
        return "rebuild-cost";
    }

    @Override
    public String title() {
        return "Forgetting against rebuilding: in-place repair of HNSW, IVF-PQ and the text index"
                + " (JMH)";
    }

    @Override
    public String what() {
        return "JMH (`RebuildCostBenchmark`, `TextRebuildCostBenchmark`): one record, 0.1%, 1% and"
                + " 10% of a collection removed in place (HNSW's repair, IVF-PQ's list and"
                + " codebook updates, the text index's rewrite of the segments that held them)"
                + " against a new index built from the survivors on one thread. Each result is"
                + " checked before it counts: the removed are gone and the index's own removal"
                + " or residue proof is clean; vector indexes keep recall@10 on the survivors"
                + " within 0.05 of a fresh build's, and the text index finds a survivor by its"
                + " own word.";
    }

    @Override
    public String run(BenchSuite.Context c) throws Exception {
        BenchSuite.Profile p = c.profile();
        // As a user would type them after ./nepenthe jmh: JMH reads them, and the section quotes
        // them.
        List<String> jmhArgs =
                new ArrayList<>(
                        List.of(
                                "RebuildCostBenchmark",
                                "-p",
                                "n=" + p.pick("20000", "100000", "600"),
                                "-p",
                                "dim=" + p.pick("128", "384", "16")));
        if (p.smoke()) {
            jmhArgs.addAll(List.of("-p", "removed=1,10%", "-f", "0", "-wi", "0", "-i", "2"));
        } else if (p.name().equals("quick")) {
            jmhArgs.addAll(List.of("-wi", "1", "-i", "3"));
        }
        Collection<RunResult> results = BenchSuite.jmh(jmhArgs);
        List<Point> points = points(results);
        Path png = c.plots().resolve("rebuild-cost.png");
        plot(png, points);
        return "The benchmark alone: `./nepenthe jmh "
                + String.join(" ", jmhArgs)
                + "`.\n\n"
                + table(points)
                + "\n![Forget by repair against rebuild]("
                + c.link(png)
                + ")\n";
    }

    static List<Point> points(Collection<RunResult> results) {
        List<Point> out = new ArrayList<>();
        for (RunResult r : results) {
            var params = r.getParams();
            int n = Integer.parseInt(params.getParam("n"));
            var stats = r.getPrimaryResult().getStatistics();
            String dim = params.getParam("dim"); // none for the text index
            out.add(
                    new Point(
                            params.getParam("index"),
                            n,
                            dim == null ? 0 : Integer.parseInt(dim),
                            RebuildCostBenchmark.count(params.getParam("removed"), n),
                            params.getParam("how"),
                            stats.getPercentile(50),
                            stats.getMin(),
                            stats.getMax(),
                            stats.getN()));
        }
        return out;
    }

    /**
     * One row per index, size and count removed: repair, rebuild, and repair as a share of rebuild.
     */
    static String table(List<Point> points) {
        Map<String, Point[]> rows = new TreeMap<>();
        for (Point pt : points) {
            String key =
                    String.format(
                            Locale.ROOT,
                            "%s|%09d|%05d|%09d",
                            pt.index(),
                            pt.n(),
                            pt.dim(),
                            pt.removed());
            rows.computeIfAbsent(key, k -> new Point[2])[pt.how().equals("repair") ? 0 : 1] = pt;
        }
        StringBuilder sb =
                new StringBuilder(
                        "| index | n | d | removed | repair, ms (median; min - max) | rebuild, ms"
                                + " (median; min - max) | repair / rebuild |\n"
                                + "|---|---:|---:|---:|---:|---:|---:|\n");
        for (Point[] pair : rows.values()) {
            Point any = pair[0] != null ? pair[0] : pair[1];
            String ratio =
                    pair[0] != null && pair[1] != null
                            ? String.format(
                                    Locale.ROOT, "%.4f", pair[0].medianMs() / pair[1].medianMs())
                            : "-";
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %,d | %s | %,d (%s) | %s | %s | %s |%n",
                            any.index(),
                            any.n(),
                            any.dim() == 0 ? "-" : Integer.toString(any.dim()),
                            any.removed(),
                            share(any.removed(), any.n()),
                            cell(pair[0]),
                            cell(pair[1]),
                            ratio));
        }
        long samples = points.stream().mapToLong(Point::samples).min().orElse(0);
        sb.append("\nEach cell is the median of ")
                .append(samples)
                .append(
                        " single-shot invocations (JMH `SingleShotTime`); each repair works on a"
                                + " whole index of its own, built or copied before the timer"
                                + " starts.\n");
        return sb.toString();
    }

    private static String share(int removed, int n) {
        double pct = 100.0 * removed / n;
        return removed == 1
                ? "one record"
                : new DecimalFormat("0.##", DecimalFormatSymbols.getInstance(Locale.ROOT))
                                .format(pct)
                        + "%";
    }

    private static String cell(Point p) {
        return p == null
                ? "-"
                : String.format(
                        Locale.ROOT, "%.2f; %.2f - %.2f", p.medianMs(), p.minMs(), p.maxMs());
    }

    /**
     * Median time against records removed, log-log, a line per index and strategy (largest size
     * only).
     */
    static void plot(Path png, List<Point> points) throws IOException {
        int n = points.stream().mapToInt(Point::n).max().orElse(0);
        int dim = points.stream().filter(pt -> pt.n() == n).mapToInt(Point::dim).max().orElse(0);
        Map<String, XYSeries> series = new LinkedHashMap<>();
        Map<String, String> names =
                Map.of("hnsw", "HNSW ", "ivfpq", "IVF-PQ ", "text", "text index ");
        for (String index : List.of("hnsw", "ivfpq", "text")) {
            for (String how : List.of("repair", "rebuild")) {
                series.put(
                        index + "/" + how,
                        new XYSeries(
                                names.get(index)
                                        + (how.equals("repair")
                                                ? "forget by repair"
                                                : "rebuild without them")));
            }
        }
        for (Point pt : points) {
            XYSeries s = series.get(pt.index() + "/" + pt.how());
            if (s != null
                    && pt.n() == n
                    && (pt.dim() == dim || pt.dim() == 0)
                    && pt.medianMs() > 0) {
                s.add(pt.removed(), pt.medianMs());
            }
        }
        XYSeriesCollection data = new XYSeriesCollection();
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        int i = 0;
        for (Map.Entry<String, XYSeries> e : series.entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            data.addSeries(e.getValue());
            // One colour per index; the repair's line solid, the rebuild's dashed.
            int colour =
                    List.of("hnsw", "ivfpq", "text")
                            .indexOf(e.getKey().substring(0, e.getKey().indexOf('/')));
            renderer.setSeriesPaint(i, Plots.colour(colour));
            renderer.setSeriesStroke(
                    i,
                    e.getKey().endsWith("/repair")
                            ? new BasicStroke(2f)
                            : new BasicStroke(
                                    2f,
                                    BasicStroke.CAP_BUTT,
                                    BasicStroke.JOIN_MITER,
                                    10f,
                                    new float[] {6f, 4f},
                                    0f));
            i++;
        }
        XYPlot plot =
                Plots.plain(
                        new XYPlot(
                                data,
                                Plots.decadesAxis("records removed"),
                                Plots.decadesAxis("ms (median)"),
                                renderer));
        Plots.save(
                png,
                "Forget by repair against a rebuild",
                String.format(
                        Locale.ROOT,
                        "n = %,d; vectors: d = %d, seeded clustered (L2); texts: seeded, 31 words;"
                                + " one thread",
                        n,
                        dim),
                plot,
                900,
                560);
    }
}
