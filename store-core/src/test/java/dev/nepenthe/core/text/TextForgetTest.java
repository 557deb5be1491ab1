package dev.nepenthe.core.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
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
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import dev.nepenthe.core.internal.crypto.MasterKey;
import dev.nepenthe.core.internal.engine.StoreFolders;
import dev.nepenthe.core.internal.io.ForensicScan;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.testing.Seeds;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forgetting text: the text index's surface purges and proves (a byte scan of the decrypted files,
 * with a control that finds the tokens before the forget; old files unreadable after it), no search
 * mode finds the forgotten text, and the lexical probe flags a surviving near copy that the vector
 * probe cannot see.
 */
class TextForgetTest {

    @TempDir Path tmp;

    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Tokens that occur only in alice's texts (the english analyzer leaves them as they are). */
    private static final List<String> TOKENS = List.of("zorblattqx", "quexleyvine", "vormithrax");

    private static final String[] WORDS =
            "river mountain ledger invoice harbor lantern orchard violin glacier copper".split(" ");

    private StoreOptions options() {
        return StoreOptions.defaults()
                .withKeystore(tmp.resolve("keys"))
                .withEmbedder(new WordHashEmbedder());
    }

    private static CollectionSpec spec() {
        return CollectionSpec.of("notes", WordHashEmbedder.DIM, Metric.COSINE)
                .withTextIndex("english")
                .withEmbedder("word-hash-64");
    }

    private TextIndex.FolderScan scan(Path folder, List<String> tokens) throws IOException {
        String id =
                StoreFolders.readMeta(tmp.resolve("data/collections/notes/collection.meta")).id();
        MasterKey mk = MasterKey.resolve(tmp.resolve("keys/master.key"), false);
        List<byte[]> needles =
                tokens.stream().map(t -> t.getBytes(StandardCharsets.UTF_8)).toList();
        // A second handle on the keystore file, read-only in effect: the store's own stays open.
        try (Keystore ks = Keystore.open(tmp.resolve("keys"), mk)) {
            return TextIndex.scanPlaintext(folder, ks, new KeyedHash(mk), id, needles);
        }
    }

    private static List<byte[]> bytes(List<String> tokens) {
        return tokens.stream().map(t -> t.getBytes(StandardCharsets.UTF_8)).toList();
    }

    @Test
    void forgettingASubjectRemovesItsTextFromEveryFileAndEverySearchMode()
            throws IOException, InterruptedException {
        long seed = Seeds.draw("forgettingASubjectRemovesItsTextFromEveryFileAndEverySearchMode");
        Random rnd = new Random(seed);
        Path text = tmp.resolve("data/collections/notes/text");
        Path before = tmp.resolve("text-before");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(spec());
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                StringBuilder sb = new StringBuilder();
                for (int w = 0; w < 8; w++) {
                    sb.append(WORDS[rnd.nextInt(WORDS.length)]).append(' ');
                }
                batch.add(
                        VectorRecord.builder("r" + i)
                                .subject("s" + (i % 7))
                                .text(sb.toString().trim())
                                .build());
            }
            c.upsertAll(batch);
            // alice's texts arrive one by one, as notes would: several segments hold them.
            for (int i = 0; i < TOKENS.size(); i++) {
                c.upsert(
                        VectorRecord.builder("alice-" + i)
                                .subject("alice")
                                .text(
                                        "meeting notes "
                                                + TOKENS.get(i)
                                                + " harbor "
                                                + TOKENS.get((i + 1) % TOKENS.size()))
                                .build());
                c.upsert(
                        VectorRecord.builder("x" + i)
                                .subject("s1")
                                .text(WORDS[i] + " " + WORDS[i + 1])
                                .build());
            }
            c.checkpoint();
            // Controls: the tokens are in the decrypted files, not in the raw bytes (encrypted at
            // rest), and every search mode finds alice's records.
            TextIndex.FolderScan control = scan(text, TOKENS);
            assertFalse(
                    control.hits().isEmpty(),
                    "control: the decrypted files hold alice's tokens before the forget");
            assertTrue(
                    ForensicScan.filesContaining(List.of(text), bytes(TOKENS)).isEmpty(),
                    "the text index's files are encrypted: no token in their raw bytes");
            assertTrue(
                    c.search(SearchRequest.keyword(TOKENS.get(0), 5)).stream()
                            .anyMatch(h -> h.id().startsWith("alice")));
            assertTrue(
                    c.search(SearchRequest.hybrid(TOKENS.get(1), 5)).stream()
                            .anyMatch(h -> h.id().startsWith("alice")));
            TestFiles.copyTree(text, before);

            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("alice"),
                                                    "forget-alice",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(
                    OperationState.SEALED,
                    op.state(),
                    op.note() + " " + op.suspects() + Seeds.replay(seed));
            SurfaceOutcome surface =
                    op.surfaces().stream()
                            .filter(s -> s.surface().equals("collection:notes/text"))
                            .findFirst()
                            .orElseThrow(
                                    () ->
                                            new AssertionError(
                                                    "no text surface in " + op.surfaces()));
            assertTrue(surface.clean(), surface.toString());
            assertEquals(
                    TOKENS.size(), surface.purged(), "the merge dropped alice's deleted documents");

