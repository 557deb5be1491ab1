package dev.nepenthe.core;

import static dev.nepenthe.testing.TestFiles.copyTree;
import static dev.nepenthe.testing.TestFiles.deleteTree;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crashes at every kind of moment, in one process and reproducibly. A workload of upserts (new ids
 * and replacements), deletes, subject drops and clean restarts runs with a countdown over the
 * store's crash points ({@link TestPoints}); when it reaches zero the store's folders are copied as
 * they are, which is exactly what a process killed at that moment leaves behind. The next round
 * opens the copy, checks it against a model of what was acknowledged, and goes on writing to it, so
 * recoveries pile on recoveries as in {@link CrashTest} (which kills real JVMs, at moments it
 * cannot choose or replay).
 *
 * <p>The model: every acknowledged write is present with its content, every acknowledged delete
 * stays gone, nothing else is present, and the operation in flight at the crash is wholly or partly
 * done, record by record, but never anything else.
 */
class CrashPointTest {

    private static final int DIM = 4;

    /** Thousands of recoveries: their (useful, per-record) INFO lines would drown the build log. */
    private static final java.util.logging.Logger STORAGE_LOG =
            java.util.logging.Logger.getLogger("dev.nepenthe.core.storage");

    private static java.util.logging.Level storageLevel;

