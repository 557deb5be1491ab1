package dev.nepenthe.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.embed.Chunker;
import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.server.cli.ClientCommandsTest.Run;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nepenthe ingest --folder} and {@code nepenthe search --text} against a server whose store
 * embeds with the bundled model: the records the folder became are checked one by one against what
 * the Chunker makes of each file on its own (the oracle: ids, text, source, metadata, subject, and
 * their count per file), and what the search command prints against the store's own search. One
 * server and one model load for the class.
 */
class FolderIngestTest {

    @TempDir static Path tmp;

    private static Nepenthe store;
    private static NepentheServer server;
    private static Path tokenFile;
    private static Path folder;

    /**
     * The documents the folder holds, by the path they are stored under; others are there to be
     * skipped.
     */
    private static final Map<String, String> DOCUMENTS = new LinkedHashMap<>();

    static {
        DOCUMENTS.put(
                "guide.md",
                """
                # Harbor guide

                The lighthouse lantern is cleaned every Tuesday by the night crew. Boats from the northern canal
                wait two days at the copper pier before they unload.

                ## Invoices

                The dredging ledger is kept in the harbor master's office and copied to the archive each week.
                """
                        .repeat(4));
        DOCUMENTS.put(
                "notes/orchard.txt",
                "Prune the walnut trees in late winter, before the sap rises. ".repeat(30));
        DOCUMENTS.put("notes/deep/short.MD", "A single short note about comets.");
        DOCUMENTS.put("notes/blank.txt", "   \n\n  ");
    }

