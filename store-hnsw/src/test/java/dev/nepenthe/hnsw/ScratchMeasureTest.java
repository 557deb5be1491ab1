package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.testing.Datasets;
import org.junit.jupiter.api.Test;

class ScratchMeasureTest {
    @Test
    void measure() {
        float[][] all = Datasets.clustered(7, 20_200, 128, 100, 0.3);
        float[][] data = java.util.Arrays.copyOf(all, 20_000);
        float[][] queries = java.util.Arrays.copyOfRange(all, 20_000, 20_200);
        long t0 = System.nanoTime();
        HnswIndex idx = HnswFixtures.build(data, Metric.L2, HnswParams.of(16, 100));
        System.out.printf("build %.1f s%n", (System.nanoTime() - t0) / 1e9);
        var exact = HnswFixtures.exact(data, Metric.L2, null);
        for (int ef : new int[] {10, 20, 40, 64, 100}) {
            System.out.printf("ef %d recall %.4f%n", ef, HnswFixtures.recall(idx, exact, queries, 10, ef));
        }
        System.out.println(idx.verifyIntegrity());
    }
}
