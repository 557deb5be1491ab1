package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The delete bench's recall on the survivors against the share removed (log), at one efSearch: ours
 * repaired, ours rebuilt from the survivors (mean over seeds), Lucene with its deletes filtered,
 * hnswlib with its nodes marked deleted.
 */
final class DeleteRecallPlot {
    private static final String[] NAMES = {
        "Nepenthe, repaired in place",
        "Nepenthe, rebuilt from the survivors (mean)",
        "Lucene, deleted documents filtered",
        "hnswlib, markDelete"
    };

    private DeleteRecallPlot() {}

    /**
     * @param stages per stage: percent removed, then recall for each of {@link #NAMES} (NaN: not
     *     run)
     */
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
        XYPlot plot =
                Plots.plain(
                        new XYPlot(
                                data,
                                Plots.decadesAxis("% of the collection removed"),
                                Plots.recallAxis("recall@10 on the survivors", lowest, 50),
                                Plots.lines(data.getSeriesCount())));
        Plots.save(png, "Recall after deletes", subtitle, plot, 900, 560);
    }
}
