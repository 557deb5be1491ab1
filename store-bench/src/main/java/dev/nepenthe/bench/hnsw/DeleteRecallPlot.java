package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.Plots;
import java.awt.BasicStroke;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The delete bench's recall on the survivors against the share removed (log), at one efSearch:
 * ours repaired, ours rebuilt from the survivors (mean over seeds), Lucene with its deletes
 * filtered, hnswlib with its nodes marked deleted.
 */
final class DeleteRecallPlot {
    private static final String[] NAMES = {"Nepenthe, repaired in place", "Nepenthe, rebuilt from the survivors (mean)",
        "Lucene, deleted documents filtered", "hnswlib, markDelete"};

    private DeleteRecallPlot() {}

    /** @param stages per stage: percent removed, then recall for each of {@link #NAMES} (NaN: not run) */
    static void write(Path png, String subtitle, List<double[]> stages) throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        double lowest = 1;
        for (int i = 0; i < NAMES.length; i++) {
            XYSeries s = new XYSeries(NAMES[i]);
            for (double[] st : stages) {
                if (Double.isFinite(st[i + 1]) && st[0] > 0) {
                    s.add(st[0], st[i + 1]);
                    lowest = Math.min(lowest, st[i + 1]);
                }
            }
            if (!s.isEmpty()) {
                data.addSeries(s);
            }
        }
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
            renderer.setSeriesPaint(i, Plots.PALETTE[i % Plots.PALETTE.length]);
        }
        NumberAxis recall = new NumberAxis("recall@10 on the survivors");
        recall.setRange(Math.max(0, Math.floor(lowest * 50) / 50 - 0.01), 1.0);
        XYPlot plot = Plots.plain(new XYPlot(data, Plots.decadesAxis("% of the collection removed"), recall, renderer));
        Plots.save(png, "Recall after deletes", subtitle, plot, 900, 560);
    }
}
