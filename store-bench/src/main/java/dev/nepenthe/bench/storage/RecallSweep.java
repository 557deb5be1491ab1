package dev.nepenthe.bench.storage;

import static dev.nepenthe.bench.storage.OpenBench.RECALL_TARGET;
import static dev.nepenthe.bench.storage.OpenBench.seconds;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.internal.index.TopK;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * The open benchmark's check that a reopened index still answers well: QPS and recall@10 against
 * exact neighbours over a few efSearch, computed from the same seeded draw the store was loaded
 * with rather than from a copy held through the run (the heap figures are the store's).
 */
final class RecallSweep {

    private RecallSweep() {}

    /**
     * Single-threaded QPS (median of three passes) and recall@10 against exact neighbours, per
     * efSearch.
     */
    static OpenBench.Searches sweep(
            VectorCollection c, int n, float[][] queries, int[] efs, IntFunction<float[][]> draw) {
        VectorKernels k = Kernels.get();
        float[][] unit = Arrays.copyOf(draw.apply(n + queries.length), n);
        IntStream.range(0, unit.length)
                .parallel()
                .forEach(i -> unit[i] = Metric.COSINE.prepare(unit[i]));
        List<Set<String>> truth =
                IntStream.range(0, queries.length)
                        .parallel()
                        .mapToObj(
                                q -> {
                                    float[] qq = Metric.COSINE.prepare(queries[q]);
                                    TopK top = new TopK(10);
                                    for (int i = 0; i < unit.length; i++) {
                                        top.offer(i, k.dot(qq, 0, unit[i], 0, qq.length));
                                    }
                                    Set<String> ids = new HashSet<>();
                                    for (int o : top.drain(0).ordinals()) {
                                        ids.add("r" + o);
                                    }
                                    return ids;
                                })
                        .toList();
        StringBuilder out = new StringBuilder();
        int efAtTarget = -1;
        double qpsAtTarget = Double.NaN;
        for (int ef : efs) {
            double[] qps = new double[3];
            long hits = 0;
            for (int pass = -1; pass < 3; pass++) {
                long t0 = System.nanoTime();
                long h = 0;
                for (int q = 0; q < queries.length; q++) {
                    for (SearchHit hit :
                            c.search(
                                    SearchRequest.of(queries[q], 10)
                                            .param("efSearch", ef)
                                            .param("nprobe", Math.max(1, ef / 4)))) {
                        if (truth.get(q).contains(hit.record().id())) {
                            h++;
                        }
                    }
                }
                if (pass >= 0) {
                    qps[pass] = queries.length / seconds(t0);
                    hits = h;
                }
            }
            Arrays.sort(qps);
            double recall = hits / (10.0 * queries.length);
            out.append(
                    String.format(
                            Locale.ROOT,
                            "%s%d: %.0f / %.3f",
                            out.isEmpty() ? "" : "; ",
                            ef,
                            qps[1],
                            recall));
            if (efAtTarget < 0 && recall >= RECALL_TARGET) {
                efAtTarget = ef;
                qpsAtTarget = qps[1];
            }
        }
        return new OpenBench.Searches(out.toString(), efAtTarget, qpsAtTarget);
    }
}
