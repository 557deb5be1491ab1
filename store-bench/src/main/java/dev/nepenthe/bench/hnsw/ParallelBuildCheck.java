package dev.nepenthe.bench.hnsw;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What building the HNSW graph on several threads costs its quality: recall beside the one-thread
 * build's at each swept ef, and how many sampled vectors a search for their own vector misses.
 */
final class ParallelBuildCheck {

    private ParallelBuildCheck() {}

    /**
     * About how many vectors, evenly spaced, the parallel build's check searches for themselves.
     */
    private static final int SELF_SAMPLE = 10_000;

    /**
     * What racing inserts cost the graph: recall@k of the graph built on several threads beside the
     * one-thread build's at each swept ef, and how many vectors a search for their own vector (at
     * the largest swept ef) leaves outside their top k in each. A node an insert left on an island,
     * linked to from somewhere but not from near it, is reachable and still not found;
     * near-duplicates that outscore a vector's own copy count here too, in both graphs.
     */
    static List<String> parallelBuildQuality(
            AnnEngine built,
            HnswCompareBench.Result oneThread,
            int oneThreadLost,
            BenchData d,
            int[][] truth,
            int k,
            int[] efs)
            throws Exception {
        List<String> out = new ArrayList<>();
        out.add(
                String.format(
                        Locale.ROOT,
                        "%nThe graph built on several threads, searched like the one-thread"
                            + " build:%n%n| efSearch | recall@%d, one thread | recall@%d, several"
                            + " threads |%n|---:|---:|---:|",
                        k,
                        k));
        for (int ef : efs) {
            double parallel = BenchData.recall(truth, Throughput.answers(built, d.queries, k, ef));
            HnswCompareBench.Point one =
                    oneThread == null
                            ? null
                            : oneThread.curve.stream()
                                    .filter(p -> p.ef() == ef)
                                    .findFirst()
                                    .orElse(null);
            out.add(
                    String.format(
                            Locale.ROOT,
                            "| %d | %s | %.4f |",
                            ef,
                            one == null ? "-" : String.format(Locale.ROOT, "%.4f", one.recall()),
                            parallel));
        }
        int step = Math.max(1, d.data.length / SELF_SAMPLE);
        out.add(
                String.format(
                        Locale.ROOT,
                        "%nVectors outside their own top %d (efSearch %d), of the %d searched (one"
                                + " in %d): one thread %s, several threads %d.",
                        k,
                        Arrays.stream(efs).max().orElse(k),
                        (d.data.length + step - 1) / step,
                        step,
                        oneThreadLost < 0 ? "-" : Integer.toString(oneThreadLost),
                        selfMisses(built, d, k, efs)));
        return out;
    }

    /**
     * How many of the sampled vectors (one in n / {@link #SELF_SAMPLE}) a search for their own
     * vector, at the largest swept ef, leaves outside its top k.
     */
    static int selfMisses(AnnEngine built, BenchData d, int k, int[] efs) throws Exception {
        int ef = Arrays.stream(efs).max().orElse(k);
        int step = Math.max(1, d.data.length / SELF_SAMPLE);
        int lost = 0;
        for (int i = 0; i < d.data.length; i += step) {
            int self = i;
            if (Arrays.stream(built.search(d.data[i], k, ef)).noneMatch(o -> o == self)) {
                lost++;
            }
        }
        return lost;
    }
}
