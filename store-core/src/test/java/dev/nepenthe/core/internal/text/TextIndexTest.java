package dev.nepenthe.core.internal.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.IndexOutput;
import org.apache.lucene.store.NIOFSDirectory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The text index's own proofs can fail: a document deleted but not merged away, and a file holding
 * a forgotten term, are both reported; the encrypted directory reads back at any offset exactly
 * what was written, and a file whose key is destroyed cannot be read.
 */
class TextIndexTest {

    @TempDir Path tmp;

    private Keystore keystore;
    private KeyedHash hashes;

    @BeforeEach
    void keys() throws IOException {
        MasterKey mk = MasterKey.of(new byte[32]);
        keystore = Keystore.open(tmp.resolve("keys"), mk);
        hashes = new KeyedHash(mk);
    }

    @AfterEach
    void close() throws IOException {
        keystore.close();
    }

    private static final class Records implements TextIndex.Records {
        final Map<Integer, String> texts;

        Records(Map<Integer, String> texts) {
            this.texts = texts;
        }

        @Override
        public long version(int ordinal) {
            return texts.containsKey(ordinal) ? 100 + ordinal : -1;
        }

        @Override
        public String text(int ordinal) {
            return texts.get(ordinal);
        }

        @Override
        public int[] ordinals() {
            return texts.keySet().stream().mapToInt(Integer::intValue).toArray();
        }
    }

    @Test
    void aDeletedDocumentThatIsNotMergedAwayIsResidueUntilItIs() throws IOException {
        try (TextIndex t = TextIndex.open(tmp.resolve("text"), "english", keystore, hashes, "c1")) {
            t.add(1, 101, "copper lantern zorblattqx");
            // Enough neighbours that one delete stays under the share of deletes at which
            // Lucene's merge policy rewrites a segment by itself.
            for (int i = 2; i <= 12; i++) {
                t.add(i, 100 + i, i % 2 == 0 ? "copper harbor" : "harbor lantern");
            }
            t.publish();
            t.commit();
            List<String> terms = t.distinctiveTerms("copper lantern zorblattqx", 16);
            assertEquals("zorblattqx", terms.get(0), "the rarest term first: " + terms);
            t.delete(new int[] {1});
            t.publish();
            TextIndex.Residue before = t.residue(Map.of(1, 101L), terms);
            assertTrue(
                    before.problems().stream().anyMatch(p -> p.contains("not merged away")),
                    before.problems().toString());
            t.mergeDeletesAway();
            TextIndex.Residue after = t.residue(Map.of(1, 101L), terms);
            assertEquals(List.of(), after.problems());
            assertEquals(0, t.search("zorblattqx", null, 10).size());
            Map<Integer, String> left = new java.util.HashMap<>();
            for (int i = 2; i <= 12; i++) {
                left.put(i, i % 2 == 0 ? "copper harbor" : "harbor lantern");
            }
            assertTrue(t.verifyIntegrity(new Records(left), "text").isClean());
        }
    }

    @Test
    void aLiveDocumentOfAForgottenRecordAndAStrayFileAreResidue() throws IOException {
        try (TextIndex t =
                TextIndex.open(tmp.resolve("text"), "standard", keystore, hashes, "c1")) {
            t.add(1, 101, "quexleyvine notes");
            t.add(2, 102, "other notes");
            t.publish();
            TextIndex.Residue live = t.residue(Map.of(1, 101L), List.of("quexleyvine"));
            assertTrue(
                    live.problems().stream().anyMatch(p -> p.contains("live document")),
                    live.problems().toString());
            t.delete(new int[] {1});
            t.publish();
            t.mergeDeletesAway();
            assertEquals(List.of(), t.residue(Map.of(1, 101L), List.of("quexleyvine")).problems());
            // A file no segment names, holding the term (a copy a bug or a tool left behind).
            try (var dir =
                            new EncryptedDirectory(
                                    new NIOFSDirectory(tmp.resolve("text")),
                                    keystore,
                                    hashes,
                                    "c1");
                    IndexOutput out = dir.createOutput("stray.bin", IOContext.DEFAULT)) {
                byte[] b = "...quexleyvine...".getBytes(StandardCharsets.UTF_8);
                out.writeBytes(b, b.length);
            }
            TextIndex.Residue stray = t.residue(Map.of(1, 101L), List.of("quexleyvine"));
            assertTrue(
                    stray.problems().stream().anyMatch(p -> p.contains("stray.bin")),
                    stray.problems().toString());
        }
    }

