package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Checks a collection's searches against an exact brute-force ranking of the given records. */
final class ReplicaSearchOracle {

    private ReplicaSearchOracle() {}

    static void check(VectorCollection c, List<VectorRecord> records, Random r, long seed) {
        Map<String, VectorRecord> byId = new HashMap<>();
        records.forEach(x -> byId.put(x.id(), x));
        int k = 10;
        for (int q = 0; q < 20; q++) {
            float[] query = ReplicaCopyTest.vector(r);
            double[] expected =
                    records.stream()
                            .mapToDouble(x -> cosine(query, x.vector()))
                            .map(d -> -d)
                            .sorted()
                            .map(d -> -d)
                            .limit(k)
                            .toArray();
            List<SearchHit> hits = c.search(SearchRequest.of(query, k));
            assertEquals(expected.length, hits.size(), "seed " + seed + ": hits of query " + q);
            for (int i = 0; i < hits.size(); i++) {
                SearchHit h = hits.get(i);
                VectorRecord known = byId.get(h.id());
                assertNotNull(known, "seed " + seed + ": a hit outside the copy's records");
                assertEquals(
                        cosine(query, known.vector()),
                        h.score(),
                        1e-4,
                        "seed " + seed + ": score of " + h.id());
                assertEquals(
                        expected[i],
                        h.score(),
                        1e-4,
                        "seed "
                                + seed
                                + ": rank "
                                + i
                                + " of query "
                                + q
                                + " "
                                + Arrays.toString(expected));
            }
        }
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }
}
