package dev.nepenthe.bench.forget;

import dev.nepenthe.bench.Plots;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Search latency while forgets run: p50 and p99 of the searching thread, quiet against during
 * forgets (and beside a writer, when the run had one), a group of bars per index.
 */
final class ForgetLatencyPlot {
    private ForgetLatencyPlot() {}

    static void write(Path png, String subtitle, List<ForgetBench.Latency> latencies)
            throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (ForgetBench.Latency l : latencies) {
            data.addValue(l.baseP50(), "p50, quiet", l.index());
            data.addValue(l.duringP50(), "p50, during forgets", l.index());
            data.addValue(l.baseP99(), "p99, quiet", l.index());
            data.addValue(l.duringP99(), "p99, during forgets", l.index());
            if (Double.isFinite(l.writerP99())) {
                data.addValue(l.writerP99(), "p99, beside a writer", l.index());
            }
        }
        BarRenderer bars = new BarRenderer();
        bars.setBarPainter(new StandardBarPainter());
        bars.setShadowVisible(false);
        for (int i = 0; i < data.getRowCount(); i++) {
            bars.setSeriesPaint(i, Plots.colour(i));
        }
        CategoryPlot plot =
                new CategoryPlot(
                        data,
                        new CategoryAxis("index"),
                        new NumberAxis("search latency (ms)"),
                        bars);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        Plots.save(png, "Search latency while forgets run", subtitle, plot, 900, 520);
    }
}
