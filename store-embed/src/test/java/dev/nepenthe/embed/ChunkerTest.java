package dev.nepenthe.embed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.model.embedding.onnx.HuggingFaceTokenCountEstimator;
import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The chunker against oracles that do not share its code: langchain4j's own token count estimator
 * (the model's tokenizer through another door) for sizes, a coverage map of the document's
 * characters, and texts built so the exact overlap and the cut points are known.
 */
class ChunkerTest {

    /** Counts as the model's tokenizer does, through langchain4j: the independent measure. */
    private static final HuggingFaceTokenCountEstimator ESTIMATOR =
            new HuggingFaceTokenCountEstimator();

    /** Common English words, each one token of the MiniLM vocabulary (checked below). */
    private static final String[] ONE_TOKEN_WORDS =
            ("the river house garden light water stone window city road"
                            + " winter summer paper market music letter school table night morning")
                    .split(" ");

    private static final String[] PROSE_WORDS =
            ("the a of forgetting vector store embeddings tokenization unbelievably river København"
                 + " naïve café 日本語 😀 data subject erasure request's (draft) e-mail GDPR-17 x2"
                 + " ...")
                    .split(" ");

    /**
     * A random document: words, punctuation, sentence ends, line breaks, blank lines, odd
     * characters.
     */
    private static String prose(Random rnd, int words) {
        StringBuilder sb = new StringBuilder();
        if (rnd.nextInt(4) == 0) {
            sb.append("  \n");
        }
        for (int i = 0; i < words; i++) {
            sb.append(PROSE_WORDS[rnd.nextInt(PROSE_WORDS.length)]);
            int r = rnd.nextInt(40);
            sb.append(
                    r == 0
                            ? ".\n\n"
                            : r == 1 ? "\n" : r < 5 ? ". " : r == 5 ? ", " : r == 6 ? "\t" : " ");
        }
        if (rnd.nextBoolean()) {
            sb.append("end");
        }
        return sb.toString();
    }

    /** Every chunk is a verbatim piece; together they cover the text, in order, without gaps. */
    private static void assertCovers(String text, List<Chunker.Chunk> chunks, String why) {
        boolean[] covered = new boolean[text.length()];
        int prevStart = -1;
        int prevEnd = 0;
        for (int i = 0; i < chunks.size(); i++) {
            Chunker.Chunk c = chunks.get(i);
            assertEquals(i, c.index(), why);
            assertEquals(text.substring(c.start(), c.end()), c.text(), why + " chunk " + i);
            assertTrue(
                    c.start() > prevStart && c.end() > prevEnd,
                    why + " chunk " + i + " is not after the one before");
            assertTrue(c.start() <= prevEnd, why + " gap before chunk " + i);
            for (int p = c.start(); p < c.end(); p++) {
                covered[p] = true;
            }
            prevStart = c.start();
            prevEnd = c.end();
        }
        for (int p = 0; p < covered.length; p++) {
            assertTrue(covered[p], why + " character " + p + " is in no chunk");
        }
    }

    @Test
    void randomDocumentsAreCoveredInOrderAndNoChunkExceedsItsSize() {
        long seed = Seeds.draw("ChunkerTest.randomDocuments");
        Random rnd = new Random(seed);
        for (int round = 0; round < 60; round++) {
            String text = prose(rnd, 1 + rnd.nextInt(400));
            boolean tokens = rnd.nextBoolean();
            int size = tokens ? 8 + rnd.nextInt(120) : 1 + rnd.nextInt(300);
            int overlap = rnd.nextInt(size);
            Chunker chunker = tokens ? Chunker.tokens(size, overlap) : Chunker.chars(size, overlap);
            String why = chunker + " round " + round + Seeds.replay(seed);
            List<Chunker.Chunk> chunks = chunker.split(text);
            assertTrue(!chunks.isEmpty(), why);
            assertCovers(text, chunks, why);
            for (int i = 0; i < chunks.size(); i++) {
                Chunker.Chunk c = chunks.get(i);
                int measured =
                        tokens
                                ? ESTIMATOR.estimateTokenCountInText(c.text())
                                : c.text().codePointCount(0, c.text().length());
                assertEquals(measured, c.size(), why + " chunk " + i + " reports another size");
                assertTrue(measured <= size, why + " chunk " + i + " has " + measured);
                if (i > 0) {
                    // What two chunks share is at most the overlap asked for.
                    String shared = text.substring(c.start(), chunks.get(i - 1).end());
                    int sharedUnits =
                            tokens
                                    ? ESTIMATOR.estimateTokenCountInText(shared)
                                    : shared.codePointCount(0, shared.length());
                    assertTrue(
                            sharedUnits <= overlap,
                            why + " chunks " + (i - 1) + " and " + i + " share " + sharedUnits);
                }
            }
        }
    }

    @Test
    void chunksOfPlainWordsHaveExactlyTheSizeAndOverlapAskedFor() {
        for (String w : ONE_TOKEN_WORDS) {
            assertEquals(
                    1,
                    ESTIMATOR.estimateTokenCountInText(w),
                    "test vocabulary: '" + w + "' is one token");
        }
        long seed = Seeds.draw("ChunkerTest.exactOverlap");
        Random rnd = new Random(seed);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            sb.append(ONE_TOKEN_WORDS[rnd.nextInt(ONE_TOKEN_WORDS.length)]).append(' ');
        }
        String text = sb.toString();
        // Tokens: every token starts a word and every cut is a space, so the window decides alone.
        for (int[] so : new int[][] {{64, 16}, {50, 0}, {10, 9}, {1, 0}}) {
            List<Chunker.Chunk> chunks = Chunker.tokens(so[0], so[1]).split(text);
            assertCovers(text, chunks, "tokens " + so[0] + "/" + so[1]);
            assertEquals(
                    (int) Math.ceil((1000.0 - so[1]) / (so[0] - so[1])),
                    chunks.size(),
                    "chunks" + Seeds.replay(seed));
            for (int i = 0; i < chunks.size(); i++) {
                if (i < chunks.size() - 1) {
                    assertEquals(
                            so[0],
                            ESTIMATOR.estimateTokenCountInText(chunks.get(i).text()),
                            "chunk " + i);
                }
                if (i > 0) {
                    String shared = text.substring(chunks.get(i).start(), chunks.get(i - 1).end());
                    assertEquals(
                            so[1],
                            ESTIMATOR.estimateTokenCountInText(shared),
                            "overlap before chunk " + i);
                }
            }
        }
        // Characters: two-letter words and a space, so a word starts every 3 characters.
        String pairs = "ab cd ef gh ij kl mn op ".repeat(40);
        List<Chunker.Chunk> chunks = Chunker.chars(30, 9).split(pairs);
        assertCovers(pairs, chunks, "chars 30/9");
        for (int i = 0; i < chunks.size() - 1; i++) {
            assertEquals(30, chunks.get(i).text().length(), "chunk " + i);
            assertEquals(
                    9, chunks.get(i).end() - chunks.get(i + 1).start(), "overlap after chunk " + i);
            assertTrue(
                    chunks.get(i + 1).text().charAt(0) != ' ',
                    "chunk " + (i + 1) + " starts at a word");
        }
    }

    @Test
    void chunksEndAtTheBestBoundaryInTheirWindow() {
        // Paragraphs of at most 65 characters (13 tokens), each a sentence: the second half of a
        // 130-character (30-token) window always holds a paragraph's end, so every chunk but the
        // last ends with a blank line.
        Random rnd = new Random(7);
        StringBuilder sb = new StringBuilder();
        for (int p = 0; p < 30; p++) {
            int len = 40 + rnd.nextInt(21);
            StringBuilder para = new StringBuilder();
            while (para.length() < len - 6) {
                para.append(ONE_TOKEN_WORDS[rnd.nextInt(ONE_TOKEN_WORDS.length)]).append(' ');
            }
            sb.append(para.toString().strip()).append(".\n\n");
        }
        String text = sb.toString();
        for (Chunker chunker : List.of(Chunker.chars(130, 0), Chunker.tokens(30, 0))) {
            List<Chunker.Chunk> chunks = chunker.split(text);
            assertCovers(text, chunks, chunker.toString());
            for (int i = 0; i < chunks.size() - 1; i++) {
                assertTrue(
                        chunks.get(i).text().endsWith(".\n\n"),
                        chunker + " chunk " + i + " ends mid-paragraph");
            }
        }
        // No blank line in reach: a sentence end is next best, then a space.
        String sentences = "one two three. four five six seven eight nine ten";
        assertEquals("one two three. ", Chunker.chars(20, 0).split(sentences).get(0).text());
        assertEquals("four five six seven ", Chunker.chars(20, 0).split(sentences).get(1).text());
        // A word longer than the window is cut inside, and nothing is lost.
        String longWord = "x".repeat(45);
        List<Chunker.Chunk> cut = Chunker.chars(20, 5).split(longWord);
        assertCovers(longWord, cut, "long word");
        cut.forEach(c -> assertTrue(c.text().length() <= 20));
    }

    @Test
    void charactersAreCodePointsAndNeverSplitASurrogatePair() {
        String text = "😀".repeat(25);
        List<Chunker.Chunk> chunks = Chunker.chars(10, 3).split(text);
        assertCovers(text, chunks, "emoji");
        for (Chunker.Chunk c : chunks) {
            assertTrue(
                    c.size() <= 10 && c.text().codePointCount(0, c.text().length()) == c.size(),
                    c.toString());
            assertTrue(
                    !Character.isLowSurrogate(c.text().charAt(0)),
                    "chunk starts inside a pair: " + c);
        }
    }

    @Test
    void blankTextHasNoChunksAndArgumentsAreChecked() {
        assertEquals(List.of(), Chunker.tokens(10, 2).split("  \n\t "));
        assertEquals(List.of(), Chunker.chars(10, 2).split(""));
        IllegalArgumentException size =
                assertThrows(IllegalArgumentException.class, () -> Chunker.tokens(0, 0));
        assertEquals("chunk size: expected 1 or more tokens, got 0", size.getMessage());
        IllegalArgumentException over =
                assertThrows(IllegalArgumentException.class, () -> Chunker.chars(10, 10));
        assertEquals(
                "chunk overlap: expected 0 to 9 chars (less than the chunk size 10), got 10",
                over.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Chunker.chars(10, -1));
        assertThrows(NullPointerException.class, () -> Chunker.of(null, 10, 1));
        assertThrows(NullPointerException.class, () -> Chunker.chars(10, 1).split(null));
    }

    @Test
    void recordsCarryTheChunkIdsSourceAndMetadata() {
        Random rnd = new Random(Seeds.draw("ChunkerTest.records"));
        String text = prose(rnd, 300);
        Chunker chunker = Chunker.tokens(40, 8);
        SourceRef source = new SourceRef("file", "notes/a b.md", 3);
        List<Chunker.Chunk> chunks = chunker.split(text);
        List<VectorRecord> records =
                chunker.records(source, "acme", "alice", text, Map.of("lang", "en", "year", 2024));
        assertEquals(chunks.size(), records.size());
        assertTrue(
                records.size() > 3,
                "the document should make several chunks, made " + records.size());
        for (int i = 0; i < records.size(); i++) {
            VectorRecord r = records.get(i);
            assertEquals("file:notes/a b.md:v3#" + i, r.id());
            assertEquals(source, r.source());
            assertEquals("acme", r.tenant());
            assertEquals("alice", r.subject());
            assertEquals(chunks.get(i).text(), r.text());
            assertNull(r.vector(), "the collection's embedder embeds the text");
            assertEquals(
                    Map.of(
                            "chunk",
                            (long) i,
                            "chunks",
                            (long) records.size(),
                            "lang",
                            "en",
                            "year",
                            2024L),
                    r.metadata());
        }
        List<VectorRecord> nobody =
                chunker.records(source, VectorRecord.DEFAULT_TENANT, null, text, null);
        assertNull(nobody.get(0).subject());
        assertEquals(
                Map.of("chunk", 0L, "chunks", (long) records.size()), nobody.get(0).metadata());
        assertEquals(List.of(), chunker.records(source, "acme", null, " ", null));
        IllegalArgumentException clash =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> chunker.records(source, "acme", null, text, Map.of("chunk", 1)));
        assertTrue(
                clash.getMessage().contains("expected keys other than 'chunk' and 'chunks'"),
                clash.getMessage());
        assertThrows(
                NullPointerException.class, () -> chunker.records(null, "acme", null, text, null));
    }

    @Test
    void theChunkerCountsWithTheModelsOwnTokenizer() throws IOException {
        // The estimator reads langchain4j's bert-tokenizer.json; the chunker the model's file. Same
        // bytes.
        try (InputStream model = Chunker.class.getResourceAsStream(Chunker.TOKENIZER_RESOURCE);
                InputStream bert =
                        HuggingFaceTokenCountEstimator.class.getResourceAsStream(
                                "/bert-tokenizer.json")) {
            assertArrayEquals(bert.readAllBytes(), model.readAllBytes());
        }
        String s = "Forgetting unbelievably naïve 😀 data.";
        assertEquals(ESTIMATOR.estimateTokenCountInText(s), Chunker.tokens(5, 0).count(s));
        assertEquals(s.codePointCount(0, s.length()), Chunker.chars(5, 0).count(s));
    }
}
