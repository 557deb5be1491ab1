package dev.nepenthe.bench;

import java.util.Arrays;
import java.util.List;

/** Percentiles as the harnesses report them: nearest rank, NaN-free, NaN when there is nothing. */
public final class Stats {

    private Stats() {}

    /** The p-th percentile (nearest rank) of the values; NaNs are ignored. */
    public static double pct(double[] values, double p) {
        double[] s = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (s.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(p / 100.0 * s.length) - 1;
        return s[Math.max(0, Math.min(s.length - 1, i))];
    }

    public static double pct(List<Double> values, double p) {
        return pct(values.stream().mapToDouble(Double::doubleValue).toArray(), p);
    }

    public static double median(List<Double> values) {
        return pct(values, 50);
    }

    public static double min(List<Double> values) {
        return values.stream()
                .mapToDouble(Double::doubleValue)
                .filter(x -> !Double.isNaN(x))
                .min()
                .orElse(Double.NaN);
    }

    public static double max(List<Double> values) {
        return values.stream()
                .mapToDouble(Double::doubleValue)
                .filter(x -> !Double.isNaN(x))
                .max()
                .orElse(Double.NaN);
    }
}
