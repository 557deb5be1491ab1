package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The compare bench's sweep as the usual ANN picture: single-thread QPS (log) against recall, a
 * line per engine through its efSearch points; up and to the right is better.
 */
final class RecallQpsPlot {
    private RecallQpsPlot() {}

    static void write(Path png, String subtitle, List<HnswCompareBench.Result> engines)
            throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        double lowest = 1;
        for (HnswCompareBench.Result r : engines) {
            XYSeries s =
                    new XYSeries(r.name, false, true); // in efSearch order, not sorted by recall
            for (HnswCompareBench.Point p : r.curve) {
                if (p.qps() > 0 && Double.isFinite(p.qps())) {
                    s.add(p.recall(), p.qps());
                    lowest = Math.min(lowest, p.recall());
                }
            }
            data.addSeries(s);
        }
        XYPlot plot =
                Plots.plain(
                        new XYPlot(
                                data,
                                Plots.recallAxis("recall@10", lowest, 50),
                                Plots.countsAxis("queries / s, one thread"),
                                Plots.lines(data.getSeriesCount())));
        Plots.save(png, "Recall against queries per second", subtitle, plot, 900, 600);
    }
}
