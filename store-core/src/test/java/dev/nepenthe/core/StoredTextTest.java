package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record's text lives only in its sealed copy (the log's, then its bucket segment's), and a get
 * or a search hit decrypts it from there. These check the text read back against what was written
 * (a map kept beside the store is the oracle), through writes, replacements, deletes, ordinals
 * reused, checkpoints that move the copies and an open; and with readers racing a writer and its
 * checkpoints.
 */
class StoredTextTest {

    @TempDir Path tmp;

    private static final int DIM = 8;

    private StoreOptions options() {
        return StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
    }

    private static float[] vector(Random r) {
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    @Test
    void everyGetAndHitReadsTheTextLastWrittenThroughCheckpointsAndAnOpen() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("StoredTextTest seed " + seed);
        Random rnd = new Random(seed);
        Map<String, String> oracle = new HashMap<>();
        Map<String, float[]> vectors = new HashMap<>();
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.L2));
            for (int step = 0; step < 400; step++) {
                String id = "r" + rnd.nextInt(60);
                int op = rnd.nextInt(10);
                if (op < 6) {
                    // Some records have no text at all; the rest a text naming the step.
                    String text =
                            rnd.nextInt(5) == 0
                                    ? null
                                    : "text of "
                                            + id
                                            + " at step "
                                            + step
                                            + " "
                                            + "x".repeat(rnd.nextInt(300));
                    float[] v = vector(rnd);
                    c.upsert(
                            VectorRecord.builder(id)
                                    .subject("s" + rnd.nextInt(4))
                                    .vector(v)
                                    .text(text)
                                    .build());
                    oracle.put(id, text);
                    vectors.put(id, v);
                } else if (op < 8) {
                    assertEquals(
                            oracle.containsKey(id),
                            c.delete(id),
                            "delete of " + id + " at step " + step);
                    oracle.remove(id);
                    vectors.remove(id);
                } else if (op < 9) {
                    c.checkpoint();
                } else {
                    checkAll(c, oracle, vectors, "step " + step);
                }
            }
            checkAll(c, oracle, vectors, "before the close");
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("notes");
            checkAll(c, oracle, vectors, "after the open");
            // And the copies an open's checkpoint moved, and a write after it.
            c.upsert(
                    VectorRecord.builder("late")
                            .vector(vector(rnd))
                            .text("written after the open")
                            .build());
            oracle.put("late", "written after the open");
            c.checkpoint();
            assertEquals("written after the open", c.get("late").orElseThrow().text());
        }
    }

    private static void checkAll(
            VectorCollection c,
            Map<String, String> oracle,
            Map<String, float[]> vectors,
            String when) {
        for (Map.Entry<String, String> e : oracle.entrySet()) {
            VectorRecord r =
                    c.get(e.getKey())
                            .orElseThrow(() -> new AssertionError(e.getKey() + " missing " + when));
            assertEquals(e.getValue(), r.text(), e.getKey() + "'s text " + when);
        }
        for (Map.Entry<String, float[]> e : vectors.entrySet()) {
            List<SearchHit> hits = c.search(SearchRequest.of(e.getValue(), 1));
            assertEquals(
                    e.getKey(),
                    hits.get(0).record().id(),
                    "the nearest to " + e.getKey() + "'s vector " + when);
            assertEquals(
                    oracle.get(e.getKey()),
                    hits.get(0).record().text(),
                    e.getKey() + "'s hit text " + when);
        }
    }

    /**
     * Readers get records while a writer replaces them (each version's text names its version) and
     * checkpoints, which moves their copies into new segment files and deletes the old ones: every
     * get finds one version or the other, with that version's own text, never none. (A get gives up
     * after losing four times in a row to a change of its record, which the contract allows; with
     * 64 records the writer replaces each about twice a second, so that would take a reader stalled
     * for seconds.)
     */
    @Test
    void getsRacingReplacementsAndCheckpointsReadTheirVersionsText() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("StoredTextTest seed " + seed);
        Random rnd = new Random(seed);
        int ids = 64;
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.L2));
            for (int i = 0; i < ids; i++) {
                c.upsert(
                        VectorRecord.builder("r" + i)
                                .subject("s" + i % 3)
                                .vector(vector(rnd))
                                .text("r" + i + " v0")
                                .build());
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<String> wrong = new AtomicReference<>();
            AtomicLong reads = new AtomicLong();
            Thread reader =
                    new Thread(
                            () -> {
                                int i = 0;
                                while (!stop.get() && wrong.get() == null) {
                                    String id = "r" + (i++ % ids);
                                    Optional<VectorRecord> r;
                                    try {
                                        r = c.get(id);
                                    } catch (RuntimeException e) {
                                        wrong.compareAndSet(null, "get " + id + " failed: " + e);
                                        return;
                                    }
                                    if (r.isEmpty()) {
                                        wrong.compareAndSet(
                                                null,
                                                id
                                                        + " was missing (a second get found it: "
                                                        + c.get(id).isPresent()
                                                        + ")");
                                        return;
                                    }
                                    String text = r.get().text();
                                    if (text == null || !text.startsWith(id + " v")) {
                                        wrong.compareAndSet(
                                                null, id + " read the text '" + text + "'");
                                        return;
                                    }
                                    reads.incrementAndGet();
                                }
                            });
            reader.start();
            long until = System.nanoTime() + 1_500_000_000L;
            int version = 1;
            while (System.nanoTime() < until && wrong.get() == null) {
                int i = rnd.nextInt(ids);
                c.upsert(
                        VectorRecord.builder("r" + i)
                                .subject("s" + i % 3)
                                .vector(vector(rnd))
                                .text("r" + i + " v" + version++)
                                .build());
                if (rnd.nextInt(4) == 0) {
                    c.checkpoint();
                }
            }
            stop.set(true);
            reader.join();
            System.out.println("gets " + reads.get() + ", replacements " + version);
            assertNull(wrong.get(), wrong.get());
            assertTrue(reads.get() > 0);
        }
    }

    /**
     * A segment changed after the open verified it: the get that decrypts the changed copy fails
     * and names the file, rather than returning another text or none.
     */
    @Test
    void aCopyChangedAfterTheOpenFailsItsGetNamingTheFile() throws Exception {
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.L2));
            c.upsert(
                    VectorRecord.builder("a")
                            .vector(vector(new Random(1)))
                            .text("the text of a")
                            .build());
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.collection("notes");
            Path segment;
            try (Stream<Path> files = Files.walk(tmp.resolve("data"))) {
                segment =
                        files.filter(f -> f.toString().endsWith(".seg")).findFirst().orElseThrow();
            }
            try (FileChannel ch =
                    FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                // The last byte before the 12-byte footer: the end of the copy's GCM tag.
                long at = ch.size() - 13;
                ByteBuffer b = ByteBuffer.allocate(1);
                ch.read(b, at);
                b.put(0, (byte) (b.get(0) ^ 1));
                ch.write(b.rewind(), at);
            }
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> c.get("a"));
            CorruptFileException cause = assertInstanceOf(CorruptFileException.class, e.getCause());
            assertTrue(
                    cause.getMessage().contains(segment.getFileName().toString()),
                    cause.getMessage());
        }
    }

    /**
     * Records of 200 subjects fill most of the 256 buckets' segments. Reads map the segment files
     * and keep no descriptor open; every text reads back; a checkpoint that replaces a file unmaps
     * it before it deletes it (a forgotten copy must not live on in a mapping of a deleted file),
     * and a close unmaps them all. Mappings and descriptors are counted in /proc/self/maps and
     * /proc/self/fd.
     */
    @Test
    void readsMapTheSegmentsAndAReplacedOrClosedSegmentIsUnmapped() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.isDirectory(Path.of("/proc/self/fd")), "needs Linux's /proc");
        Map<String, String> oracle = new HashMap<>();
        Random rnd = new Random(5);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.L2));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                oracle.put("m" + i, "text " + i + " of subject " + i % 200);
                batch.add(
                        VectorRecord.builder("m" + i)
                                .subject("p" + i % 200)
                                .vector(vector(rnd))
                                .text("text " + i + " of subject " + i % 200)
                                .build());
            }
            c.upsertAll(batch);
            c.checkpoint();
            List<String> before = segmentFiles();
            assertTrue(
                    before.size() > 100, "the records lie in " + before.size() + " segment files");
            for (Map.Entry<String, String> e : oracle.entrySet()) {
                assertEquals(e.getValue(), c.get(e.getKey()).orElseThrow().text());
            }
            List<String> mapped = mappedSegments();
            assertEquals(
                    before.size(), mapped.size(), "every segment read is mapped once: " + mapped);
            assertEquals(0, openSegmentDescriptors(), "no descriptor stays open");

            c.upsert(
                    VectorRecord.builder("m0")
                            .subject("p0")
                            .vector(vector(rnd))
                            .text("text 0, again")
                            .build());
            c.checkpoint();
            List<String> replaced = new ArrayList<>(before);
            replaced.removeAll(segmentFiles());
            assertEquals(1, replaced.size(), "the checkpoint replaced p0's segment: " + replaced);
            List<String> after = mappedSegments();
            assertTrue(
                    !after.contains(replaced.get(0)),
                    "the replaced segment " + replaced.get(0) + " is still mapped");
            assertEquals(before.size() - 1, after.size(), "the others stay mapped: " + after);
            assertEquals("text 0, again", c.get("m0").orElseThrow().text());
        }
        assertEquals(List.of(), mappedSegments(), "segments still mapped after the close");
    }

    private List<String> segmentFiles() throws Exception {
        try (Stream<Path> files = Files.walk(tmp.resolve("data"))) {
            return files.filter(f -> f.toString().endsWith(".seg"))
                    .map(f -> f.getFileName().toString())
                    .toList();
        }
    }

    /** The names of the distinct segment files this process maps, deleted ones included. */
    private static List<String> mappedSegments() throws Exception {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .map(String::strip)
                .map(
                        l ->
                                l.endsWith(" (deleted)")
                                        ? l.substring(0, l.length() - " (deleted)".length())
                                        : l)
                .filter(l -> l.endsWith(".seg"))
                .map(l -> Path.of(l.substring(l.indexOf('/'))).getFileName().toString())
                .distinct()
                .toList();
    }

    private static long openSegmentDescriptors() throws Exception {
        long n = 0;
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).toString().endsWith(".seg")) {
                        n++;
                    }
                } catch (java.io.IOException gone) {
                    // closed while listed (the listing's own descriptor, for one)
                }
            }
        }
        return n;
    }

    /** Records without text never read their copies: a collection of them answers as before. */
    @Test
    void recordsWithoutTextNeedNoCopy() throws Exception {
        List<String> ids = new ArrayList<>();
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(CollectionSpec.of("notes", DIM, Metric.L2));
            Random rnd = new Random(3);
            for (int i = 0; i < 20; i++) {
                c.upsert(
                        VectorRecord.builder("n" + i)
                                .vector(vector(rnd))
                                .metadata("k", "v" + i)
                                .build());
                ids.add("n" + i);
            }
            for (String id : ids) {
                VectorRecord r = c.get(id).orElseThrow();
                assertNull(r.text());
                assertEquals("v" + id.substring(1), r.metadata().get("k"));
            }
        }
    }
}