            assertTrue(
                    scan(text, TOKENS).hits().isEmpty(),
                    "no decrypted file holds a token after the forget");
            assertTrue(ForensicScan.filesContaining(List.of(text), bytes(TOKENS)).isEmpty());
            for (String t : TOKENS) {
                for (SearchRequest r :
                        List.of(
                                SearchRequest.keyword(t, 100),
                                SearchRequest.hybrid(t, 100),
                                SearchRequest.semantic("meeting notes " + t, 100))) {
                    assertFalse(
                            c.search(r).stream().anyMatch(h -> h.id().startsWith("alice")),
                            r + " found alice");
                }
            }
            // The copy taken before: every file that held a token can no longer be decrypted.
            TextIndex.FolderScan old = scan(before, TOKENS);
            assertTrue(old.hits().isEmpty(), "an old copy reveals nothing: " + old.hits());
            assertTrue(
                    old.unreadable().containsAll(control.hits().keySet()),
                    "files that held the tokens "
                            + control.hits().keySet()
                            + " are unreadable: "
                            + old.unreadable());
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r.toString());
            }
            assertEquals(63, c.size(), "60 + 3 bystanders survive");
        }
    }

    @Test
    void theLexicalProbeFlagsASurvivingNearCopyTheVectorProbeCannotSee()
            throws IOException, InterruptedException {
        WordHashEmbedder e = new WordHashEmbedder();
        float[] far = new float[WordHashEmbedder.DIM];
        float[] near = new float[WordHashEmbedder.DIM];
        far[1] = 1;
        near[2] = 1;
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options())) {
            VectorCollection c = store.createCollection(spec());
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("alice-trip")
                                    .subject("alice")
                                    .vector(near)
                                    .text(
                                            "Zorblatt Quexley flew flight QX7741 from Reykjavik to"
                                                    + " Kathmandu on the ninth of March, passport"
                                                    + " 88123")
                                    .build(),
                            // A copy made by hand into another record: no derivedFrom, a vector far
                            // from the
                            // original's, most of its rare words.
                            VectorRecord.builder("travel-log")
                                    .subject("ops")
                                    .vector(far)
                                    .text(
                                            "QX7741 Reykjavik-Kathmandu: passenger Zorblatt"
                                                    + " Quexley, passport 88123, March")
                                    .build(),
                            // Shares two common words only: not a suspect.
                            VectorRecord.builder("postcard")
                                    .subject("ops")
                                    .vector(far.clone())
                                    .text("Reykjavik is lovely in March")
                                    .build(),
                            VectorRecord.builder("other")
                                    .subject("ops")
                                    .text("copper lantern harbor")
                                    .build()));
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("alice"),
                                                    "forget-alice",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(OperationState.NEEDS_REVIEW, op.state(), op.toString());
            Set<String> flagged =
                    op.suspects().stream().map(Suspect::recordId).collect(Collectors.toSet());
            assertEquals(Set.of("travel-log"), flagged, "suspects: " + op.suspects());
            Suspect s = op.suspects().get(0);
            assertEquals("text-residue", s.reason());
            assertEquals("alice-trip", s.relatedTo());
            assertTrue(
                    s.score() >= 0.6 && s.score() <= 1,
                    "share of the distinctive terms: " + s.score());
            // Forgetting the copy too clears the review, as an operator would.
            store.awaitOperation(
                    store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.records("travel-log"),
                                            "forget-copy",
                                            "residue"))
                            .id(),
                    WAIT);
            ForgetOperation again = store.reverify(op.id());
            again = store.awaitOperation(again.id(), WAIT);
            assertEquals(OperationState.SEALED, again.state(), again.toString());
            List<SearchHit> left = c.search(SearchRequest.keyword("Zorblatt Quexley QX7741", 10));
            assertTrue(
                    left.isEmpty(),
                    "nothing holds the forgotten words: "
                            + left.stream().map(SearchHit::id).toList());
            assertEquals(0, e.calls, "records given vectors are not embedded");
        }
    }

    /**
     * A copy of the data folder taken before a forget (text folder included), opened with the
     * keystore as it is after: the forget destroyed the keys of the copy's segments that held the
     * subject's text, so the index is rebuilt from the records that survive, and says why.
     */
    @Test
    void aDataFolderCopiedBeforeAForgetOpensWithItsTextIndexRebuiltFromTheSurvivors()
            throws IOException, InterruptedException {
        long seed =
                Seeds.draw(
                        "aDataFolderCopiedBeforeAForgetOpensWithItsTextIndexRebuiltFromTheSurvivors");
        Random rnd = new Random(seed);
        Path data = tmp.resolve("data");
        Path copy = tmp.resolve("data-before");
        // The oracle: each survivor's text, by id.
        java.util.Map<String, String> survivors = new java.util.TreeMap<>();
        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.createCollection(spec());
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                StringBuilder sb = new StringBuilder();
                for (int w = 0; w < 6; w++) {
                    sb.append(WORDS[rnd.nextInt(WORDS.length)]).append(' ');
                }
                String t = sb.toString().trim();
                survivors.put("r" + i, t);
                batch.add(VectorRecord.builder("r" + i).subject("s" + (i % 5)).text(t).build());
            }
            c.upsertAll(batch);
            for (int i = 0; i < TOKENS.size(); i++) {
                c.upsert(
                        VectorRecord.builder("alice-" + i)
                                .subject("alice")
                                .text("meeting notes " + TOKENS.get(i) + " harbor")
                                .build());
            }
        }
        TestFiles.copyTree(data, copy);
        assertFalse(
                scan(copy.resolve("collections/notes/text"), TOKENS).hits().isEmpty(),
                "control: the copy's decrypted text files hold alice's tokens before the forget");

        try (Nepenthe store = Nepenthe.open(data, options())) {
            ForgetOperation op =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("alice"),
                                                    "forget-alice",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            assertEquals(
                    OperationState.SEALED,
                    op.state(),
                    op.note() + " " + op.suspects() + Seeds.replay(seed));
        }
        TestFiles.deleteTree(data);
        java.nio.file.Files.move(copy, data);

        try (Nepenthe store = Nepenthe.open(data, options())) {
            VectorCollection c = store.collection("notes");
            var recovery = c.openReport().text();
            assertTrue(
                    recovery.rebuilt(),
                    "the copy's text index cannot be read: rebuilt, " + recovery);
            assertTrue(
                    recovery.rebuiltBecause() != null && !recovery.rebuiltBecause().isBlank(),
                    recovery.toString());
            for (String t : TOKENS) {
                assertFalse(
                        recovery.rebuiltBecause().contains(t),
                        "the reason names no content: " + recovery);
            }
            assertFalse(recovery.rebuiltBecause().contains("alice"), recovery.toString());
            assertEquals(
                    survivors.size(),
                    recovery.added(),
                    "every survivor's text indexed again: " + recovery);
            assertEquals(survivors.size(), c.size(), "alice's records left the copy at open");

            // Every word finds exactly the survivors whose text holds it; alice's tokens find
            // nothing.
            for (String w : WORDS) {
                Set<String> expected =
                        survivors.entrySet().stream()
                                .filter(e -> List.of(e.getValue().split(" ")).contains(w))
                                .map(java.util.Map.Entry::getKey)
                                .collect(Collectors.toSet());
                Set<String> got =
                        c.search(SearchRequest.keyword(w, 100)).stream()
                                .map(SearchHit::id)
                                .collect(Collectors.toSet());
                assertEquals(expected, got, "keyword '" + w + "'" + Seeds.replay(seed));
            }
            for (String t : TOKENS) {
                assertTrue(c.search(SearchRequest.keyword(t, 100)).isEmpty(), t);
            }
            Path text = data.resolve("collections/notes/text");
            assertTrue(
                    scan(text, TOKENS).hits().isEmpty(),
                    "no decrypted file of the rebuilt index holds a token");
            assertTrue(ForensicScan.filesContaining(List.of(text), bytes(TOKENS)).isEmpty());
            for (IntegrityReport r : c.verifyIntegrity().values()) {
                assertTrue(r.isClean(), r.toString());
            }
        }
        // The rebuilt index was committed: the next open reads it as it is.
        try (Nepenthe store = Nepenthe.open(data, options())) {
            var recovery = store.collection("notes").openReport().text();
            assertFalse(recovery.rebuilt(), recovery.toString());
            assertEquals(0, recovery.added() + recovery.removed(), recovery.toString());
        }
    }
}
