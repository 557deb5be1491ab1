package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.testing.NaiveReference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded random upserts (new ids and replacements), deletes, subject deletes and reopens, checked
 * after every step against a plain map of what the store must hold: gets, sizes, the exact top-k of
 * a search, and the integrity checks.
 */
class RandomizedStoreTest {

    @Test
    void storeMatchesAPlainModelThroughWritesDeletesAndReopens(@TempDir Path tmp) throws Exception {
        run(77, tmp.resolve("fixed"));
        run(dev.nepenthe.testing.Seeds.draw("RandomizedStoreTest"), tmp.resolve("fresh"));
    }

    private static void run(long seed, Path tmp) throws Exception {
        Random rnd = new Random(seed);
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("keys"))
                        .withCheckpointBytes(1 << 16)
                        .withShardBuckets(8);
        Map<String, VectorRecord> model = new HashMap<>();
        Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts);
        VectorCollection c = store.createCollection(CollectionSpec.of("r", 6, Metric.L2));
        try {
            for (int step = 0; step < 300; step++) {
                int op = rnd.nextInt(20);
                if (op < 12) {
                    List<VectorRecord> batch = new ArrayList<>();
                    java.util.Set<String> ids = new java.util.HashSet<>();
                    for (int i = 0, n = 1 + rnd.nextInt(8); i < n; i++) {
                        String id = "id" + rnd.nextInt(120); // small id space: many replacements
                        if (!ids.add(id)) {
                            continue;
                        }
                        float[] v = new float[6];
                        for (int j = 0; j < 6; j++) {
                            v[j] = rnd.nextFloat() * 10;
                        }
                        batch.add(
                                VectorRecord.builder(id)
                                        .subject("s" + rnd.nextInt(5))
                                        .vector(v)
                                        .text("step " + step)
                                        .build());
                    }
                    c.upsertAll(batch);
                    batch.forEach(r -> model.put(r.id(), r));
                } else if (op < 16) {
                    String id = "id" + rnd.nextInt(120);
                    assertEquals(model.remove(id) != null, c.delete(id));
                } else if (op < 18) {
                    String s = "s" + rnd.nextInt(5);
                    long expected =
                            model.values().stream().filter(r -> r.subject().equals(s)).count();
                    assertEquals(expected, c.deleteSubject(VectorRecord.DEFAULT_TENANT, s));
                    model.values().removeIf(r -> r.subject().equals(s));
                } else {
                    store.close();
                    store = Nepenthe.open(tmp.resolve("data"), opts);
                    c = store.collection("r");
                }
                check(c, model, rnd, step);
            }
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + dev.nepenthe.testing.Seeds.replay(seed), e);
        } finally {
            store.close();
        }
    }

    private static void check(
            VectorCollection c, Map<String, VectorRecord> model, Random rnd, int step) {
        assertEquals(model.size(), c.size(), "step " + step);
        for (VectorRecord r : model.values()) {
            VectorRecord got =
                    c.get(r.id())
                            .orElseThrow(
                                    () -> new AssertionError("step " + step + ": missing record"));
            assertArrayEquals(r.vector(), got.vector());
            assertEquals(r.text(), got.text());
        }
        if (model.isEmpty()) {
            return;
        }
        float[] q = new float[6];
        for (int j = 0; j < 6; j++) {
            q[j] = rnd.nextFloat() * 10;
        }
        List<VectorRecord> all = new ArrayList<>(model.values());
        float[][] vectors = new float[all.size()][];
        for (int i = 0; i < all.size(); i++) {
            vectors[i] = all.get(i).vector();
        }
        var ref = NaiveReference.ranking(Metric.L2, q, vectors, i -> true);
        List<SearchHit> hits = c.search(SearchRequest.of(q, 5));
        assertEquals(Math.min(5, all.size()), hits.size());
        for (int i = 0; i < hits.size(); i++) {
            assertEquals(
                    ref.get(i).score(), hits.get(i).score(), 1e-3, "step " + step + " rank " + i);
        }
        if (step % 25 == 0) {
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), "step " + step + ": " + r);
            }
        }
    }
}
