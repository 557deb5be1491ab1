package dev.nepenthe.hnsw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.testing.Datasets;
import dev.nepenthe.testing.index.Recall;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/** Filtered search: results come only from the accept set and still number k when it is tiny. */
class HnswFilterTest {

    @Test
    void filteredSearchFindsKAcceptedResultsAtEverySelectivity() {
        int n = 10_000;
        float[][] all = Datasets.clustered(41, n + 50, 32, 40, 0.3);
        float[][] data = Arrays.copyOf(all, n);
        float[][] queries = Arrays.copyOfRange(all, n, n + 50);
        HnswIndex index = HnswFixtures.build(data, Metric.L2, HnswParams.of(12, 80));
        SplittableRandom rnd = new SplittableRandom(42);
        for (double keep : new double[] {0.5, 0.1, 0.02, 0.003}) {
            RoaringBitmap accept = new RoaringBitmap();
            for (int i = 0; i < n; i++) {
                if (rnd.nextDouble() < keep) {
                    accept.add(i);
                }
            }
            ExactIndex exact = HnswFixtures.exact(data, Metric.L2, accept);
            double sum = 0;
            for (float[] q : queries) {
                SearchResult got =
                        index.search(
                                q,
                                10,
                                Accept.of(accept.toArray()),
                                SearchParams.of("efSearch", 64));
                assertEquals(Math.min(10, accept.getCardinality()), got.size(), "keep " + keep);
                for (int o : got.ordinals()) {
                    assertTrue(accept.contains(o), "ordinal " + o + " is outside the accept set");
                }
                sum += Recall.of(exact.search(q, 10), got);
            }
            double recall = sum / queries.length;
            assertTrue(recall >= 0.9, "keep " + keep + ": filtered recall@10 " + recall);
        }
        // An empty accept set returns nothing; an accept set naming only removed ordinals too.
        assertEquals(0, index.search(queries[0], 10, Accept.of(), SearchParams.DEFAULTS).size());
        index.removeAll(new int[] {1, 2, 3});
        assertEquals(
                0, index.search(queries[0], 10, Accept.of(1, 2, 3), SearchParams.DEFAULTS).size());
    }
}
