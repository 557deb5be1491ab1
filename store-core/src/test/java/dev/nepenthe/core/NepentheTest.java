package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.core.testing.NaiveReference;
import dev.nepenthe.core.testing.NaiveReference.Scored;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NepentheTest {

    @TempDir Path tmp;

    private Path dir;

    @org.junit.jupiter.api.BeforeEach
    void folders() {
        dir = tmp.resolve("data");
    }

    private Nepenthe open() throws IOException {
        return Nepenthe.open(dir, StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    private static VectorRecord rec(String id, String tenant, String subject, float[] v) {
        return VectorRecord.builder(id).tenant(tenant).subject(subject).vector(v).build();
    }

    /**
     * Creates collection "c" (4 dimensions, L2) holding records r0 to r(n-1) of tenant t, with
     * subjects s0 to s(subjects-1) in turn and the given vectors, and closes the store.
     */
    private void storeRecords(int n, int subjects, java.util.function.IntFunction<float[]> vector)
            throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("c", 4, Metric.L2));
            for (int i = 0; i < n; i++) {
                c.upsert(rec("r" + i, "t", "s" + i % subjects, vector.apply(i)));
            }
        }
    }

    /** Every file under {@code root} by relative path, with a digest of its bytes. */
    private static Map<String, String> filesUnder(Path root) throws IOException {
        Map<String, String> out = new java.util.TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                out.put(
                        root.relativize(f).toString(),
                        java.util.HexFormat.of()
                                .formatHex(
                                        java.security.MessageDigest.getInstance("SHA-256")
                                                .digest(Files.readAllBytes(f))));
            }
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
        return out;
    }

    /**
     * {@link #filesUnder} without the index folder: the index is derived from the records, and an
     * open destroys a generation it cannot read (here: one of the old dimension) whatever becomes
     * of the rest of the open.
     */
    private static Map<String, String> recordFilesUnder(Path root) throws IOException {
        Map<String, String> out = filesUnder(root);
        out.keySet().removeIf(k -> k.startsWith("index"));
        assertTrue(
                out.keySet().stream().anyMatch(k -> k.startsWith("segments")),
                "control: segments present " + out);
        return out;
    }

    private static void rewriteMeta(Path meta, int dimension, Metric metric) throws IOException {
        var m = dev.nepenthe.core.internal.engine.StoreFolders.readMeta(meta);
        dev.nepenthe.core.internal.engine.StoreFolders.writeMeta(
                meta, new CollectionSpec("c", dimension, metric, m.spec().index()), m.id());
    }

    private static String messages(Throwable e) {
        StringBuilder out = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            out.append(t.getMessage()).append(" / ");
        }
        return out.toString();
    }

    /**
     * A segment's records are checked as they are decoded, before admission. A stored record that
     * fails the checks (here: the meta file rewritten to another dimension) fails the open, naming
     * what was expected, before anything is written: the collection's files are the same bytes
     * afterwards, so the id map's stamp from the last clean close still holds.
     */
    @Test
    void aStoredRecordThatFailsItsChecksFailsTheOpenAndLeavesTheFilesAsTheyWere() throws Exception {
        storeRecords(40, 4, i -> new float[] {i, 1, 2, 3});
        try (Nepenthe store = open()) {
            assertTrue(
                    store.collection("c").openReport().idMapTrusted(),
                    "control: a clean close stamps the id map");
        }
        Path folder = dir.resolve("collections").resolve("c");
        Path meta = folder.resolve("collection.meta");
        byte[] original = Files.readAllBytes(meta);
        rewriteMeta(meta, 5, Metric.L2);
        Map<String, String> before = recordFilesUnder(folder);
        Exception e = assertThrows(Exception.class, this::open);
        assertTrue(
                messages(e).contains("stored record") && messages(e).contains("dimension 5"),
                messages(e));
        assertEquals(
                before, recordFilesUnder(folder), "the failed open changed the collection's files");
        Files.write(meta, original);
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("c");
            assertEquals(40, c.openReport().liveRecords());
            for (int i = 0; i < 40; i++) {
                assertEquals(i, c.get("t", "r" + i).orElseThrow().vector()[0], 0f, "r" + i);
            }
        }
    }

    /**
     * A record the log brings back (a crash before its checkpoint) is checked after the storage
     * opened. One that fails the checks (here: an all-zero vector, fine under L2, refused once the
     * meta file says cosine) fails the open, and the storage is abandoned as a failed load is:
     * nothing checkpointed, so the next open replays the same log entry and finds it.
     */
    @Test
    void aLoggedRecordThatFailsItsChecksFailsTheOpenWithTheLogKept() throws Exception {
        Path image = tmp.resolve("image");
        storeRecords(40, 4, i -> new float[] {i + 1, 1, 2, 3});
        try (Nepenthe store = open()) {
            store.collection("c").upsert(rec("zero", "t", "s0", new float[4]));
            // The folder as a crash would leave it: the new record only in the log.
            dev.nepenthe.testing.TestFiles.copyTree(dir, image);
        }
        Path meta = image.resolve("collections").resolve("c").resolve("collection.meta");
        byte[] original = Files.readAllBytes(meta);
        rewriteMeta(meta, 4, Metric.COSINE);
        Exception e =
                assertThrows(
                        Exception.class,
                        () ->
                                Nepenthe.open(
                                        image,
                                        StoreOptions.defaults().withKeystore(tmp.resolve("keys"))));
        assertTrue(
                messages(e).contains("stored record") && messages(e).contains("non-zero"),
                messages(e));
        Files.write(meta, original);
        try (Nepenthe store =
                Nepenthe.open(image, StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.collection("c");
            assertEquals(
                    1,
                    c.openReport().log().entries(),
                    "the failed open folded the log: " + c.openReport());
            assertFalse(c.openReport().idMapTrusted(), c.openReport().toString());
            assertEquals(41, c.openReport().liveRecords());
            assertEquals(0f, c.get("t", "zero").orElseThrow().vector()[0], 0f);
            for (int i = 0; i < 40; i++) {
                assertEquals(i + 1, c.get("t", "r" + i).orElseThrow().vector()[0], 0f, "r" + i);
            }
        }
    }

    /**
     * A data folder restored from before a delete holds a copy the tombstone journal deletes: the
     * open drops it and rewrites its segment at once. The segment's other records gave their
     * vectors to the column as they were decoded; the rewrite must carry them over whole, and the
     * next open, reading the rewritten segment, must find every vector.
     */
    @Test
    void aSegmentRewrittenDuringTheOpenKeepsTheVectorsOfItsOtherRecords() throws Exception {
        Path image = tmp.resolve("before-delete");
        storeRecords(30, 3, i -> new float[] {i + 1, -i, 0.5f * i, 7});
        dev.nepenthe.testing.TestFiles.copyTree(dir, image);
        try (Nepenthe store = open()) {
            assertTrue(store.collection("c").delete("t", "r0"));
        }
        // The folder from before the delete, with today's keystore (whose journal names r0).
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
        dev.nepenthe.testing.TestFiles.copyTree(image, dir);
        for (int round = 0; round < 2; round++) {
            try (Nepenthe store = open()) {
                VectorCollection c = store.collection("c");
                assertEquals(
                        round == 0 ? 1 : 0,
                        c.openReport().droppedAsDeleted(),
                        "round " + round + ": " + c.openReport());
                assertEquals(29, c.openReport().liveRecords());
                assertTrue(c.get("t", "r0").isEmpty(), "round " + round);
                for (int i = 1; i < 30; i++) {
                    assertArrayEquals(
                            new float[] {i + 1, -i, 0.5f * i, 7},
                            c.get("t", "r" + i).orElseThrow().vector(),
                            "round " + round + ": r" + i);
                }
            }
        }
    }

    /**
     * A crash inside createCollection, after its folder was made and before its meta file was
     * renamed into place (CrashPointTest found it with seed -7299726600779747189), left a folder
     * the next open could not read. Such a folder is removed; one that holds data is not.
     */
    @Test
    void aCollectionWhoseCreationDidNotFinishIsRemovedAtOpenButOneHoldingDataFailsNamingTheFile()
            throws Exception {
        try (Nepenthe store = open()) {
            store.createCollection(CollectionSpec.of("kept", 4, Metric.L2))
                    .upsert(VectorRecord.builder("r").vector(new float[] {1, 2, 3, 4}).build());
        }
        Path half = tmp.resolve("data").resolve("collections").resolve("half");
        Files.createDirectories(half);
        Files.write(half.resolve("collection.meta.tmp"), new byte[] {1, 2, 3});
        try (Nepenthe store = open()) {
            assertEquals(
                    List.of("kept"),
                    store.collections().stream().map(CollectionSpec::name).toList());
            assertTrue(store.collection("kept").get("r").isPresent());
        }
        assertFalse(Files.exists(half), "the unfinished folder is gone");

        Path lost =
                tmp.resolve("data")
                        .resolve("collections")
                        .resolve("kept")
                        .resolve("collection.meta");
        Files.delete(lost);
        CorruptFileException e = assertThrows(CorruptFileException.class, this::open);
        assertTrue(
                e.getMessage().contains("collection.meta") && e.getMessage().contains("kept"),
                e.getMessage());
    }

    @Test
    void upsertGetSearchDeleteAndReopen() throws IOException {
        float[][] data = Datasets.clustered(1, 400, 16, 5, 0.3);
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("docs", 16, Metric.COSINE));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("doc-" + i)
                                .subject("s" + (i % 7))
                                .vector(data[i])
                                .text("text " + i)
                                .metadata("n", i)
                                .metadata("even", i % 2 == 0)
                                .source("doc", "src-" + i, 3)
                                .derivedFrom(i > 0 ? List.of("doc-" + (i - 1)) : List.of())
                                .build());
            }
            c.upsertAll(batch);
            assertEquals(400, c.size());
            VectorRecord got = c.get("doc-5").orElseThrow();
            assertEquals(batch.get(5), got);
            assertEquals(5L, got.metadata().get("n"));
            assertTrue(c.delete("doc-5"));
            assertFalse(c.delete("doc-5"));
            assertTrue(c.get("doc-5").isEmpty());
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("docs");
            assertEquals(CollectionSpec.of("docs", 16, Metric.COSINE), c.spec());
            assertEquals(399, c.size());
            assertTrue(c.get("doc-5").isEmpty());
            VectorRecord r = c.get("doc-6").orElseThrow();
            assertEquals("text 6", r.text());
            assertEquals(new SourceRef("doc", "src-6", 3), r.source());
            assertEquals(List.of("doc-5"), r.derivedFrom());
            assertEquals(true, r.metadata().get("even"));
            // Search after reopen is exact: the top hit for a stored vector is that record.
            List<SearchHit> hits = c.search(SearchRequest.of(data[7], 3));
            assertEquals("doc-7", hits.get(0).id());
            assertEquals(1.0, hits.get(0).score(), 1e-5);
            for (IntegrityReport rep : c.verifyIntegrity().values()) {
                assertTrue(rep.isClean(), rep.toString());
            }
        }
    }

    @Test
    void searchHonoursTenantSubjectAndMetadataFilterLikeTheReference() throws IOException {
        float[][] data = Datasets.uniform(4, 600, 8);
        String[] tenants = {"acme", "globex"};
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("mix", 8, Metric.L2));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(
                        VectorRecord.builder("r" + i)
                                .tenant(tenants[i % 2])
                                .subject("u" + (i % 5))
                                .vector(data[i])
                                .metadata("lang", i % 3 == 0 ? "en" : "fr")
                                .metadata("year", 2000 + i % 30)
                                .build());
            }
            c.upsertAll(batch);
            float[] q = Datasets.uniform(99, 1, 8)[0];
            Filter f = Filter.eq("lang", "en").and(Filter.range("year", 2005, 2020));
            List<SearchHit> hits = c.search(SearchRequest.of(q, 10).tenant("acme").filter(f));
            List<Scored> ref =
                    NaiveReference.ranking(
                            Metric.L2,
                            q,
                            data,
                            i ->
                                    i % 2 == 0
                                            && i % 3 == 0
                                            && (2000 + i % 30) >= 2005
                                            && (2000 + i % 30) <= 2020);
            assertEquals(10, hits.size());
            for (int i = 0; i < 10; i++) {
                assertEquals("r" + ref.get(i).ordinal(), hits.get(i).id());
                assertEquals(ref.get(i).score(), hits.get(i).score(), 1e-5);
            }
            List<SearchHit> subjectHits =
                    c.search(SearchRequest.of(q, 50).tenant("globex").subject("u3"));
            List<Scored> subjectRef =
                    NaiveReference.ranking(Metric.L2, q, data, i -> i % 2 == 1 && i % 5 == 3);
            assertEquals(Math.min(50, subjectRef.size()), subjectHits.size());
            for (int i = 0; i < subjectHits.size(); i++) {
                assertEquals("r" + subjectRef.get(i).ordinal(), subjectHits.get(i).id());
            }
            assertTrue(c.search(SearchRequest.of(q, 5).tenant("nobody")).isEmpty());
            assertTrue(c.search(SearchRequest.of(q, 5).tenant("acme").subject("nobody")).isEmpty());
        }
    }

    @Test
    void deleteSubjectStaysInsideItsTenantAndNoTextEverReachesTheDisk() throws IOException {
        String canary = "CANARY-7f3a-private-note";
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("mem", 4, Metric.DOT));
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("a1")
                                    .tenant("t1")
                                    .subject("alice")
                                    .vector(new float[] {1, 0, 0, 0})
                                    .text(canary + "-t1")
                                    .build(),
                            VectorRecord.builder("a2")
                                    .tenant("t1")
                                    .subject("alice")
                                    .vector(new float[] {0, 1, 0, 0})
                                    .metadata("note", canary + "-meta")
                                    .build(),
                            VectorRecord.builder("a3")
                                    .tenant("t2")
                                    .subject("alice")
                                    .vector(new float[] {0, 0, 1, 0})
                                    .text("other tenant keeps this")
                                    .build(),
                            rec("b1", "t1", "bob", new float[] {0, 0, 0, 1})));
            // Encrypted from the first write: the log holds the records, but not as plaintext.
            assertFalse(
                    folderContains(tmp, canary), "plaintext reached the disk before any delete");
            assertEquals(2, c.deleteSubject("t1", "alice"));
            assertEquals(0, c.deleteSubject("t1", "alice"));
            assertTrue(c.get("t1", "a1").isEmpty());
            assertTrue(
                    c.get("t2", "a3").isPresent(),
                    "the same subject id in another tenant is untouched");
            assertTrue(c.get("t1", "b1").isPresent());
            assertTrue(
                    c.search(
                                    SearchRequest.of(new float[] {1, 1, 0, 0}, 10)
                                            .tenant("t1")
                                            .subject("alice"))
                            .isEmpty());
        }
        assertFalse(folderContains(tmp, canary));
        // Control: the scan finds plaintext when it is there, or the checks above prove nothing.
        Files.writeString(dir.resolve("planted.txt"), "x" + canary + "-t1 y");
        assertTrue(folderContains(tmp, canary + "-t1"));
        Files.delete(dir.resolve("planted.txt"));
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("mem");
            assertEquals(2, c.size());
            assertEquals("other tenant keeps this", c.get("t2", "a3").orElseThrow().text());
        }
    }

    @Test
    void replacedVersionsAreNotServedAndSurviveReopenAsTheNewVersion() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("v", 2, Metric.L2));
            c.upsert(VectorRecord.builder("x").vector(new float[] {1, 2}).text("old").build());
            c.upsert(VectorRecord.builder("x").vector(new float[] {3, 4}).text("new text").build());
            assertEquals(1, c.size());
            assertEquals("new text", c.get("x").orElseThrow().text());
            List<SearchHit> hits = c.search(SearchRequest.of(new float[] {1, 2}, 5));
            assertEquals(1, hits.size());
            assertEquals(-8f, hits.get(0).score(), 1e-6f, "scored against the new vector (3,4)");
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("v");
            assertEquals(1, c.size());
            assertEquals("new text", c.get("x").orElseThrow().text());
            for (IntegrityReport rep : c.verifyIntegrity().values()) {
                assertTrue(rep.isClean(), rep.toString());
            }
        }
    }

    @Test
    void badBatchStoresNothingAndSaysWhatWasExpected() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("strict", 3, Metric.COSINE));
            c.upsert(rec("keep", "t", "s", new float[] {1, 2, 3}));
            float[] ok = {1, 1, 1};
            assertRejected(
                    c,
                    List.of(rec("a", "t", "s", ok), rec("b", "t", "s", new float[] {1, 2})),
                    "record 1 of the batch: expected a vector of dimension 3",
                    "got dimension 2");
            assertRejected(
                    c,
                    List.of(rec("a", "t", "s", new float[] {1, Float.NaN, 0})),
                    "expected finite vector components, got NaN at index 1");
            assertRejected(
                    c,
                    List.of(rec("a", "t", "s", new float[] {1, Float.POSITIVE_INFINITY, 0})),
                    "got Infinity at index 1");
            assertRejected(
                    c, List.of(rec("a", "t", "s", new float[3])), "expected a non-zero vector");
            assertRejected(c, List.of(rec(" ", "t", "s", ok)), "id expected a non-blank string");
            assertRejected(
                    c,
                    List.of(rec("x".repeat(513), "t", "s", ok)),
                    "id expected at most 512 UTF-8 bytes, got 513");
            assertRejected(
                    c,
                    List.of(rec("a", "t", "s", ok), rec("a", "t", "s", ok)),
                    "records 0 and 1 of the batch have the same tenant and id");
            assertRejected(
                    c,
                    List.of(VectorRecord.builder("a").build()),
                    "expected a vector of dimension 3, got none");
            IllegalArgumentException none =
                    assertThrows(IllegalArgumentException.class, () -> c.upsert(null));
            assertTrue(
                    none.getMessage().contains("record 0 of the batch is null"), none.getMessage());
            assertEquals(1, c.size());
            assertEquals(List.of("keep"), c.ids("t"));
            // The same id in two tenants is two records, not a duplicate.
            c.upsertAll(List.of(rec("a", "t1", "s", ok), rec("a", "t2", "s", ok)));
            assertEquals(3, c.size());

            IllegalArgumentException k =
                    assertThrows(IllegalArgumentException.class, () -> SearchRequest.of(ok, 0));
            assertTrue(k.getMessage().contains("k: expected 1 to 10000, got 0"), k.getMessage());
            IllegalArgumentException q =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> c.search(SearchRequest.of(new float[] {1, 2, 3, 4}, 3)));
            assertTrue(
                    q.getMessage().contains("query: expected a vector of dimension 3"),
                    q.getMessage());
        }
        try (Nepenthe store = open()) {
            assertEquals(
                    3, store.collection("strict").size(), "rejected batches left nothing on disk");
        }
    }

    private static void assertRejected(
            VectorCollection c, List<VectorRecord> batch, String... fragments) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> c.upsertAll(batch));
        for (String f : fragments) {
            assertTrue(
                    e.getMessage().contains(f),
                    "message '" + e.getMessage() + "' lacks '" + f + "'");
        }
    }

    @Test
    void metadataValuesOfUnsupportedTypesAreRefused() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> VectorRecord.builder("a").metadata("when", new java.util.Date()));
        assertTrue(
                e.getMessage().contains("metadata 'when': expected a String, integral number"),
                e.getMessage());
    }

    @Test
    void collectionsAreCreatedListedAndDropped() throws IOException {
        try (Nepenthe store = open()) {
            store.createCollection(CollectionSpec.of("a", 2, Metric.L2));
            store.createCollection(CollectionSpec.of("b", 3, Metric.DOT));
            assertEquals(
                    List.of("a", "b"),
                    store.collections().stream().map(CollectionSpec::name).toList());
            IllegalArgumentException dup =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> store.createCollection(CollectionSpec.of("a", 2, Metric.L2)));
            assertTrue(dup.getMessage().contains("already exists"));
            IllegalArgumentException kind =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    store.createCollection(
                                            CollectionSpec.of("c", 2, Metric.L2)
                                                    .withIndex(IndexSpec.of("nope"))));
            assertTrue(
                    kind.getMessage().contains("index kind: expected one of"), kind.getMessage());
            assertFalse(
                    Files.exists(dir.resolve("collections/c")),
                    "a refused collection leaves no folder");
            store.collection("a").upsert(rec("x", "t", "s", new float[] {1, 2}));
            assertTrue(store.dropCollection("a"));
            assertFalse(store.dropCollection("a"));
            UnknownCollectionException e =
                    assertThrows(UnknownCollectionException.class, () -> store.collection("a"));
            assertTrue(
                    e.getMessage()
                            .contains("collection 'a' does not exist; existing collections: [b]"),
                    e.getMessage());
            assertFalse(Files.exists(dir.resolve("collections/a")));
        }
        try (Nepenthe store = open()) {
            assertEquals(
                    List.of("b"), store.collections().stream().map(CollectionSpec::name).toList());
        }
        assertThrows(
                IllegalArgumentException.class, () -> CollectionSpec.of("../evil", 2, Metric.L2));
        assertThrows(IllegalArgumentException.class, () -> CollectionSpec.of("ok", 0, Metric.L2));
    }

    @Test
    void aSecondOpenOfTheSameFolderIsRefused() throws IOException {
        try (Nepenthe _ = open()) {
            // FileLock is per JVM process; an overlapping lock from the same JVM throws instead.
            Exception e = assertThrows(Exception.class, () -> open());
            assertTrue(
                    e instanceof IOException
                            || e instanceof java.nio.channels.OverlappingFileLockException,
                    e.toString());
        }
    }

    @Test
    void tornLogTailIsDroppedAndCorruptFilesFailNamingTheFile() throws IOException {
        Path coll = dir.resolve("collections/t");
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("t", 2, Metric.L2));
            for (int i = 0; i < 5; i++) {
                c.upsert(rec("r" + i, "t", "s" + i, new float[] {i, i}));
            }
        }
        // A crash mid-append leaves part of an entry at the end of the newest log generation.
        Path newest;
        try (Stream<Path> s = Files.list(coll.resolve("wal"))) {
            newest = s.sorted().reduce((a, b) -> b).orElseThrow();
        }
        Files.write(
                newest, new byte[] {0, 0, 0, 40, 1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("t");
            assertEquals(5, c.size());
            assertEquals(7, c.openReport().log().tornBytesDropped());
        }
        // A flipped byte in a segment, the manifest or the meta file fails loudly, naming it.
        Path segment;
        try (Stream<Path> s = Files.list(coll.resolve("segments"))) {
            segment = s.findFirst().orElseThrow();
        }
        for (Path f : List.of(segment, coll.resolve("MANIFEST"), coll.resolve("collection.meta"))) {
            byte[] good = Files.readAllBytes(f);
            byte[] bad = good.clone();
            bad[bad.length / 2] ^= 0x40;
            Files.write(f, bad);
            CorruptFileException e = assertThrows(CorruptFileException.class, this::open);
            assertTrue(e.getMessage().contains(f.getFileName().toString()), e.getMessage());
            Files.write(f, good);
        }
        try (Nepenthe store = open()) {
            assertEquals(5, store.collection("t").size(), "restored bytes open cleanly");
        }
    }

    /**
     * Segments are opened on every core before their records are admitted: a record sealed under a
     * key the keystore does not hold still fails the open loudly, naming its segment, and one whose
     * subject was dropped (key destroyed) is still not read at all.
     */
    @Test
    void recordsWithoutTheirKeyFailTheOpenNamingTheSegmentUnlessADeletionNamesThem()
            throws IOException {
        Path masterKey = tmp.resolve("master.key");
        StoreOptions first =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("keys"))
                        .withMasterKeyFile(masterKey, true);
        try (Nepenthe store = Nepenthe.open(dir, first)) {
            VectorCollection c = store.createCollection(CollectionSpec.of("t", 2, Metric.L2));
            for (int i = 0; i < 200; i++) {
                c.upsert(rec("r" + i, "t", "s" + i % 40, new float[] {i, -i}));
            }
            c.deleteSubject("t", "s7"); // its key destroyed, its records named by the journal
        }
        // The control: with its own keystore the store opens, the dropped subject stays gone.
        try (Nepenthe store = Nepenthe.open(dir, first)) {
            VectorCollection c = store.collection("t");
            assertEquals(195, c.size());
            assertTrue(c.get("t", "r7").isEmpty());
            assertTrue(c.get("t", "r8").isPresent());
        }
        // The same data and master key with another keystore folder: no key for any record.
        StoreOptions other =
                StoreOptions.defaults()
                        .withKeystore(tmp.resolve("other-keys"))
                        .withMasterKeyFile(masterKey, false);
        CorruptFileException e =
                assertThrows(CorruptFileException.class, () -> Nepenthe.open(dir, other));
        assertTrue(
                e.getMessage()
                        .contains("a record is sealed under a key the keystore does not hold"),
                e.getMessage());
        assertTrue(e.getMessage().contains(".seg"), "names the segment: " + e.getMessage());
    }

    @Test
    void anIdMapCutShortByACrashIsRebuiltFromTheSegments() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("m", 2, Metric.L2));
            for (int i = 0; i < 50; i++) {
                c.upsert(rec("r" + i, "t", "s" + i % 3, new float[] {i, 1}));
            }
        }
        // As if the process died while creating the file: truncated, and no clean-close marker.
        Path idmap = dir.resolve("collections/m/idmap.cmap");
        Files.write(idmap, java.util.Arrays.copyOf(Files.readAllBytes(idmap), 200));
        Files.deleteIfExists(dir.resolve("collections/m/idmap.cmap.closed"));
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("m");
            for (int i = 0; i < 50; i++) {
                assertEquals(i, c.get("t", "r" + i).orElseThrow().vector()[0], 0f);
            }
            assertEquals(50, c.openReport().idMapRepairs());
        }
    }

    /**
     * A clean close stamps the id map with the manifest it agrees with: the next open uses it
     * without a check, and every id still resolves (the oracle: the vectors written), replacements
     * included.
     */
    @Test
    void aCleanlyClosedIdMapIsTrustedAndEveryIdStillResolves() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("m", 2, Metric.L2));
            for (int i = 0; i < 50; i++) {
                c.upsert(rec("r" + i, "t", "s" + i % 3, new float[] {i, 1}));
            }
        }
        for (int round = 0; round < 2; round++) {
            try (Nepenthe store = open()) {
                VectorCollection c = store.collection("m");
                assertTrue(c.openReport().idMapTrusted(), "round " + round + ": " + c.openReport());
                assertEquals(0, c.openReport().idMapRepairs());
                for (int i = 0; i < 50; i++) {
                    assertEquals(
                            i + 100 * round,
                            c.get("t", "r" + i).orElseThrow().vector()[0],
                            0f,
                            "r" + i);
                }
                for (int i = 0; i < 50; i++) {
                    c.upsert(
                            rec("r" + i, "t", "s" + i % 3, new float[] {i + 100 * (round + 1), 1}));
                }
                assertEquals(50, c.size());
            }
        }
    }

    /**
     * An id map and marker from another moment (a backup of the folder's id map, restored over
     * newer files) is not trusted: its stamp names another manifest, so the open checks it against
     * the records and repairs it. Trusting the marker alone would lose the newer ids.
     */
    @Test
    void anIdMapClosedOverOtherFilesIsCheckedAndRepaired() throws IOException {
        Path folder = dir.resolve("collections/m");
        Path saved = tmp.resolve("idmap-then");
        Files.createDirectories(saved);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("m", 2, Metric.L2));
            for (int i = 0; i < 30; i++) {
                c.upsert(rec("r" + i, "t", "s" + i % 3, new float[] {i, 1}));
            }
        }
        Files.copy(folder.resolve("idmap.cmap"), saved.resolve("idmap.cmap"));
        Files.copy(folder.resolve("idmap.cmap.closed"), saved.resolve("idmap.cmap.closed"));
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("m");
            c.deleteAll("t", List.of("r0", "r1", "r2"));
            for (int i = 30; i < 60; i++) {
                c.upsert(rec("r" + i, "t", "s" + i % 3, new float[] {i, 1}));
            }
        }
        Files.copy(
                saved.resolve("idmap.cmap"),
                folder.resolve("idmap.cmap"),
                StandardCopyOption.REPLACE_EXISTING);
        Files.copy(
                saved.resolve("idmap.cmap.closed"),
                folder.resolve("idmap.cmap.closed"),
                StandardCopyOption.REPLACE_EXISTING);
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("m");
            assertFalse(c.openReport().idMapTrusted(), c.openReport().toString());
            assertEquals(33, c.openReport().idMapRepairs(), "3 deleted ids out, 30 new ids in");
            for (int i = 0; i < 60; i++) {
                Optional<VectorRecord> got = c.get("t", "r" + i);
                if (i < 3) {
                    assertTrue(got.isEmpty(), "r" + i + " was deleted");
                } else {
                    assertEquals(i, got.orElseThrow().vector()[0], 0f, "r" + i);
                }
            }
        }
    }

    @Test
    void concurrentSearchesNeverSeeADeletedRecordAfterItsDeleteReturned() throws Exception {
        float[][] data = Datasets.clustered(3, 2000, 8, 4, 0.3);
        try (Nepenthe store = open()) {
            VectorCollection c = store.createCollection(CollectionSpec.of("cc", 8, Metric.L2));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < data.length; i++) {
                batch.add(rec("r" + i, "t", "s" + (i % 50), data[i]));
            }
            c.upsertAll(batch);
            Set<String> deleted = java.util.concurrent.ConcurrentHashMap.newKeySet();
            var failure = new java.util.concurrent.atomic.AtomicReference<Throwable>();
            Thread searcher =
                    new Thread(
                            () -> {
                                try {
                                    for (int n = 0; n < 400; n++) {
                                        Set<String> before = new HashSet<>(deleted);
                                        for (SearchHit h :
                                                c.search(
                                                        SearchRequest.of(data[n % data.length], 20)
                                                                .tenant("t"))) {
                                            if (before.contains(h.id())) {
                                                throw new AssertionError(
                                                        "search returned a record deleted before it"
                                                                + " started");
                                            }
                                        }
                                    }
                                } catch (Throwable t) {
                                    failure.set(t);
                                }
                            });
            searcher.start();
            for (int s = 0; s < 25; s++) {
                List<String> ids = new ArrayList<>();
                for (int i = s; i < data.length; i += 50) {
                    ids.add("r" + i);
                }
                c.deleteSubject("t", "s" + s);
                deleted.addAll(ids);
            }
            searcher.join();
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(1000, c.size());
        }
    }

    static boolean folderContains(Path root, String needle) throws IOException {
        return !ForensicScan.filesContaining(
                        List.of(root), List.of(needle.getBytes(StandardCharsets.UTF_8)))
                .isEmpty();
    }

    @Test
    void filterSemantics() {
        Map<String, Object> m = Map.of("lang", "en", "n", 3L, "x", 2.5, "ok", true);
        assertTrue(Filter.eq("n", 3).test(m));
        assertTrue(Filter.eq("n", 3.0).test(m), "numbers compare by value");
        assertFalse(Filter.eq("missing", 1).test(m));
        assertTrue(Filter.in("lang", "fr", "en").test(m));
        assertTrue(Filter.range("x", 2, 3).test(m));
        assertFalse(Filter.range("lang", 0, 9).test(m));
        assertTrue(Filter.not(Filter.exists("missing")).test(m));
        assertTrue(Filter.eq("ok", true).or(Filter.eq("lang", "de")).test(m));
        assertThrows(IllegalArgumentException.class, () -> Filter.range("x", 3, 2));
        assertThrows(
                IllegalArgumentException.class,
                () -> new Filter.Range("x", 3, 2),
                "the record checks its bounds too");
        // Values equal once widened are one value, not an error.
        assertTrue(Filter.in("n", 3, 3L, 3).test(m));
        assertEquals(1, ((Filter.In) Filter.in("n", 3, 3L)).values().size());
    }

    @Test
    void forgetScopesOfRecordsCountARepeatedIdOnce() {
        assertEquals(
                java.util.Set.of("x", "y"),
                ((dev.nepenthe.core.forget.ForgetScope.Records)
                                dev.nepenthe.core.forget.ForgetScope.records("x", "y", "x"))
                        .ids());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> dev.nepenthe.core.forget.ForgetScope.records("x", null));
        assertTrue(e.getMessage().contains("got a null among them"), e.getMessage());
    }
}
