package dev.nepenthe.bench.storage;

import dev.nepenthe.bench.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The open bench's growth figures as one log-log picture: time (load, clean open, forgets), memory
 * (heap and RSS after the open) and search QPS at the recall target, each against the number of
 * records, so a straight line's slope reads as the exponent of the growth.
 */
final class GrowthPlot {
    private GrowthPlot() {}

    static void write(Path png, String subtitle, List<OpenBench.Row> rows) throws IOException {
        LogAxis records = Plots.decadesAxis("records");
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(records);
        plot.setGap(12);
        plot.add(
                panel(
                        "seconds",
                        true,
                        rows,
                        new String[] {
                            "load",
                            "clean open, new JVM (a restart)",
                            "clean open, the loading JVM",
                            "forget 100 records (first, rotates)",
                            "forget 100 records (median of the next, each rotating)"
                        },
                        List.of(
                                OpenBench.Row::loadS,
                                r -> r.fresh().openS(),
                                OpenBench.Row::openS,
                                OpenBench.Row::forgetS,
                                OpenBench.Row::laterForgetS)),
                3);
        plot.add(
                panel(
                        "MB",
                        true,
                        rows,
                        new String[] {"heap after open, new JVM", "RSS after open, new JVM"},
                        List.of(r -> r.fresh().heapMb(), r -> r.fresh().rssMb())),
                2);
        plot.add(
                panel(
                        "queries / s",
                        false,
                        rows,
                        new String[] {"QPS at recall@10 >= 0.95, one thread"},
                        List.of(r -> r.searches().qpsAtTarget())),
                2);
        Plots.save(png, "How a store's costs grow with its size", subtitle, plot, 900, 1000);
    }

    private static XYPlot panel(
            String unit,
            boolean decades,
            List<OpenBench.Row> rows,
            String[] names,
            List<ToDoubleFunction<OpenBench.Row>> values) {
        XYSeriesCollection data = new XYSeriesCollection();
        for (int i = 0; i < names.length; i++) {
            XYSeries s = new XYSeries(names[i]);
            for (OpenBench.Row r : rows) {
                double y = values.get(i).applyAsDouble(r);
                if (y > 0
                        && Double.isFinite(
                                y)) { // a log axis has no place for zero or a missing figure
                    s.add(r.n(), y);
                }
            }
            data.addSeries(s);
        }
        XYLineAndShapeRenderer renderer = Plots.lines(names.length);
        LogAxis range = decades ? Plots.decadesAxis(unit) : Plots.countsAxis(unit);
        return Plots.plain(new XYPlot(data, null, range, renderer));
    }
}