    /**
     * A term dictionary keeps terms as shared prefixes and suffixes, so a forgotten term's bytes
     * can sit inside a survivor's term ("ander" in "wander"): not residue. (A byte scan of the live
     * segments flagged exactly this; the text benchmark found it on real definitions.)
     */
    @Test
    void aForgottenTermInsideASurvivingTermIsNotResidue() throws IOException {
        try (TextIndex t =
                TextIndex.open(tmp.resolve("text"), "standard", keystore, hashes, "c1")) {
            t.add(1, 101, "ander eleg");
            t.add(2, 102, "wander telegraphic elegant");
            t.add(3, 103, "wanderer telegraph");
            t.publish();
            t.commit();
            List<String> terms = t.distinctiveTerms("ander eleg", 16);
            t.delete(new int[] {1});
            t.publish();
            t.mergeDeletesAway();
            TextIndex.FolderScan bytes =
                    TextIndex.scanPlaintext(
                            tmp.resolve("text"),
                            keystore,
                            hashes,
                            "c1",
                            terms.stream().map(x -> x.getBytes(StandardCharsets.UTF_8)).toList());
            assertFalse(
                    bytes.hits().isEmpty(),
                    "precondition: the survivors' terms hold the forgotten bytes");
            assertEquals(List.of(), t.residue(Map.of(1, 101L), terms).problems());
        }
    }

    @Test
    void reconcileDropsWhatTheRecordsNoLongerHoldAndAddsWhatTheIndexMissed() throws IOException {
        try (TextIndex t =
                TextIndex.open(tmp.resolve("text"), "standard", keystore, hashes, "c1")) {
            t.add(1, 101, "alpha");
            t.add(2, 999, "beta from an older version");
            t.add(3, 103, "gamma");
            t.add(3, 103, "gamma"); // a duplicate
            t.publish();
            TextIndex.Reconciled r =
                    t.reconcile(new Records(Map.of(1, "alpha", 2, "beta", 3, "gamma", 4, "delta")));
            assertEquals(3, r.removed(), "the stale version and both duplicates");
            assertEquals(3, r.added(), "ordinals 2, 3 and 4");
            assertTrue(
                    t.verifyIntegrity(
                                    new Records(
                                            Map.of(1, "alpha", 2, "beta", 3, "gamma", 4, "delta")),
                                    "text")
                            .isClean());
            assertEquals(1, t.search("beta", null, 10).size());
            assertEquals(0, t.search("older", null, 10).size());
        }
    }

    @Test
    void theEncryptedDirectoryReadsBackAnySliceAndForgetsWithItsKey() throws IOException {
        long seed = Seeds.draw("theEncryptedDirectoryReadsBackAnySliceAndForgetsWithItsKey");
        Random rnd = new Random(seed);
        byte[] data = new byte[100_000 + rnd.nextInt(50_000)];
        rnd.nextBytes(data);
        Path folder = tmp.resolve("dir");
        Files.createDirectories(folder);
        try (var dir = new EncryptedDirectory(new NIOFSDirectory(folder), keystore, hashes, "c1")) {
            try (IndexOutput out = dir.createOutput("f", IOContext.DEFAULT)) {
                int at = 0;
                while (at < data.length) {
                    int n = Math.min(data.length - at, rnd.nextInt(20_000));
                    if (rnd.nextBoolean() && n > 0) {
                        out.writeBytes(data, at, n);
                    } else if (at < data.length) {
                        out.writeByte(data[at]);
                        n = 1;
                    }
                    at += n;
                }
                java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                crc.update(data);
                assertEquals(
                        crc.getValue(), out.getChecksum(), "the checksum is over the plaintext");
            }
            assertEquals(data.length, dir.fileLength("f"));
            byte[] raw = Files.readAllBytes(folder.resolve("f"));
            assertEquals(
                    -1,
                    dev.nepenthe.core.internal.io.ForensicScan.indexOf(
                            raw, java.util.Arrays.copyOfRange(data, 500, 532)),
                    "the file on disk is not the plaintext");
            try (IndexInput in = dir.openInput("f", IOContext.DEFAULT)) {
                for (int i = 0; i < 200; i++) {
                    int off = rnd.nextInt(data.length);
                    int len = rnd.nextInt(Math.min(30_000, data.length - off) + 1);
                    boolean sliced = rnd.nextBoolean();
                    IndexInput view = sliced ? in.slice("s", off, len) : in.clone();
                    int start = rnd.nextInt(len + 1);
                    byte[] got = new byte[len - start];
                    view.seek(sliced ? start : off + start);
                    view.readBytes(got, 0, got.length);
                    assertTrue(
                            java.util.Arrays.equals(
                                    data, off + start, off + len, got, 0, got.length),
                            "bytes at " + (off + start) + "+" + got.length + Seeds.replay(seed));
                }
            }
            Path copy = tmp.resolve("copy");
            Files.createDirectories(copy);
            Files.copy(folder.resolve("f"), copy.resolve("f"));
            dir.deleteFile("f");
            try (var old =
                    new EncryptedDirectory(new NIOFSDirectory(copy), keystore, hashes, "c1")) {
                IOException e =
                        assertThrows(
                                IOException.class, () -> old.openInput("f", IOContext.DEFAULT));
                assertTrue(e.getMessage().contains("key is not in the keystore"), e.getMessage());
            }
        }
    }
}