    @org.junit.jupiter.api.BeforeAll
    static void quietRecoveryLog() {
        storageLevel = STORAGE_LOG.getLevel();
        STORAGE_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    @org.junit.jupiter.api.AfterAll
    static void restoreRecoveryLog() {
        STORAGE_LOG.setLevel(storageLevel);
    }

    /** What the workload did, as the model sees it. */
    private static final class Model {
        /** Acknowledged live records by id. */
        final Map<String, VectorRecord> live = new TreeMap<>();

        /**
         * The operation that was running when the crash point fired, as the records it could leave.
         */
        final Map<String, List<VectorRecord>> inFlight = new TreeMap<>();

        String inFlightOp;

        /**
         * The model as it stands at a crash point: the files copied then are checked against it.
         */
        Model copy() {
            Model m = new Model();
            m.live.putAll(live);
            m.inFlight.putAll(inFlight);
            m.inFlightOp = inFlightOp;
            return m;
        }
    }

    @Test
    void recoversFromACrashAtAnyPointAndKeepsGoing(@TempDir Path tmp) throws Exception {
        long seed = Seeds.draw("CrashPointTest");
        int rounds = Integer.getInteger("nepenthe.crashpoint.rounds", 120);
        run(seed, rounds, tmp);
    }

    /** Two fixed seeds, so every build also runs the same crashes, whatever fresh seeds find. */
    @Test
    void fixedSeeds(@TempDir Path tmp) throws Exception {
        for (long seed : new long[] {1L, 20261130L}) {
            run(seed, 60, tmp.resolve("seed-" + seed));
        }
    }

    /**
     * The interleaving behind the CI failure, recorded from the files a killed worker left: after
     * puts over six subjects, subject drops and deletes, a delete of one record is killed once its
     * journal entry (and then its log entry) is durable, before its checkpoint. Reopened, the store
     * must have dropped exactly that record (the journal names it) and kept every other. The store
     * did; the crash test's acknowledgement pipe had lost the "WILL-DEL" line.
     */
    @Test
    void deleteKilledBeforeItsCheckpointDropsOnlyTheRecordItNames(@TempDir Path tmp)
            throws Exception {
        for (int syncs = 1; syncs <= 2; syncs++) {
            Path dir = tmp.resolve("syncs-" + syncs);
            Path image = tmp.resolve("image-" + syncs);
            Map<String, VectorRecord> live = new TreeMap<>();
            String doomed;
            try (Nepenthe store = open(dir, 256)) {
                VectorCollection c = store.createCollection(CollectionSpec.of("c", DIM, Metric.L2));
                Random rnd = new Random(43);
                for (int n = 0; n < 40; n++) {
                    List<VectorRecord> batch = new ArrayList<>();
                    for (int i = 0; i < 15; i++) {
                        float[] v = {n, i, 0, 1};
                        batch.add(
                                VectorRecord.builder(n + "-" + i)
                                        .subject("s" + rnd.nextInt(6))
                                        .vector(v)
                                        .text("t" + n + "-" + i)
                                        .build());
                    }
                    c.upsertAll(batch);
                    batch.forEach(r -> live.put(r.id(), r));
                    if (n % 9 == 4) {
                        String s = "s" + rnd.nextInt(6);
                        c.deleteSubject(VectorRecord.DEFAULT_TENANT, s);
                        live.values().removeIf(r -> r.subject().equals(s));
                    } else if (n % 5 == 2) {
                        String id = new ArrayList<>(live.keySet()).get(rnd.nextInt(live.size()));
                        assertTrue(c.delete(id));
                        live.remove(id);
                    }
                }
                doomed = new ArrayList<>(live.keySet()).get(rnd.nextInt(live.size()));
                int[] seen = {0};
                int wanted = syncs;
                store.testPoints()
                        .installCrashHook(
                                point -> {
                                    if (point.equals("wal.synced") && ++seen[0] == wanted) {
                                        try {
                                            copyTree(dir, image);
                                        } catch (IOException e) {
                                            throw new UncheckedIOException(e);
                                        }
                                    }
                                });
                try {
                    assertTrue(c.delete(doomed));
                } finally {
                    store.testPoints().installCrashHook(null);
                }
            }
            live.remove(doomed);
            try (Nepenthe store = open(image, 256)) {
                VectorCollection c = store.collection("c");
                assertTrue(
                        c.get(doomed).isEmpty(), "the record whose delete was journaled came back");
                List<String> lost =
                        live.keySet().stream().filter(id -> c.get(id).isEmpty()).toList();
                assertTrue(
                        lost.isEmpty(),
                        "killed after "
                                + syncs
                                + " sync(s) of the delete: lost "
                                + lost
                                + "; open report "
                                + c.openReport());
                assertEquals(live.size(), c.size());
                assertEquals(1, c.openReport().droppedAsDeleted(), "open report " + c.openReport());
                assertEquals(
                        0, c.openReport().droppedAsSuperseded(), "open report " + c.openReport());
            }
        }
    }

    private static void run(long seed, int rounds, Path tmp) throws Exception {
        Random rnd = new Random(seed);
        // One subject per shard bucket (the default), several per bucket, or all in one.
        int buckets = new int[] {256, 8, 1}[rnd.nextInt(3)];
        Model model = new Model();
        Model[] atCrash = {null};
        Path dir = tmp.resolve("round-0");
        int crashes = 0;
        Map<String, Integer> pointsHit = new TreeMap<>();
        for (int round = 0; round < rounds; round++) {
            String where = "round " + round + Seeds.replay(seed);
            Path roundDir = dir;
            Model roundModel = model;
            Path image = tmp.resolve("round-" + (round + 1));
            int[] countdown = {1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 40 : 400)};
            String[] crashedAt = {null};
            // Sometimes the crash comes during the open itself (a restart killed while it
            // recovers).
            boolean armDuringOpen = rnd.nextInt(8) == 0;
            TestPoints points = new TestPoints();
            points.installCrashHook(
                    armDuringOpen
                            ? point ->
                                    tick(
                                            point,
                                            countdown,
                                            crashedAt,
                                            roundDir,
                                            image,
                                            roundModel,
                                            atCrash)
                            : null);
            Nepenthe store = open(dir, buckets, points);
            try {
                VectorCollection c =
                        store.collections().isEmpty()
                                ? store.createCollection(CollectionSpec.of("c", DIM, Metric.L2))
                                : store.collection("c");
                if (crashedAt[0] == null) {
                    points.installCrashHook(null);
                    check(c, model, where);
                    points.installCrashHook(
                            point ->
                                    tick(
                                            point,
                                            countdown,
                                            crashedAt,
                                            roundDir,
                                            image,
                                            roundModel,
                                            atCrash));
                    for (int op = 0; op < 200 && crashedAt[0] == null; op++) {
                        step(c, rnd, model, round, op);
                    }
                }
            } finally {
                points.installCrashHook(null);
                // The process "died" at the crash point: what it does afterwards touches only
                // the folders the copy was taken from.
                store.close();
            }
            if (crashedAt[0] != null) {
                model = atCrash[0];
                crashes++;
                pointsHit.merge(crashedAt[0], 1, Integer::sum);
                deleteTree(dir);
            } else {
                // No crash this round: the clean close is the state to reopen.
                Files.move(dir, image);
            }
            dir = image;
        }
        System.out.println(
                "CrashPointTest seed "
                        + seed
                        + " ("
                        + buckets
                        + " buckets): "
                        + crashes
                        + " crashes at "
                        + pointsHit);
        assertTrue(
                crashes >= rounds / 2,
                "the countdown rarely fired; the test exercised little" + Seeds.replay(seed));
        assertTrue(
                pointsHit.size() >= 5,
                "crashes hit only " + pointsHit.keySet() + Seeds.replay(seed));
    }

