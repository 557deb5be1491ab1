package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12, finding 6: after a forget seals, the live heap holds none of the forgotten records'
 * text or vectors. A heap dump (HotSpotDiagnosticMXBean, live objects, which runs a full GC first)
 * is scanned for the canaries; a control dump before the forget finds them, so the scan can fail.
 * The test keeps the canaries only masked, so its own references are not what the scan finds.
 */
class HeapHygieneTest {

    @TempDir Path tmp;

    private static final int DIM = 32;
    private static final byte MASK = 0x5A;

    @Test
    void afterSealedTheLiveHeapHoldsNoneOfTheForgottenTextOrVectors() throws Exception {
        run(CollectionSpec.of("notes", DIM, Metric.L2));
    }

    /**
     * The same with a text index: Lucene's buffers (the indexing chain's, the analyzers' reused
     * token buffers, the readers' decrypted blocks) must not keep the text either. The whitespace
     * analyzer keeps the canary one term, so a term's bytes are the canary's.
     */
    @Test
    void withATextIndexTheLiveHeapHoldsNoneOfTheForgottenTextEither() throws Exception {
        run(CollectionSpec.of("notes", DIM, Metric.L2).withTextIndex("whitespace"));
    }

    private void run(CollectionSpec spec) throws Exception {
        long seed = new Random().nextLong();
        System.out.println("HeapHygieneTest seed " + seed);
        Random random = new Random(seed);
        byte[] maskedCanary =
                mask(
                        ("heap-canary-"
                                        + Long.toHexString(random.nextLong())
                                        + "-"
                                        + Long.toHexString(seed))
                                .getBytes(StandardCharsets.US_ASCII));
        long vectorSeed = random.nextLong();
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c = store.createCollection(spec);
            load(c, maskedCanary, vectorSeed);

            controlBefore(c, maskedCanary, vectorSeed);

            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject(subject(vectorSeed)),
                                                    "req-1",
                                                    "gdpr-art17"))
                                    .id(),
                            Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, op.state(), op.note());
            assertEquals(3, op.totalForgotten());

            Path after = dump("after");
            assertEquals(
                    0, count(after, mask(maskedCanary)), "the forgotten text is still reachable");
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        0,
                        count(after, vectorBytes(vectorSeed, i)),
                        "forgotten vector " + i + " is still reachable");
            }
            assertTrue(
                    count(after, vectorBytes(vectorSeed, 100)) > 0,
                    "control: a survivor's vector is still there");
            Files.delete(after);
        }
    }

    /**
     * The control before the forget. The store keeps the text only sealed (and a text index in its
     * terms), so it holds a get's copy, which the scan must find. The copy is the test's own, so
     * the test wipes it: dropped unwiped, its arrays could outlive it as garbage, which G1's full
     * collection may keep in place inside a dense region (a dead object turned into a filler {@code
     * int[]} with its bytes intact) and a "live" dump still writes out.
     */
    private void controlBefore(VectorCollection c, byte[] maskedCanary, long vectorSeed)
            throws IOException {
        VectorRecord held = c.get("a2").orElseThrow();
        Path before = dump("before");
        assertTrue(
                count(before, mask(maskedCanary)) > 0,
                "control: the canary text is in the heap before the forget");
        assertTrue(
                count(before, vectorBytes(vectorSeed, 0)) > 0,
                "control: her vector is in the heap before the forget");
        Files.delete(before);
        RecordAccess.wipe(held);
    }

    /**
     * The catalogue keeps the records' vectors off the heap and their text in their sealed copies:
     * neither after writes (the text then in the log's copy) nor after an open (records decrypted
     * from the segments, then checkpointed) does the live heap hold a record's vector or text. The
     * index is exact and cosine, so it keeps unit-length copies, whose bytes differ; the collection
     * has no text index. The controls: the copies a get and a search hand out are on the heap, and
     * the scan finds them.
     */
    @Test
    void theRecordsVectorsAndTextAreNotOnTheHeapAfterWritesOrAnOpen() throws Exception {
        long seed = new Random().nextLong();
        System.out.println("HeapHygieneTest seed " + seed);
        Random random = new Random(seed);
        long vectorSeed = random.nextLong();
        byte[] maskedCanary =
                mask(
                        ("text-canary-"
                                        + Long.toHexString(random.nextLong())
                                        + "-"
                                        + Long.toHexString(seed))
                                .getBytes(StandardCharsets.US_ASCII));
        StoreOptions options = StoreOptions.defaults().withKeystore(tmp.resolve("keys"));
        int[] ids = {0, 1, 2, 100, 101, 102};
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options)) {
            load(
                    store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE)),
                    maskedCanary,
                    vectorSeed);
            Path written = dump("written");
            for (int i : ids) {
                assertEquals(
                        0,
                        count(written, vectorBytes(vectorSeed, i)),
                        "record " + i + "'s vector is on the heap after the write");
            }
            assertEquals(
                    0,
                    count(written, mask(maskedCanary)),
                    "a record's text is on the heap after the write");
            Files.delete(written);
        }
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options)) {
            VectorCollection c = store.collection("notes");
            Path opened = dump("opened");
            for (int i : ids) {
                assertEquals(
                        0,
                        count(opened, vectorBytes(vectorSeed, i)),
                        "record " + i + "'s vector is on the heap after the open");
            }
            assertEquals(
                    0,
                    count(opened, mask(maskedCanary)),
                    "a record's text is on the heap after the open");
            Files.delete(opened);

            VectorRecord got = c.get("b100").orElseThrow();
            List<SearchHit> hits = c.search(SearchRequest.of(vector(vectorSeed, 2), 1));
            assertEquals("a2", hits.get(0).record().id());
            Path holding = dump("holding");
            assertTrue(
                    count(holding, vectorBytes(vectorSeed, 100)) > 0,
                    "control: the copy a get handed out is found");
            assertTrue(
                    count(holding, mask(maskedCanary)) > 0,
                    "control: the text a search hit handed out is found");
            Files.delete(holding);
            java.lang.ref.Reference.reachabilityFence(got);
            java.lang.ref.Reference.reachabilityFence(hits);
        }
    }

    private static String subject(long seed) {
        return "subject-" + Long.toHexString(seed ^ 0x1234);
    }

    /**
     * Three records of others, then three of the subject, the canary text last: the last text a
     * thread analysed is what a reused token buffer would still hold. Nothing is kept.
     */
    private static void load(VectorCollection c, byte[] maskedCanary, long vectorSeed) {
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 100; i < 103; i++) {
            batch.add(
                    VectorRecord.builder("b" + i)
                            .subject("bob")
                            .vector(vector(vectorSeed, i))
                            .text("bob " + i)
                            .build());
        }
        c.upsertAll(batch);
        batch.clear();
        for (int i = 0; i < 3; i++) {
            batch.add(
                    VectorRecord.builder("a" + i)
                            .subject(subject(vectorSeed))
                            .vector(vector(vectorSeed, i))
                            .text(
                                    i == 2
                                            ? new String(
                                                    mask(maskedCanary), StandardCharsets.US_ASCII)
                                            : "note " + i)
                            .build());
        }
        c.upsertAll(batch);
    }

    private static float[] vector(long seed, int i) {
        Random r = new Random(seed * 31 + i);
        float[] v = new float[DIM];
        for (int j = 0; j < DIM; j++) {
            v[j] = (float) r.nextGaussian();
        }
        return v;
    }

    /** The first 8 floats of a vector as a heap dump writes them (big-endian). */
    private static byte[] vectorBytes(long seed, int i) {
        float[] v = vector(seed, i);
        ByteBuffer b = ByteBuffer.allocate(32);
        for (int j = 0; j < 8; j++) {
            b.putFloat(v[j]);
        }
        return b.array();
    }

    private static byte[] mask(byte[] in) {
        byte[] out = new byte[in.length];
        for (int i = 0; i < in.length; i++) {
            out[i] = (byte) (in[i] ^ MASK);
        }
        return out;
    }

    private Path dump(String name) throws IOException {
        Path file = tmp.resolve(name + ".hprof");
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                .dumpHeap(file.toString(), true);
        return file;
    }

    /** Occurrences of {@code needle} in a file, streamed. */
    static long count(Path file, byte[] needle) throws IOException {
        long hits = 0;
        byte[] buf = new byte[1 << 20];
        int carry = 0;
        try (InputStream in = Files.newInputStream(file)) {
            int n;
            while ((n = in.read(buf, carry, buf.length - carry)) > 0) {
                int end = carry + n;
                for (int i = 0; i + needle.length <= end; i++) {
                    if (buf[i] == needle[0] && matches(buf, i, needle)) {
                        hits++;
                    }
                }
                carry = Math.min(needle.length - 1, end);
                System.arraycopy(buf, end - carry, buf, 0, carry);
            }
        }
        return hits;
    }

    private static boolean matches(byte[] buf, int at, byte[] needle) {
        for (int j = 1; j < needle.length; j++) {
            if (buf[at + j] != needle[j]) {
                return false;
            }
        }
        return true;
    }
}
