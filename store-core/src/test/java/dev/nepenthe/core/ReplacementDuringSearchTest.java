package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.testing.Seeds;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replacement is atomic for searches: a search that runs while records are replaced returns each
 * of them in exactly one version, never neither and never both. Writers replace a few target
 * records over and over (each version a little off its query, so it stays the nearest record to it
 * by far) among background churn (replacements, inserts and deletes of far records); searchers look
 * for the targets, plainly, by subject or by a metadata filter. The history is checked against that
 * rule and against the versions' order: the version a search returns was not yet overwritten when
 * the search started (no version older than the last one completed before it) and had been written
 * when it ended (no version invented).
 */
class ReplacementDuringSearchTest {

    @TempDir Path tmp;

    private static final int DIM = 16;
    private static final int TARGETS = 4;
    private static final int BACKGROUND = 300;
    private static final int WRITES_PER_WRITER = 300;

    /**
     * The query of target t: a basis direction, far from every background vector (see {@link
     * #background}).
     */
    private static float[] query(int t) {
        float[] q = new float[DIM];
        q[t] = 1;
        return q;
    }

    /** A version of target t: its query and a little noise, cosine above 0.99 with it. */
    private static float[] near(int t, Random rnd) {
        float[] v = query(t);
        for (int i = 0; i < DIM; i++) {
            v[i] += (float) (rnd.nextGaussian() * 0.02);
        }
        return v;
    }

