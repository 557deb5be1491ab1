package dev.nepenthe.bench.ivfpq;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.nepenthe.core.testing.Datasets;
import org.junit.jupiter.api.Test;

/** The benchmark's generator must give exactly the test fixture's vectors (the HNSW benchmarks use those). */
class ClusteredVectorsTest {
    @Test
    void sameVectorsAsTheTestFixture() {
        float[][] ours = ClusteredVectors.generate(7, 300, 24, 10, 0.3);
        float[][] fixture = Datasets.clustered(7, 300, 24, 10, 0.3);
        for (int i = 0; i < ours.length; i++) {
            assertArrayEquals(fixture[i], ours[i], 0f, "vector " + i);
        }
    }
}
