package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Vectors of finite but huge components (3e38) are refused, stored or queried, in every metric,
 * with a message naming the bound and the squared norm that arrived; vectors just within the bound
 * are kept, and every score between them (the oracle: Float.isFinite on each hit, with the largest
 * pair in the collection) stays finite. Before the bound, a dot-product collection took {3e38, 0,
 * 0, 0} and then scored infinity.
 */
class HugeVectorTest {

    @TempDir Path tmp;

    /**
     * The largest component a 4-dimensional vector may repeat: its squared norm is then just under
     * the bound.
     */
    private static final float EDGE = (float) Math.sqrt(Float.MAX_VALUE / 8.0 / 4.0) * 0.999f;

    @Test
    void hugeVectorsAreRefusedAndVectorsAtTheBoundScoreFinitely() throws Exception {
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            for (Metric metric : Metric.values()) {
                VectorCollection c =
                        store.createCollection(
                                CollectionSpec.of("c-" + metric.name().toLowerCase(), 4, metric));
                IllegalArgumentException stored =
                        assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        c.upsert(
                                                VectorRecord.builder("huge")
                                                        .vector(new float[] {3e38f, 0, 0, 0})
                                                        .build()));
                assertTrue(
                        stored.getMessage()
                                .contains(
                                        "record 0 of the batch: expected a vector whose squared"
                                                + " norm is at most 4.254e+37"),
                        stored.getMessage());
                assertTrue(stored.getMessage().contains("got 9.000e+76"), stored.getMessage());
                assertEquals(0, c.size(), metric + ": nothing stored");

                // Opposite corners at the bound: the largest distance and dot products it allows.
                c.upsertAll(
                        List.of(
                                VectorRecord.builder("plus")
                                        .vector(new float[] {EDGE, EDGE, EDGE, EDGE})
                                        .build(),
                                VectorRecord.builder("minus")
                                        .vector(new float[] {-EDGE, -EDGE, -EDGE, -EDGE})
                                        .build(),
                                VectorRecord.builder("small")
                                        .vector(new float[] {1, 0, 0, 0})
                                        .build()));
                for (float[] q :
                        List.of(
                                new float[] {EDGE, EDGE, EDGE, EDGE},
                                new float[] {-EDGE, -EDGE, -EDGE, -EDGE},
                                new float[] {1, 0, 0, 0})) {
                    List<SearchHit> hits = c.search(SearchRequest.of(q, 3));
                    assertEquals(3, hits.size(), metric + ": every record found");
                    for (SearchHit h : hits) {
                        assertTrue(
                                Float.isFinite(h.score()),
                                metric + ": score " + h.score() + " of " + h.record().id());
                    }
                }
                IllegalArgumentException query =
                        assertThrows(
                                IllegalArgumentException.class,
                                () -> c.search(SearchRequest.of(new float[] {0, 3e38f, 0, 0}, 3)));
                assertTrue(
                        query.getMessage()
                                .startsWith(
                                        "query: expected a vector whose squared norm is at most"),
                        query.getMessage());
            }
        }
    }
}
