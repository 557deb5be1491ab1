package dev.nepenthe.server.cli;

import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.embed.Chunker;
import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe ingest}: a JSON Lines file, or a folder of text and Markdown documents, into a
 * collection, over the bulk upsert stream. Records are read, checked (see {@link
 * JsonlRecordReader}) or cut from the documents by the {@link Chunker}, and sent in batches as they
 * come, with gRPC's flow control holding the reader back when the server is slower than the input;
 * the server stores (and, for text-only chunks, embeds) each batch durably as it arrives.
 *
 * <p>A malformed line stops the ingest there: every line before it is stored and none after it (the
 * batch in hand is sent, the stream closed, and the error names the file and line). Upserts replace
 * by id, so fixing the line and running again is safe.
 */
@Command(
        name = "ingest",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Load a JSON Lines file, or a folder of .txt and .md documents, into a collection on a"
                    + " server, streaming batches.",
            "Each line is one record: {\"id\": \"r1\", \"vector\": [0.1, ...], \"subject\":"
                + " \"alice\", \"text\": \"...\", \"metadata\": {\"lang\": \"en\", \"year\": 2024,"
                + " \"draft\": false}, \"source\": {\"kind\": \"doc\", \"id\": \"d1\", \"version\":"
                + " 3}, \"derivedFrom\": [\"r0\"]}; id and vector are required. Blank lines are"
                + " skipped.",
            "A malformed line stops the ingest with its line number (exit 3); the lines before it"
                    + " are stored.",
            "With --folder, every *.txt and *.md file under DIR (recursively, in path order; hidden"
                + " files and folders skipped; UTF-8) is cut into chunks, each stored as a"
                + " text-only record that the collection's embedder embeds: id"
                + " file:<path>:v<version>#<n>, source {file, <path>, <version>}, metadata chunk"
                + " and chunks. Forgetting the source version (nepenthe forget --source"
                + " file:PATH:N) takes every chunk of that version. Ingest a changed file under a"
                + " new --source-version: the same version again replaces its chunks by id, but"
                + " leaves any beyond the new count.",
            "Progress (records or chunks/s, time left) is drawn on standard error when it is a"
                    + " terminal."
        })