    @BeforeAll
    static void start() throws IOException {
        store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        NepentheServer.withBundledEmbedders(
                                StoreOptions.defaults().withKeystore(tmp.resolve("keys"))));
        Path tokens = tmp.resolve("keys").resolve("server").resolve("tokens.conf");
        tokenFile = tokens.resolveSibling("operator.token");
        NepentheServer.bootstrapTokens(tokens, tokenFile);
        server =
                NepentheServer.start(
                        store, new NepentheServer.Options().listen("127.0.0.1", 0).tokens(tokens));
        folder = tmp.resolve("docs");
        for (Map.Entry<String, String> d : DOCUMENTS.entrySet()) {
            Path f = folder.resolve(d.getKey());
            Files.createDirectories(f.getParent());
            Files.writeString(f, d.getValue());
        }
        // Skipped: another extension, a hidden folder, a hidden file.
        Files.writeString(folder.resolve("notes/image.pdf"), "not text");
        Files.createDirectories(folder.resolve(".git"));
        Files.writeString(folder.resolve(".git/HEAD.md"), "ref: refs/heads/main");
        Files.writeString(folder.resolve("notes/.draft.md"), "a hidden draft");
    }

    @AfterAll
    static void stop() throws IOException {
        server.close();
    }

    private static Run client(String command, String... args) {
        List<String> all =
                new ArrayList<>(
                        List.of(
                                command,
                                "--server",
                                "127.0.0.1:" + server.port(),
                                "--token-file",
                                tokenFile.toString()));
        all.addAll(List.of(args));
        return ClientCommandsTest.nepenthe(all.toArray(String[]::new));
    }

    @Test
    void aFolderBecomesOneRecordPerChunkAsTheChunkerCutsEachFile() {
        Run run =
                client(
                        "ingest",
                        "--folder",
                        folder.toString(),
                        "--collection",
                        "docs",
                        "--create",
                        "384",
                        "--text-analyzer",
                        "english",
                        "--embedder",
                        MiniLmEmbedder.NAME,
                        "--chunk-size",
                        "40",
                        "--chunk-overlap",
                        "8",
                        "--source-version",
                        "3",
                        "--subject",
                        "alice",
                        "--batch",
                        "7",
                        "-q");
        assertEquals(0, run.exit(), run.err());
        assertTrue(
                run.out()
                        .contains(
                                "created collection 'docs' (dimension 384, cosine, exact index,"
                                        + " text index english, embedder all-minilm-l6-v2)"),
                run.out());

        VectorCollection docs = store.collection("docs");
        Chunker chunker = Chunker.tokens(40, 8);
        int expectedTotal = 0;
        for (Map.Entry<String, String> d : DOCUMENTS.entrySet()) {
            SourceRef source = new SourceRef("file", d.getKey(), 3);
            List<VectorRecord> expected =
                    chunker.records(
                            source, VectorRecord.DEFAULT_TENANT, "alice", d.getValue(), null);
            assertEquals(chunker.split(d.getValue()).size(), expected.size());
            for (VectorRecord e : expected) {
                VectorRecord stored =
                        docs.get(e.id())
                                .orElseThrow(() -> new AssertionError(e.id() + " was not stored"));
                assertEquals(e.text(), stored.text(), e.id());
                assertEquals(source, stored.source(), e.id());
                assertEquals("alice", stored.subject(), e.id());
                assertEquals(e.metadata(), stored.metadata(), e.id());
                assertEquals(
                        MiniLmEmbedder.DIMENSION, stored.vector().length, "embedded by the server");
            }
            // No chunk beyond the file's own count.
            assertTrue(docs.get(Chunker.chunkId(source, expected.size())).isEmpty(), d.getKey());
            expectedTotal += expected.size();
        }
        assertTrue(
                expectedTotal > 10, "the documents should make many chunks, made " + expectedTotal);
        assertEquals(
                expectedTotal, docs.size(), "nothing else was stored (no pdf, no hidden file)");
        assertTrue(
                run.out().contains("stored " + expectedTotal + " chunks of 4 files from " + folder),
                run.out());
        assertTrue(run.out().contains("1 files had no text"), run.out());

        // Search by text: the command prints what the store's own search finds, in its order.
        for (String mode : List.of("keyword", "hybrid", "vector")) {
            Run search =
                    client(
                            "search",
                            "--collection",
                            "docs",
                            "--text",
                            "lighthouse lantern",
                            "--mode",
                            mode,
                            "-k",
                            "3");
            assertEquals(0, search.exit(), search.err());
            SearchRequest q =
                    new SearchRequest(
                            null,
                            "lighthouse lantern",
                            SearchRequest.Mode.valueOf(mode.toUpperCase(java.util.Locale.ROOT)),
                            3,
                            VectorRecord.DEFAULT_TENANT,
                            null,
                            null,
                            dev.nepenthe.core.index.SearchParams.DEFAULTS);
            List<String> printed =
                    search.out().lines().skip(1).map(l -> l.trim().split("\\s+")[2]).toList();
            assertTrue(
                    !printed.isEmpty() && printed.stream().allMatch(id -> id.startsWith("file:")),
                    search.out());
            assertEquals(
                    docs.search(q).stream().map(SearchHit::id).toList(),
                    printed,
                    mode + ":\n" + search.out());
        }
    }

    @Test
    void misuseAndACollectionWithoutEmbedderAreOneLine() {
        Run both =
                client("ingest", "--folder", folder.toString(), "x.jsonl", "--collection", "docs");
        assertEquals(2, both.exit(), both.err());
        assertTrue(
                both.err().contains("expected FILE.jsonl or --folder DIR, got both"), both.err());
        Run stray = client("ingest", "x.jsonl", "--collection", "docs", "--chunk-size", "10");
        assertEquals(2, stray.exit());
        assertTrue(stray.err().contains("expected only with --folder"), stray.err());
        Run overlap =
                client(
                        "ingest",
                        "--folder",
                        folder.toString(),
                        "--collection",
                        "docs",
                        "--chunk-size",
                        "10",
                        "--chunk-overlap",
                        "10");
        assertEquals(2, overlap.exit());
        assertTrue(
                overlap.err()
                        .contains(
                                "chunk overlap: expected 0 to 9 tokens (less than the chunk size"
                                        + " 10), got 10"),
                overlap.err());
        store.createCollection(CollectionSpec.of("plain", MiniLmEmbedder.DIMENSION, Metric.COSINE));
        Run plain = client("ingest", "--folder", folder.toString(), "--collection", "plain", "-q");
        assertEquals(3, plain.exit(), plain.err());
        assertEquals(1, plain.errLines().size(), plain.err());
        assertTrue(plain.err().contains("collection 'plain' has no embedder"), plain.err());
        assertEquals(0, store.collection("plain").size());
        Run search = client("search", "--collection", "docs", "--text", "x", "--vector", "1,2");
        assertEquals(2, search.exit());
        assertTrue(search.err().contains("expected one in vector mode, got both"), search.err());
    }

    @Test
    void theProgressBarCountsChunks() {
        StringWriter w = new StringWriter();
        ProgressBar bar = new ProgressBar(new PrintWriter(w), "chunks", 1000, () -> 0);
        assertEquals(
                "[######..................]  25%  40 chunks  20/s  0:06 left",
                bar.render(40, 250, 2_000_000_000L));
    }
}
