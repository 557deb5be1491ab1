package dev.nepenthe.bench.ivfpq;

import dev.nepenthe.bench.Plots;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.jfree.chart.plot.XYPlot;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The IVF-PQ sweep as the usual ANN picture: QPS per CPU second (log) against recall, a line per
 * engine and re-rank depth through its nprobe points, Nepenthe beside FAISS.
 */
final class IvfPqPlot {
    private IvfPqPlot() {}

    /**
     * @param ours per "nprobe/rerank": {wall QPS, recall, CPU QPS}
     * @param faiss FAISS's lines by "search nprobe/rerank", with cpu_qps and recall (empty without
     *     FAISS)
     */
    static void write(
            Path png,
            String subtitle,
            int[] nprobes,
            int rerank,
            Map<String, double[]> ours,
            Map<String, Map<String, String>> faiss)
            throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        double lowest = 1;
        for (int rr : new int[] {0, rerank}) {
            String depth = rr == 0 ? "" : ", re-rank " + rr;
            XYSeries n = new XYSeries("Nepenthe IVF-PQ" + depth, false, true);
            XYSeries f =
                    new XYSeries(
                            "FAISS IndexIVFPQ" + (rr == 0 ? "" : " + IndexRefine " + rr),
                            false,
                            true);
            for (int np : nprobes) {
                double[] o = ours.get(np + "/" + rr);
                if (o != null) {
                    n.add(o[1], o[2]);
                    lowest = Math.min(lowest, o[1]);
                }
                Map<String, String> line = faiss.get("search " + np + "/" + rr);
                if (line != null) {
                    double recall = Double.parseDouble(line.get("recall"));
                    f.add(recall, Double.parseDouble(line.get("cpu_qps")));
                    lowest = Math.min(lowest, recall);
                }
            }
            data.addSeries(n);
            if (!f.isEmpty()) {
                data.addSeries(f);
            }
        }
        XYPlot plot =
                Plots.plain(
                        new XYPlot(
                                data,
                                Plots.recallAxis("recall@10", lowest, 20),
                                Plots.countsAxis("queries per CPU second, one thread"),
                                Plots.lines(data.getSeriesCount())));
        Plots.save(png, "IVF-PQ: recall against queries per second", subtitle, plot, 900, 600);
    }
}
