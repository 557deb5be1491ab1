package dev.nepenthe.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.util.Locale;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.Plot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;

/**
 * What the benchmarks' PNG plots share: log axes with plain numbers, dark colours on white, the
 * file.
 */
public final class Plots {
    /** Dark, distinct colours (the library's defaults include a yellow that vanishes on white). */
    private static final Color[] PALETTE = {
        new Color(0x1f77b4),
        new Color(0xd62728),
        new Color(0x2ca02c),
        new Color(0x9467bd),
        new Color(0xff7f0e),
        new Color(0x8c564b),
        new Color(0x17becf),
        new Color(0x7f7f7f)
    };

    /** Colour {@code i} of the palette, starting over after its last. */
    public static Color colour(int i) {
        return PALETTE[i % PALETTE.length];
    }

    private Plots() {}

    /**
     * A base-10 log axis with a tick at each power of ten, labelled with plain numbers (1,000,000;
     * 0.1) rather than powers of ten: for values that span decades.
     */
    public static LogAxis decadesAxis(String label) {
        LogAxis axis = logAxis(label);
        axis.setTickUnit(new NumberTickUnit(1));
        return axis;
    }

    /**
     * A base-10 log axis whose ticks are whole numbers at the axis's own steps: for values less
     * than a decade or two apart (queries per second), where a tick per decade would leave one.
     */
    public static LogAxis countsAxis(String label) {
        LogAxis axis = logAxis(label);
        axis.setNumberFormatOverride(
                new DecimalFormat("#,##0", DecimalFormatSymbols.getInstance(Locale.ROOT)));
        return axis;
    }

    /**
     * A base-10 log axis labelled with plain numbers (1,000,000; 0.1) rather than powers of ten.
     */
    public static LogAxis logAxis(String label) {
        LogAxis axis = new LogAxis(label);
        axis.setBase(10);
        axis.setSmallestValue(1e-3);
        axis.setNumberFormatOverride(
                new DecimalFormat("#,##0.###", DecimalFormatSymbols.getInstance(Locale.ROOT)));
        axis.setMinorTickMarksVisible(true);
        return axis;
    }

    /**
     * Lines with markers for {@code series} series, each 2 px wide in the palette's colour at its
     * index.
     */
    public static XYLineAndShapeRenderer lines(int series) {
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < series; i++) {
            renderer.setSeriesStroke(i, new BasicStroke(2f));
            renderer.setSeriesPaint(i, colour(i));
        }
        return renderer;
    }

    /**
     * A linear recall axis from a little below {@code lowest} (rounded down to a step of {@code 1 /
     * steps}) to 1.
     */
    public static NumberAxis recallAxis(String label, double lowest, int steps) {
        NumberAxis axis = new NumberAxis(label);
        axis.setRange(Math.max(0, Math.floor(lowest * steps) / steps - 0.01), 1.0);
        return axis;
    }

    /** White background and light grey grid lines. */
    public static XYPlot plain(XYPlot p) {
        p.setBackgroundPaint(Color.WHITE);
        p.setDomainGridlinePaint(Color.LIGHT_GRAY);
        p.setRangeGridlinePaint(Color.LIGHT_GRAY);
        return p;
    }

    /**
     * Writes {@code plot} with a title, a subtitle and a legend to {@code png} (its folder made if
     * missing).
     */
    public static void save(
            Path png, String title, String subtitle, Plot plot, int width, int height)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        JFreeChart chart = new JFreeChart(title, new Font("SansSerif", Font.BOLD, 16), plot, true);
        chart.addSubtitle(new TextTitle(subtitle, new Font("SansSerif", Font.PLAIN, 11)));
        chart.setBackgroundPaint(Color.WHITE);
        Path dir = png.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        ChartUtils.saveChartAsPNG(png.toFile(), chart, width, height);
    }
}