public final class IngestCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @Parameters(
            index = "0",
            arity = "0..1",
            paramLabel = "FILE.jsonl",
            description =
                    "The records, one JSON object a line; - for standard input. Not with --folder.")
    Path file;

    @Option(
            names = "--folder",
            paramLabel = "DIR",
            description =
                    "Ingest the *.txt and *.md files under DIR as chunks instead of a JSON Lines"
                            + " file; the collection needs an embedder (see --embedder).")
    Path folder;

    @Option(
            names = "--chunk-size",
            paramLabel = "N",
            description =
                    "With --folder: most units in one chunk (default: "
                            + DEFAULT_CHUNK_SIZE
                            + "; the model was"
                            + " trained on at most 256 tokens).")
    Integer chunkSize;

    @Option(
            names = "--chunk-overlap",
            paramLabel = "N",
            description =
                    "With --folder: units consecutive chunks share, less than the chunk size"
                            + " (default: "
                            + DEFAULT_CHUNK_OVERLAP
                            + ").")
    Integer chunkOverlap;

    @Option(
            names = "--chunk-unit",
            paramLabel = "tokens|chars",
            description =
                    "With --folder: what sizes count, tokens of the all-minilm-l6-v2 tokenizer or"
                            + " characters (default: tokens).")
    String chunkUnit;

    @Option(
            names = "--source-version",
            paramLabel = "V",
            description =
                    "With --folder: the version the chunks' sources carry, 0 or more (default: 1).")
    Long sourceVersion;

    @Option(
            names = "--subject",
            paramLabel = "S",
            description =
                    "With --folder: the person the documents are about (a forget of the subject"
                            + " takes them).")
    String subject;

    @Option(
            names = "--collection",
            required = true,
            paramLabel = "C",
            description = "The collection to load into.")
    String collection;

    @ArgGroup(exclusive = false, heading = "Creating the collection first (operator token):%n")
    CreateOptions create;

    static final int DEFAULT_CHUNK_SIZE = 256;
    static final int DEFAULT_CHUNK_OVERLAP = 32;

    @Option(
            names = "--batch",
            defaultValue = "500",
            paramLabel = "N",
            description =
                    "Records per message (default: ${DEFAULT-VALUE}); larger batches cost more"
                        + " memory on both ends. The server embeds a message of text-only chunks"
                        + " before it takes the next, so with --folder a smaller batch (64) shows"
                        + " progress sooner.")
    int batch;

    @Option(
            names = {"-q", "--quiet"},
            description = "No progress bar.")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (batch < 1) {
            throw misuse("--batch: expected 1 or more, got " + batch);
        }
        if ((file == null) == (folder == null)) {
            throw misuse(
                    "expected FILE.jsonl or --folder DIR, got "
                            + (file == null ? "neither" : "both"));
        }
        Metric metric = create == null ? null : create.metric(spec.commandLine());
        if (folder != null) {
            return ingestFolder(out, metric);
        }
        if (chunkSize != null
                || chunkOverlap != null
                || chunkUnit != null
                || sourceVersion != null
                || subject != null) {
            throw misuse(
                    "--chunk-size, --chunk-overlap, --chunk-unit, --source-version and --subject:"
                            + " expected only with --folder, got one with FILE.jsonl (a JSON line"
                            + " carries its own subject and source)");
        }
        boolean stdin = file.toString().equals("-");
        if (!stdin && !Files.isReadable(file)) {
            throw new IOException(file + ": cannot be read (no such file, or not readable)");
        }
        try (ServerConnection.Client client = connection.connect()) {
            int dimension = target(client, metric, out).getSpec().getDimension();
            long started = System.nanoTime();
            CountingInputStream in =
                    new CountingInputStream(stdin ? System.in : Files.newInputStream(file));
            ProgressBar bar = progressBar("records", stdin ? -1 : Files.size(file));
            Result[] r = new Result[1];
            long stored =
                    UpsertUpload.run(
                            client,
                            bar,
                            upload -> {
                                try (BufferedReader lines =
                                        new BufferedReader(
                                                new InputStreamReader(
                                                        in, StandardCharsets.UTF_8))) {
                                    r[0] =
                                            send(
                                                    lines,
                                                    new JsonlRecordReader(dimension),
                                                    upload,
                                                    bar,
                                                    in);
                                }
                            });
            String name = stdin ? "standard input" : file.toString();
            if (r[0].badLine != null) {
                throw new IllegalArgumentException(
                        name
                                + ":"
                                + r[0].badLineNumber
                                + ": "
                                + r[0].badLine
                                + "; the "
                                + stored
                                + " records before it are stored (upserts replace by id: fix the"
                                + " line and run again)");
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            out.printf(
                    Locale.ROOT,
                    "stored %,d records from %s in '%s' in %.1f s (%,.0f records/s); it holds %,d"
                            + " of yours%n",
                    stored,
                    name,
                    collection,
                    seconds,
                    stored / Math.max(seconds, 1e-9),
                    CreateOptions.describe(client, collection).getSize());
            return 0;
        }
    }

    private ParameterException misuse(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** The collection to load into: created or checked with --create, else as it is. */
    private CollectionInfo target(ServerConnection.Client client, Metric metric, PrintWriter out) {
        return create == null
                ? CreateOptions.describe(client, collection)
                : create.createOrCheck(client, collection, metric, out);
    }

    /** A progress bar on standard error, or null when it is not a terminal or -q was given. */
    private ProgressBar progressBar(String unit, long totalBytes) {
        return quiet || !ProgressBar.stderrIsTerminal()
                ? null
                : new ProgressBar(spec.commandLine().getErr(), unit, totalBytes, System::nanoTime);
    }

    // ---- a folder of documents ----------------------------------------------------------------

    private int ingestFolder(PrintWriter out, Metric metric)
            throws IOException, InterruptedException {
        Chunker chunker = chunker();
        long version = sourceVersion == null ? 1 : sourceVersion;
        if (version < 0) {
            throw misuse("--source-version: expected 0 or more, got " + version);
        }
        if (!Files.isDirectory(folder)) {
            throw new IOException(
                    folder
                            + ": expected a folder, got "
                            + (Files.exists(folder) ? "a file" : "nothing there"));
        }
        List<Path> files = DocumentFolder.documents(folder);
        try (ServerConnection.Client client = connection.connect()) {
            if (target(client, metric, out).getSpec().getEmbedder().isEmpty()) {
                throw new IllegalStateException(
                        "--folder: collection '"
                                + collection
                                + "' has no embedder, and chunks are stored as text for the"
                                + " collection to embed; create one with --create 384 --embedder "
                                + MiniLmEmbedder.NAME
                                + " (and --text-analyzer english for keyword search)");
            }
            long totalBytes = 0;
            for (Path f : files) {
                totalBytes += Files.size(f);
            }
            long started = System.nanoTime();
            ProgressBar bar = progressBar("chunks", totalBytes);
            int[] empty = {0};
            long stored =
                    UpsertUpload.run(
                            client,
                            bar,
                            upload -> empty[0] = sendChunks(files, chunker, version, upload, bar));
            double seconds = (System.nanoTime() - started) / 1e9;
            out.printf(
                    Locale.ROOT,
                    "stored %,d chunks of %,d files from %s in '%s' in %.1f s (%,.1f chunks/s)%s;"
                            + " it holds %,d of yours%n",
                    stored,
                    files.size(),
                    folder,
                    collection,
                    seconds,
                    stored / Math.max(seconds, 1e-9),
                    empty[0] == 0 ? "" : "; " + empty[0] + " files had no text",
                    CreateOptions.describe(client, collection).getSize());
            return 0;
        }
    }

    /** Cuts the files into chunks and sends them in batches; returns how many files had no text. */
    private int sendChunks(
            List<Path> files, Chunker chunker, long version, UpsertUpload upload, ProgressBar bar)
            throws IOException, InterruptedException {
        UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection(collection);
        long chunks = 0;
        int empty = 0;
        long bytesDone = 0;
        for (Path f : files) {
            long size = Files.size(f);
            List<VectorRecord> records =
                    chunker.records(
                            new SourceRef("file", DocumentFolder.relativeName(folder, f), version),
                            VectorRecord.DEFAULT_TENANT,
                            subject,
                            DocumentFolder.readUtf8(f),
                            null);
            if (records.isEmpty()) {
                empty++;
            }
            for (int i = 0; i < records.size(); i++) {
                // Chunk ids are distinct within a run (path and position), so batches need
                // no id check.
                b.addRecords(DocumentFolder.record(records.get(i)));
                chunks++;
                if (b.getRecordsCount() >= batch) {
                    upload.send(b.build());
                    b.clearRecords();
                }
                if (bar != null) {
                    bar.update(chunks, bytesDone + size * (i + 1) / records.size());
                }
            }
            bytesDone += size;
        }
        if (b.getRecordsCount() > 0) {
            upload.send(b.build());
        }
        return empty;
    }

    private Chunker chunker() {
        Chunker.Unit unit =
                switch (chunkUnit == null ? "tokens" : chunkUnit.toLowerCase(Locale.ROOT)) {
                    case "tokens" -> Chunker.Unit.TOKENS;
                    case "chars" -> Chunker.Unit.CHARS;
                    default ->
                            throw misuse(
                                    "--chunk-unit: expected tokens or chars, got '"
                                            + chunkUnit
                                            + "'");
                };
        try {
            return Chunker.of(
                    unit,
                    chunkSize == null ? DEFAULT_CHUNK_SIZE : chunkSize,
                    chunkOverlap == null ? DEFAULT_CHUNK_OVERLAP : chunkOverlap);
        } catch (IllegalArgumentException e) {
            throw misuse("--chunk-size/--chunk-overlap: " + e.getMessage());
        }
    }

    // ---- a JSON Lines file --------------------------------------------------------------------

    private record Result(long records, long badLineNumber, String badLine) {}

    private Result send(
            BufferedReader lines,
            JsonlRecordReader reader,
            UpsertUpload upload,
            ProgressBar bar,
            CountingInputStream in)
            throws IOException, InterruptedException {
        UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection(collection);
        Set<String> idsInBatch = new HashSet<>();
        long n = 0;
        long lineNumber = 0;
        String line;
        while ((line = lines.readLine()) != null) {
            lineNumber++;
            if (line.isBlank()) {
                continue;
            }
            Record rec;
            try {
                rec = reader.parse(line);
            } catch (IllegalArgumentException e) {
                // Everything before the bad line goes in; nothing after it.
                if (b.getRecordsCount() > 0) {
                    upload.send(b.build());
                }
                return new Result(n, lineNumber, e.getMessage());
            }
            // The store refuses a batch that names an id twice; a later line replaces an earlier
            // one, as it would across batches, so send what we have and start a new batch.
            if (!idsInBatch.add(rec.getId())) {
                upload.send(b.build());
                b.clearRecords();
                idsInBatch.clear();
                idsInBatch.add(rec.getId());
            }
            b.addRecords(rec);
            n++;
            if (b.getRecordsCount() >= batch) {
                upload.send(b.build());
                b.clearRecords();
                idsInBatch.clear();
            }
            if (bar != null) {
                bar.update(n, in.count());
            }
        }
        if (b.getRecordsCount() > 0) {
            upload.send(b.build());
        }
        return new Result(n, 0, null);
    }
}
