package dev.nepenthe.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.ProbePolicy;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.testing.Datasets;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The forget protocol over the graph and quantized indexes: after a subject's operation seals, the
 * index's own integrity checker is clean, its surface reports what erasure left behind, a rebuild
 * of the index and a reopen of the store do not bring the subject back, and no file holds its text.
 */
class ForgetEveryIndexTest {

    /**
     * Clustered data puts many survivors near a subject's vectors; these tests look for near-copies
     * only (the default policy is exercised in store-core's tests).
     */
    private static final ProbePolicy NEAR_COPIES_ONLY = new ProbePolicy(0.9999, 0.5);

    static List<IndexSpec> kinds() {
        return List.of(
                IndexSpec.of("hnsw", Map.of("M", "12", "efConstruction", "80", "efSearch", "64")),
                // Vectors off the heap: the freed slots the checker finds zeroed are in native
                // memory.
                IndexSpec.of(
                        "hnsw",
                        Map.of(
                                "M",
                                "12",
                                "efConstruction",
                                "80",
                                "efSearch",
                                "64",
                                "vectors",
                                "offheap",
                                "quantization",
                                "int8")),
                // autoRetrain=0: the removal taints the codebooks, and only the forget's purge of
                // the
                // index surface retrains them; sealing proves it did.
                IndexSpec.of(
                        "ivfpq",
                        Map.of(
                                "nlist",
                                "16",
                                "m",
                                "8",
                                "trainSize",
                                "1500",
                                "nprobe",
                                "8",
                                "rerank",
                                "100",
                                "autoRetrain",
                                "0")));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aSealedForgetLeavesACleanIndexThatARebuildDoesNotRefill(IndexSpec kind, @TempDir Path tmp)
            throws Exception {
        int dim = 24;
        float[][] data = Datasets.clustered(21, 3000, dim, 30, 0.3);
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("keys"))
                        .withProbePolicy(NEAR_COPIES_ONLY);
        String canary = "CANARY-S3-TEXT-91ab";
        ForgetOperation done;
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", dim, Metric.COSINE, kind));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject("s" + (i % 20))
                                .vector(data[i])
                                .text(i % 20 == 3 ? canary : "text " + i)
                                .build());
            }
            c.upsertAll(batch);
            // Clustered data puts many survivors near the subject's vectors; only near-duplicates
            // count as residue here (the default threshold is exercised in store-core's tests).
            done =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    VectorRecord.DEFAULT_TENANT,
                                                    ForgetScope.subject("s3"),
                                                    "req-1",
                                                    "gdpr-art17",
                                                    0.9999))
                                    .id(),
                            Duration.ofSeconds(120));
            assertEquals(OperationState.SEALED, done.state(), done.note() + " " + done.suspects());
            assertEquals(150, done.totalForgotten());
            SurfaceOutcome index =
                    done.surfaces().stream()
                            .filter(s -> s.surface().startsWith("collection:c/index:"))
                            .findFirst()
                            .orElseThrow();
            assertTrue(index.clean(), index.toString());
            assertTrue(
                    index.residual() != null && !index.residual().isBlank(),
                    "the receipt states what remains");
            assertTrue(done.receipt().contains(index.residual()));
            assertNoneOf(c, data, "s3");
            assertClean(c);
            c.rebuildIndex();
            assertNoneOf(c, data, "s3");
            assertClean(c);
            assertEquals(2850, c.size());
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c = store.collection("c");
            assertNoneOf(c, data, "s3");
            assertClean(c);
        }
        assertEquals(
                List.of(),
                ForensicScan.filesContaining(
                        List.of(tmp.resolve("data"), tmp.resolve("keys")),
                        List.of(canary.getBytes(StandardCharsets.UTF_8))));
    }

    /**
     * k smaller than the marked set, on the graph and quantized indexes: the subject owns the
     * twelve records nearest the query; right after {@code forget} returns (marked, cleanup running
     * or done) a search for 5 still gets 5 visible records and none of hers, because marked records
     * are left out of what the index may return rather than dropped after it.
     */
    @ParameterizedTest
    @MethodSource("kinds")
    void aSearchRightAfterTheMarkStillGetsKVisibleRecords(IndexSpec kind, @TempDir Path tmp)
            throws Exception {
        int dim = 24;
        float[][] data = Datasets.clustered(41, 2000, dim, 30, 0.3);
        float[] query = data[0];
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults()
                                .withKeystore(tmp.resolve("keys"))
                                .withProbePolicy(NEAR_COPIES_ONLY))) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", dim, Metric.COSINE, kind));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 1; i < data.length; i++) { // data[0] is the query: not stored
                batch.add(VectorRecord.builder("r" + i).subject("other").vector(data[i]).build());
            }
            for (int i = 0; i < 12; i++) { // the subject: twelve near-copies of the query
                float[] v = query.clone();
                v[i % dim] += 0.001f * (i + 1);
                batch.add(VectorRecord.builder("near" + i).subject("alice").vector(v).build());
            }
            c.upsertAll(batch);
            List<SearchHit> before = c.search(SearchRequest.of(query, 5));
            assertTrue(
                    before.stream().allMatch(h -> h.record().subject().equals("alice")),
                    "control: the subject's records are the nearest before the forget");
            ForgetOperation op =
                    store.forget(
                            new ForgetRequest(
                                    VectorRecord.DEFAULT_TENANT,
                                    ForgetScope.subject("alice"),
                                    "req-k",
                                    "gdpr-art17",
                                    0.85));
            List<SearchHit> hits = c.search(SearchRequest.of(query, 5));
            assertEquals(
                    5,
                    hits.size(),
                    "k=5 with 1999 visible records, right after the mark (" + op.state() + ")");
            assertTrue(hits.stream().noneMatch(h -> h.record().subject().equals("alice")));
            store.awaitOperation(op.id(), Duration.ofSeconds(120));
        }
    }

    /**
     * An auditor's check of the first-order rule from outside, through describeIndex: after a
     * forget no list or training lineage names a forgotten record, and each IVF list's centroid is
     * the mean of its members' vectors (recomputed here from the vectors given).
     */
    @ParameterizedTest
    @MethodSource("kinds")
    void anAuditorSeesNoForgottenRecordInTheIndexAndCentroidsThatAreMeansOfTheirMembers(
            IndexSpec kind, @TempDir Path tmp) throws Exception {
        int dim = 24;
        float[][] data = Datasets.clustered(77, 2000, dim, 16, 0.5);
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("keys"))
                        .withProbePolicy(NEAR_COPIES_ONLY);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", dim, Metric.L2, kind));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject("s" + (i % 20))
                                .vector(data[i])
                                .build());
            }
            c.upsertAll(batch);
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("s3"),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            Duration.ofSeconds(120));
            assertEquals(OperationState.SEALED, op.state(), op.note());
            dev.nepenthe.core.IndexView view = c.describeIndex();
            // The add that reached trainSize started a training in the background; a forget that
            // sealed while it ran took its records out of that training too (not a residue, so
            // the seal does not wait for it). Until it installs, the index is flat: wait for it.
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (view.stats().getOrDefault("training", 0).intValue() == 1
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
                view = c.describeIndex();
            }
            assertEquals(kind.kind(), view.kind());
            assertEquals(1900, view.size());
            java.util.function.Predicate<dev.nepenthe.core.IndexView.Ref> forgotten =
                    r -> Integer.parseInt(r.id().substring(1)) % 20 == 3;
            if (kind.kind().equals("hnsw")) {
                assertTrue(view.stats().get("levels").intValue() >= 1, view.stats().toString());
                assertTrue(
                        view.stats().get("meanDegreeLayer0").doubleValue() > 0,
                        view.stats().toString());
                return;
            }
            assertEquals(16, view.partitions().size());
            assertTrue(view.stats().get("trainings").longValue() >= 1, view.stats().toString());
            assertTrue(view.trainingLineage() != null && !view.trainingLineage().isEmpty());
            assertTrue(
                    view.trainingLineage().stream().noneMatch(forgotten),
                    "the lineage names a forgotten record");
            int members = 0;
            for (dev.nepenthe.core.IndexView.Partition p : view.partitions()) {
                assertTrue(
                        p.members().stream().noneMatch(forgotten),
                        "list " + p.id() + " names a forgotten record");
                members += p.members().size();
                if (p.members().isEmpty()) {
                    continue;
                }
                double[] mean = new double[dim];
                for (dev.nepenthe.core.IndexView.Ref r : p.members()) {
                    float[] v = data[Integer.parseInt(r.id().substring(1))];
                    for (int j = 0; j < dim; j++) {
                        mean[j] += v[j] / (double) p.members().size();
                    }
                }
                for (int j = 0; j < dim; j++) {
                    assertEquals(
                            mean[j], p.centroid()[j], 1e-4, "list " + p.id() + " dimension " + j);
                }
            }
            assertEquals(1900, members);
            // Control: the same check names a record that is there.
            assertTrue(
                    view.partitions().stream()
                            .flatMap(p -> p.members().stream())
                            .anyMatch(r -> Integer.parseInt(r.id().substring(1)) % 20 == 4));
        }
    }

    @org.junit.jupiter.api.Test
    void theRebuildLevelRebuildsTheGraphAndTheReceiptSaysNoInfluenceRemains(@TempDir Path tmp)
            throws Exception {
        int dim = 16;
        float[][] data = Datasets.clustered(31, 1500, dim, 20, 1.0);
        StoreOptions opts =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("keys"))
                        .withProbePolicy(NEAR_COPIES_ONLY);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), opts)) {
            VectorCollection c =
                    store.createCollection(
                            new CollectionSpec(
                                    "c",
                                    dim,
                                    Metric.COSINE,
                                    IndexSpec.of(
                                            "hnsw", Map.of("M", "8", "efConstruction", "60"))));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject("s" + (i % 20))
                                .vector(data[i])
                                .build());
            }
            c.upsertAll(batch);
            ForgetOperation repaired =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    VectorRecord.DEFAULT_TENANT,
                                                    ForgetScope.subject("s1"),
                                                    "req-repair",
                                                    "gdpr-art17",
                                                    0.99))
                                    .id(),
                            Duration.ofSeconds(60));
            ForgetOperation rebuilt =
                    store.awaitOperation(
                            store.forget(
                                            new ForgetRequest(
                                                    VectorRecord.DEFAULT_TENANT,
                                                    ForgetScope.subject("s2"),
                                                    "req-rebuild",
                                                    "gdpr-art17",
                                                    0.99,
                                                    dev.nepenthe.core.forget.ErasureLevel.REBUILD))
                                    .id(),
                            Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, repaired.state(), repaired.note());
            assertEquals(OperationState.SEALED, rebuilt.state(), rebuilt.note());
            assertTrue(
                    repaired.receipt().contains("second-order influence"),
                    "a repair says what remains");
            assertTrue(rebuilt.receipt().contains("\"level\":\"REBUILD\""));
            assertTrue(rebuilt.receipt().contains("no influence of the forgotten records remains"));
            assertTrue(!rebuilt.receipt().contains("second-order influence"));
            assertNoneOf(c, data, "s2");
            assertClean(c);
        }
    }

    /**
     * Searches, upserts and a forget at once, on each index. The forget's cleanup is held right
     * after it journals the deletion (holding the collection's writer mutex, with the upserting
     * thread queued behind it) until 50 more searches have finished: if a search waited for a
     * writer, that never happens. Meanwhile every search gets k hits, none twice, and none of the
     * subject's once {@code forget()} has returned, and a get of a record being replaced finds a
     * version; afterwards every acknowledged upsert is there.
     */
    @ParameterizedTest
    @MethodSource("kinds")
    void searchesUpsertsAndAForgetRunTogether(IndexSpec kind, @TempDir Path tmp) throws Exception {
        int dim = 24;
        long seed =
                dev.nepenthe.testing.Seeds.draw(
                        "ForgetEveryIndexTest.searchesUpsertsAndAForgetRunTogether " + kind.kind());
        float[][] data = Datasets.clustered(seed, 3000, dim, 30, 0.3);
        java.util.concurrent.atomic.AtomicLong searchesDone =
                new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong searchesWhileHeld =
                new java.util.concurrent.atomic.AtomicLong(-1);
        // Installed on the store once it is open: the hold is reached only by the forget.
        java.util.function.Consumer<String> holdTheCleanup =
                point -> {
                    if (point.equals("cleanup.deleted")
                            && Thread.currentThread().getName().startsWith("nepenthe-forget")
                            && searchesWhileHeld.get() < 0) {
                        long from = searchesDone.get();
                        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                        while (searchesDone.get() < from + 50 && System.nanoTime() < deadline) {
                            Thread.onSpinWait();
                            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                        }
                        searchesWhileHeld.set(searchesDone.get() - from);
                    }
                };
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults()
                                .withKeystore(tmp.resolve("keys"))
                                .withProbePolicy(NEAR_COPIES_ONLY))) {
            TestPoints.of(store).installCrashHook(holdTheCleanup);
            VectorCollection c =
                    store.createCollection(new CollectionSpec("c", dim, Metric.COSINE, kind));
            List<VectorRecord> batch = new ArrayList<>();
            float[][] queries = new float[4][];
            for (int i = 0; i < data.length; i++) {
                if (i % 700 != 0) { // data[q * 700] are the queries: not stored
                    batch.add(
                            VectorRecord.builder("r" + i)
                                    .subject("s" + (i % 20))
                                    .vector(data[i])
                                    .build());
                }
            }
            // The subject owns the 10 records nearest each of 4 queries: k=5 is smaller than her
            // set.
            for (int q = 0; q < queries.length; q++) {
                queries[q] = data[q * 700];
                for (int j = 0; j < 10; j++) {
                    float[] v = queries[q].clone();
                    v[j % dim] += 0.001f * (j + 1);
                    batch.add(
                            VectorRecord.builder("alice-" + q + "-" + j)
                                    .subject("alice")
                                    .vector(v)
                                    .build());
                }
            }
            c.upsertAll(batch);
            java.util.concurrent.atomic.AtomicBoolean stop =
                    new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicLong forgetReturnedAt =
                    new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
            java.util.Queue<String> problems = new java.util.concurrent.ConcurrentLinkedQueue<>();
            List<Thread> searchers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int offset = t;
                searchers.add(
                        new Thread(
                                () -> {
                                    for (int n = offset; !stop.get(); n++) {
                                        long started = System.nanoTime();
                                        List<SearchHit> hits =
                                                c.search(
                                                        SearchRequest.of(
                                                                queries[n % queries.length], 5));
                                        if (hits.size() != 5) {
                                            problems.add(
                                                    "a search returned "
                                                            + hits.size()
                                                            + " hits, expected 5");
                                        }
                                        if (hits.stream()
                                                        .map(h -> h.record().id())
                                                        .distinct()
                                                        .count()
                                                != hits.size()) {
                                            problems.add("a search returned a record twice");
                                        }
                                        if (started > forgetReturnedAt.get()
                                                && hits.stream()
                                                        .anyMatch(
                                                                h ->
                                                                        "alice"
                                                                                .equals(
                                                                                        h.record()
                                                                                                .subject()))) {
                                            problems.add(
                                                    "a search that started after forget() returned"
                                                            + " found the subject");
                                        }
                                        // The writer keeps replacing these ids; a get must find one
                                        // version or the other.
                                        String replaced = "r" + ((n * 7919) % 150 * 20 + 1);
                                        if (c.get(replaced).isEmpty()) {
                                            problems.add(
                                                    "a get of "
                                                            + replaced
                                                            + ", which is being replaced, found"
                                                            + " nothing");
                                        }
                                        searchesDone.incrementAndGet();
                                    }
                                },
                                "searcher-" + t));
            }
            Map<String, float[]> acknowledged = new java.util.concurrent.ConcurrentHashMap<>();
            Thread writer =
                    new Thread(
                            () -> {
                                java.util.Random rnd = new java.util.Random(seed);
                                for (int n = 0; !stop.get(); n++) {
                                    Map<String, VectorRecord> w = new java.util.LinkedHashMap<>();
                                    for (int j = 0; j < 3; j++) {
                                        // New records and replacements of existing ones (which free
                                        // and reuse ordinals).
                                        String id =
                                                rnd.nextBoolean()
                                                        ? "w" + n + "-" + j
                                                        : "r" + (rnd.nextInt(3000) / 20 * 20 + 1);
                                        int from = rnd.nextInt(data.length);
                                        from =
                                                from % 700 == 0
                                                        ? from + 1
                                                        : from; // nothing near the subject's
                                        // records
                                        float[] v = data[from].clone();
                                        v[rnd.nextInt(dim)] += 0.01f;
                                        w.put(
                                                id,
                                                VectorRecord.builder(id)
                                                        .subject("writer")
                                                        .vector(v)
                                                        .build());
                                    }
                                    c.upsertAll(List.copyOf(w.values()));
                                    w.values().forEach(r -> acknowledged.put(r.id(), r.vector()));
                                }
                            },
                            "writer");
            searchers.forEach(Thread::start);
            writer.start();
            while (searchesDone.get() < 200) {
                Thread.sleep(5);
            }
            ForgetOperation op =
                    store.forget(
                            new ForgetRequest(
                                    VectorRecord.DEFAULT_TENANT,
                                    ForgetScope.subject("alice"),
                                    "req-together",
                                    "gdpr-art17",
                                    0.9999));
            forgetReturnedAt.set(System.nanoTime());
            ForgetOperation done = store.awaitOperation(op.id(), Duration.ofSeconds(120));
            long after = searchesDone.get();
            while (searchesDone.get() < after + 100) {
                Thread.sleep(5);
            }
            stop.set(true);
            for (Thread t : searchers) {
                t.join();
            }
            writer.join();
            TestPoints.of(store).installCrashHook(null);
            assertEquals(
                    OperationState.SEALED,
                    done.state(),
                    done.note() + " " + done.suspects() + " " + done.surfaces());
            assertEquals(40, done.totalForgotten());
            assertTrue(
                    done.surfaces().stream().allMatch(SurfaceOutcome::clean),
                    done.surfaces().toString());
            assertTrue(
                    searchesWhileHeld.get() >= 50,
                    "searches finished while the forget held the writer mutex: "
                            + searchesWhileHeld.get()
                            + " (-1: the hold point was never reached)");
            assertEquals(
                    List.of(),
                    List.copyOf(problems).subList(0, Math.min(5, problems.size())),
                    problems.size()
                            + " problems in "
                            + searchesDone.get()
                            + " searches"
                            + dev.nepenthe.testing.Seeds.replay(seed));
            for (Map.Entry<String, float[]> e : acknowledged.entrySet()) {
                VectorRecord r =
                        c.get(e.getKey())
                                .orElseThrow(
                                        () ->
                                                new AssertionError(
                                                        "acknowledged upsert lost: " + e.getKey()));
                assertTrue(
                        java.util.Arrays.equals(e.getValue(), r.vector()),
                        "latest version of " + e.getKey());
            }
            assertTrue(acknowledged.size() > 0, "the writer wrote");
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                // The writer's replacements after the seal removed IVF-PQ training members
                // (autoRetrain=0 here): residue the next forget or retrain purges, nothing else.
                assertEquals(
                        r.totalViolations(), r.violations("lineage-removed-members"), r.toString());
            }
        }
    }

    private static void assertNoneOf(VectorCollection c, float[][] data, String subject) {
        // Subject "sN" owns the records i with i % 20 == N.
        for (int i = Integer.parseInt(subject.substring(1)); i < 400; i += 20) {
            for (SearchHit h : c.search(SearchRequest.of(data[i], 10))) {
                assertTrue(
                        !subject.equals(h.record().subject()),
                        "search returned a forgotten record");
            }
            assertTrue(c.get("r" + i).isEmpty());
        }
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }
}
