package dev.nepenthe.core.testing;

import dev.nepenthe.core.Metric;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Scores in double precision straight from the definition: the oracle for the oracle. */
public final class NaiveReference {
    private NaiveReference() {}

    public record Scored(int ordinal, double score) {}

    public static double score(Metric metric, float[] q, float[] v) {
        double dot = 0, qq = 0, vv = 0, l2 = 0;
        for (int i = 0; i < q.length; i++) {
            dot += (double) q[i] * v[i];
            qq += (double) q[i] * q[i];
            vv += (double) v[i] * v[i];
            double d = (double) q[i] - v[i];
            l2 += d * d;
        }
        return switch (metric) {
            case DOT -> dot;
            case L2 -> -l2;
            case COSINE -> (qq == 0 || vv == 0) ? 0 : dot / Math.sqrt(qq * vv);
        };
    }

    /** All vectors (index = ordinal) that pass {@code accept}, best first, ties by ordinal. */
    public static List<Scored> ranking(
            Metric metric, float[] q, float[][] data, java.util.function.IntPredicate accept) {
        List<Scored> all = new ArrayList<>();
        for (int i = 0; i < data.length; i++) {
            if (data[i] != null && accept.test(i)) {
                all.add(new Scored(i, score(metric, q, data[i])));
            }
        }
        all.sort(
                Comparator.comparingDouble(Scored::score)
                        .reversed()
                        .thenComparingInt(Scored::ordinal));
        return all;
    }
}