    /**
     * A background vector: in the dimensions no target uses, so its cosine with every query is 0.
     */
    private static float[] background(Random rnd) {
        float[] v = new float[DIM];
        for (int i = TARGETS; i < DIM; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return v;
    }

    private static VectorRecord target(int t, long version, Random rnd) {
        return VectorRecord.builder("target-" + t)
                .subject("s" + t)
                .vector(near(t, rnd))
                .metadata("kind", "target")
                .metadata("version", version)
                .build();
    }

    private static VectorRecord bg(int i, Random rnd) {
        return VectorRecord.builder("bg-" + i)
                .subject("s" + (i % TARGETS))
                .vector(background(rnd))
                .metadata("kind", "background")
                .build();
    }

    @Test
    void eachSearchReturnsExactlyOneVersionOfARecordBeingReplaced() throws Exception {
        long seed = Seeds.draw("eachSearchReturnsExactlyOneVersionOfARecordBeingReplaced");
        Random setup = new Random(seed);
        // Per target: the newest version whose upsert has returned, and the newest one started.
        AtomicLongArray completed = new AtomicLongArray(TARGETS);
        AtomicLongArray started = new AtomicLongArray(TARGETS);
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicInteger searches = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults()
                                .withKeystore(tmp.resolve("keys"))
                                .withDurability(Durability.ASYNC))) {
            VectorCollection c = store.createCollection(CollectionSpec.of("c", DIM, Metric.COSINE));
            List<VectorRecord> initial = new ArrayList<>();
            for (int t = 0; t < TARGETS; t++) {
                initial.add(target(t, 0, setup));
            }
            for (int i = 0; i < BACKGROUND; i++) {
                initial.add(bg(i, setup));
            }
            c.upsertAll(initial);

            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                Random rnd = new Random(seed + 1 + w);
                int mine =
                        w; // writer w replaces targets w, w + 2, ...: one writer per target keeps
                // versions ordered
                writers.add(
                        Thread.ofPlatform()
                                .name("writer-" + w)
                                .start(
                                        () -> {
                                            for (int n = 0; n < WRITES_PER_WRITER; n++) {
                                                int t = mine + 2 * rnd.nextInt(TARGETS / 2);
                                                long version = started.get(t) + 1;
                                                List<VectorRecord> batch = new ArrayList<>();
                                                batch.add(target(t, version, rnd));
                                                // Background churn in the same batch: replacements
                                                // and new records.
                                                for (int b = rnd.nextInt(3); b > 0; b--) {
                                                    batch.add(bg(rnd.nextInt(BACKGROUND * 2), rnd));
                                                }
                                                batch = dedupe(batch);
                                                started.set(t, version);
                                                c.upsertAll(batch);
                                                completed.set(t, version);
                                                if (rnd.nextInt(8) == 0) {
                                                    c.delete("bg-" + rnd.nextInt(BACKGROUND * 2));
                                                }
                                            }
                                        }));
            }
            List<Thread> searchers = new ArrayList<>();
            for (int s = 0; s < 2; s++) {
                Random rnd = new Random(seed + 100 + s);
                searchers.add(
                        Thread.ofPlatform()
                                .name("searcher-" + s)
                                .start(
                                        () -> {
                                            while (!done.get()) {
                                                int t = rnd.nextInt(TARGETS);
                                                int k = 1 + rnd.nextInt(8);
                                                SearchRequest r = SearchRequest.of(query(t), k);
                                                String how = "plain";
                                                switch (rnd.nextInt(3)) {
                                                    case 0 -> {}
                                                    case 1 -> {
                                                        r = r.subject("s" + t);
                                                        how = "subject";
                                                    }
                                                    default -> {
                                                        r = r.filter(Filter.eq("kind", "target"));
                                                        how = "filter";
                                                    }
                                                }
                                                long floor = completed.get(t);
                                                List<SearchHit> hits = c.search(r);
                                                long ceiling = started.get(t);
                                                searches.incrementAndGet();
                                                check(hits, t, k, floor, ceiling, how, violations);
                                            }
                                        }));
            }
            for (Thread w : writers) {
                assertTrue(
                        w.join(java.time.Duration.ofMinutes(3)),
                        "writers finish within 3 minutes (a hang, not a"
                                + " timing bound)"
                                + Seeds.replay(seed));
            }
            done.set(true);
            for (Thread s : searchers) {
                assertTrue(
                        s.join(java.time.Duration.ofMinutes(1)),
                        "searchers stop" + Seeds.replay(seed));
            }
            System.out.println(
                    "ReplacementDuringSearchTest: "
                            + searches.get()
                            + " searches during "
                            + 2 * WRITES_PER_WRITER
                            + " replacement batches");
            assertTrue(
                    violations.isEmpty(),
                    violations.size()
                            + " violations, first ones: "
                            + violations.stream().limit(5).toList()
                            + Seeds.replay(seed));
            assertTrue(
                    searches.get() > 100,
                    "control: searches ran during the writes (" + searches.get() + ")");
            // Once the writes stop, every target is found in its last version.
            for (int t = 0; t < TARGETS; t++) {
                List<SearchHit> hits = c.search(SearchRequest.of(query(t), 3));
                assertEquals("target-" + t, hits.get(0).id());
                assertEquals(
                        completed.get(t),
                        ((Number) hits.get(0).record().metadata().get("version")).longValue());
            }
        }
    }

    /** The rule, for one search for target t. */
    private static void check(
            List<SearchHit> hits,
            int t,
            int k,
            long floor,
            long ceiling,
            String how,
            ConcurrentLinkedQueue<String> violations) {
        String id = "target-" + t;
        List<SearchHit> versions = hits.stream().filter(h -> h.id().equals(id)).toList();
        if (versions.size() != 1) {
            violations.add(
                    how
                            + " search for "
                            + id
                            + " (k "
                            + k
                            + ") returned "
                            + versions.size()
                            + " versions of it: "
                            + hits.stream().map(SearchHit::id).toList());
            return;
        }
        if (!hits.get(0).id().equals(id)) {
            violations.add(
                    how + " search for " + id + ": it is not first, " + hits.get(0).id() + " is");
        }
        long v = ((Number) versions.get(0).record().metadata().get("version")).longValue();
        if (v < floor || v > ceiling) {
            violations.add(
                    how
                            + " search for "
                            + id
                            + " returned version "
                            + v
                            + ", expected "
                            + floor
                            + " to "
                            + ceiling);
        }
        if (hits.stream().map(SearchHit::id).distinct().count() != hits.size()) {
            violations.add(
                    how
                            + " search returned a record twice: "
                            + hits.stream().map(SearchHit::id).toList());
        }
        for (int i = 1; i < hits.size(); i++) {
            if (hits.get(i - 1).score() < hits.get(i).score()) {
                violations.add(
                        how
                                + " search: hits not best first "
                                + hits.stream().map(SearchHit::score).toList());
                break;
            }
        }
    }

    /** One record per id in a batch (the store refuses two), the last one kept. */
    private static List<VectorRecord> dedupe(List<VectorRecord> batch) {
        java.util.Map<String, VectorRecord> byId = new java.util.LinkedHashMap<>();
        for (VectorRecord r : batch) {
            byId.put(r.id(), r);
        }
        return new ArrayList<>(byId.values());
    }
}