    private static void tick(
            String point,
            int[] countdown,
            String[] crashedAt,
            Path dir,
            Path image,
            Model model,
            Model[] atCrash) {
        if (crashedAt[0] != null || --countdown[0] > 0) {
            return;
        }
        crashedAt[0] = point;
        atCrash[0] = model.copy();
        try {
            copyTree(dir, image);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Nepenthe open(Path dir, int buckets) throws IOException {
        return open(dir, buckets, new TestPoints());
    }

    /** Opens with {@code points} set beforehand, so a crash point can fire during the open. */
    private static Nepenthe open(Path dir, int buckets, TestPoints points) throws IOException {
        return Nepenthe.open(
                dir.resolve("data"),
                StoreOptions.defaults()
                        .withKeystore(dir.resolve("keys"))
                        .withCheckpointBytes(1 << 16)
                        .withShardBuckets(buckets),
                points);
    }

    /** One operation of the workload; the model changes only once the call returns. */
    private static void step(VectorCollection c, Random rnd, Model model, int round, int op) {
        int kind = rnd.nextInt(20);
        if (kind < 12) {
            List<VectorRecord> batch = new ArrayList<>();
            Set<String> ids = new HashSet<>();
            for (int i = 0, n = 1 + rnd.nextInt(20); i < n; i++) {
                // Half the rounds draw from a small id space (many replacements), half write new
                // ids.
                String id =
                        round % 2 == 0 ? "id" + rnd.nextInt(300) : "r" + round + "-" + op + "-" + i;
                if (!ids.add(id)) {
                    continue;
                }
                float[] v = new float[DIM];
                for (int d = 0; d < DIM; d++) {
                    v[d] = rnd.nextFloat();
                }
                batch.add(
                        VectorRecord.builder(id)
                                .subject("s" + rnd.nextInt(6))
                                .vector(v)
                                .text("r" + round + "-" + op + "-" + id)
                                .build());
            }
            model.inFlightOp = "upsert of " + batch.size();
            model.inFlight.clear();
            for (VectorRecord r : batch) {
                List<VectorRecord> outcomes = new ArrayList<>();
                outcomes.add(r);
                outcomes.add(model.live.get(r.id())); // the old version, or null: absent
                model.inFlight.put(r.id(), outcomes);
            }
            c.upsertAll(batch);
            batch.forEach(r -> model.live.put(r.id(), r));
        } else if (kind < 16) {
            if (model.live.isEmpty()) {
                return;
            }
            List<String> ids = new ArrayList<>(model.live.keySet());
            String id = ids.get(rnd.nextInt(ids.size()));
            model.inFlightOp = "delete";
            model.inFlight.clear();
            model.inFlight.put(id, java.util.Arrays.asList(model.live.get(id), null));
            assertTrue(c.delete(id), "delete of a live record found nothing");
            model.live.remove(id);
        } else if (kind < 18) {
            String s = "s" + rnd.nextInt(6);
            model.inFlightOp = "subject drop";
            model.inFlight.clear();
            for (VectorRecord r : model.live.values()) {
                if (r.subject().equals(s)) {
                    model.inFlight.put(r.id(), java.util.Arrays.asList(r, null));
                }
            }
            int n = c.deleteSubject(VectorRecord.DEFAULT_TENANT, s);
            assertEquals(model.inFlight.size(), n, "subject drop count");
            model.live.values().removeIf(r -> r.subject().equals(s));
        } else {
            // A read-only step between writes: the integrity check sees the state the writes left.
            model.inFlightOp = null;
            model.inFlight.clear();
            c.verifyIntegrity();
        }
        model.inFlight.clear();
        model.inFlightOp = null;
    }

    /**
     * The reopened store holds exactly the acknowledged records, plus, record by record, one of the
     * outcomes of the operation in flight; then the model takes what was found.
     */
    private static void check(VectorCollection c, Model model, String where) {
        Map<String, List<VectorRecord>> inFlight = new HashMap<>(model.inFlight);
        Set<String> present = new HashSet<>(c.ids(VectorRecord.DEFAULT_TENANT));
        List<String> lost = new ArrayList<>();
        for (VectorRecord r : model.live.values()) {
            if (!inFlight.containsKey(r.id()) && !present.contains(r.id())) {
                lost.add(r.id());
            }
        }
        List<String> unexpected = new ArrayList<>();
        for (String id : present) {
            if (!model.live.containsKey(id) && !inFlight.containsKey(id)) {
                unexpected.add(id);
            }
        }
        if (!lost.isEmpty() || !unexpected.isEmpty()) {
            fail(
                    where
                            + ": "
                            + lost.size()
                            + " acknowledged records lost "
                            + lost
                            + ", "
                            + unexpected.size()
                            + " records present that were deleted or never acknowledged "
                            + unexpected
                            + "; operation in flight: "
                            + model.inFlightOp
                            + "; open report "
                            + c.openReport());
        }
        for (String id : present) {
            VectorRecord got = c.get(id).orElseThrow();
            List<VectorRecord> allowed =
                    inFlight.containsKey(id) ? inFlight.get(id) : List.of(model.live.get(id));
            boolean matches = allowed.stream().anyMatch(r -> r != null && same(r, got));
            assertTrue(
                    matches,
                    where
                            + ": record "
                            + id
                            + " holds content no acknowledged or in-flight write gave it");
        }
        for (String id : inFlight.keySet()) {
            if (!present.contains(id) && !inFlight.get(id).contains(null)) {
                fail(
                        where
                                + ": record "
                                + id
                                + " vanished although every outcome of the "
                                + model.inFlightOp
                                + " in flight keeps it");
            }
        }
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), where + ": " + r);
        }
        // The model takes the outcome the crash left.
        for (String id : inFlight.keySet()) {
            if (present.contains(id)) {
                model.live.put(id, c.get(id).orElseThrow());
            } else {
                model.live.remove(id);
            }
        }
        model.inFlight.clear();
        model.inFlightOp = null;
        assertEquals(model.live.size(), c.size(), where + ": size");
    }

    private static boolean same(VectorRecord a, VectorRecord b) {
        return a.id().equals(b.id())
                && a.subject().equals(b.subject())
                && a.text().equals(b.text())
                && java.util.Arrays.equals(a.vector(), b.vector());
    }
}
