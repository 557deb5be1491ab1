package dev.nepenthe.cluster.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Rounds of one measure reduced to what the tables print: the median with the smallest and largest
 * beside it, so a reader sees how far a shared machine moved the figure.
 *
 * @param median the middle value (the mean of the two middle ones for an even count)
 * @param min the smallest
 * @param max the largest
 * @param rounds how many values
 */
record Spread(double median, double min, double max, int rounds) {

    static Spread of(List<Double> values) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("a spread of no rounds: expected at least one");
        }
        List<Double> v = new ArrayList<>(values);
        Collections.sort(v);
        int n = v.size();
        double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
        return new Spread(median, v.get(0), v.get(n - 1), n);
    }

    /** The table cells: median, min, max and rounds, each number with {@code format}. */
    String cells(String format) {
        return String.format(format, median)
                + " | "
                + String.format(format, min)
                + " | "
                + String.format(format, max)
                + " | "
                + rounds;
    }
}
