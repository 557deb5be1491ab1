package dev.nepenthe.server.cli;

import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.embed.Chunker;
import dev.nepenthe.embed.MiniLmEmbedder;
import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.UpsertResponse;
import dev.nepenthe.grpc.v1.Value;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.BufferedReader;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
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
    Create create;

    /**
     * --metric and --index mean something only with --create, which picocli enforces through the
     * group.
     */
    static final class Create {
        @Option(
                names = "--create",
                required = true,
                paramLabel = "DIM",
                description =
                        "Create the collection with this dimension unless it exists with the same"
                                + " settings.")
        int dimension;

        @Option(
                names = "--metric",
                defaultValue = "cosine",
                paramLabel = "cosine|dot|l2",
                description = "Its metric (default: ${DEFAULT-VALUE}).")
        String metric = "cosine";

        @Option(
                names = "--index",
                defaultValue = "exact",
                paramLabel = "exact|hnsw|ivfpq",
                description = "Its index (default: ${DEFAULT-VALUE}).")
        String index = "exact";

        @Option(
                names = "--text-analyzer",
                paramLabel = "NAME",
                description =
                        "Give it a text index for keyword and hybrid search, with this analyzer:"
                                + " standard, english, simple, whitespace, german, french, spanish,"
                                + " italian, portuguese or dutch.")
        String textAnalyzer;

        @Option(
                names = "--embedder",
                paramLabel = "NAME",
                description =
                        "Let it embed text (records without vectors, text queries) with this"
                                + " embedder of the server's: all-minilm-l6-v2 (dimension 384).")
        String embedder;
    }

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
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--batch: expected 1 or more, got " + batch);
        }
        if ((file == null) == (folder == null)) {
            throw misuse(
                    "expected FILE.jsonl or --folder DIR, got "
                            + (file == null ? "neither" : "both"));
        }
        Metric metric = create == null ? null : metric(create.metric);
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
            CollectionInfo info =
                    create == null ? describe(client) : createOrCheck(client, metric, out);
            int dimension = info.getSpec().getDimension();
            long totalBytes = stdin ? -1 : Files.size(file);
            long started = System.nanoTime();
            Counting in = new Counting(stdin ? System.in : Files.newInputStream(file));
            ProgressBar bar =
                    quiet || !ProgressBar.stderrIsTerminal()
                            ? null
                            : new ProgressBar(
                                    spec.commandLine().getErr(), totalBytes, System::nanoTime);
            Upload upload = new Upload();
            client.recordsStream().upsertStream(upload);
            Result r;
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                r = send(lines, new JsonlRecordReader(dimension), upload, bar, in);
            } catch (RuntimeException | IOException | InterruptedException e) {
                upload.cancel(e);
                throw e;
            } finally {
                if (bar != null) {
                    bar.finish();
                }
            }
            long stored = upload.finish();
            String name = stdin ? "standard input" : file.toString();
            if (r.badLine != null) {
                throw new IllegalArgumentException(
                        name
                                + ":"
                                + r.badLineNumber
                                + ": "
                                + r.badLine
                                + "; the "
                                + stored
                                + " records before it are stored (upserts replace by id: fix the"
                                + " line and run again)");
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long size = describe(client).getSize();
            out.printf(
                    Locale.ROOT,
                    "stored %,d records from %s in '%s' in %.1f s (%,.0f records/s); it holds %,d"
                            + " of yours%n",
                    stored,
                    name,
                    collection,
                    seconds,
                    stored / Math.max(seconds, 1e-9),
                    size);
            return 0;
        }
    }

    private picocli.CommandLine.ParameterException misuse(String message) {
        return new picocli.CommandLine.ParameterException(spec.commandLine(), message);
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
        List<Path> files = documents(folder);
        try (ServerConnection.Client client = connection.connect()) {
            CollectionInfo info =
                    create == null ? describe(client) : createOrCheck(client, metric, out);
            if (info.getSpec().getEmbedder().isEmpty()) {
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
            ProgressBar bar =
                    quiet || !ProgressBar.stderrIsTerminal()
                            ? null
                            : new ProgressBar(
                                    spec.commandLine().getErr(),
                                    "chunks",
                                    totalBytes,
                                    System::nanoTime);
            Upload upload = new Upload();
            client.recordsStream().upsertStream(upload);
            long chunks = 0;
            int empty = 0;
            try {
                UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection(collection);
                long bytesDone = 0;
                for (Path f : files) {
                    String relative = relativeName(folder, f);
                    long size = Files.size(f);
                    List<VectorRecord> records =
                            chunker.records(
                                    new SourceRef("file", relative, version),
                                    VectorRecord.DEFAULT_TENANT,
                                    subject,
                                    readUtf8(f),
                                    null);
                    if (records.isEmpty()) {
                        empty++;
                    }
                    for (int i = 0; i < records.size(); i++) {
                        // Chunk ids are distinct within a run (path and position), so batches need
                        // no id check.
                        b.addRecords(record(records.get(i)));
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
            } catch (RuntimeException | IOException | InterruptedException e) {
                upload.cancel(e);
                throw e;
            } finally {
                if (bar != null) {
                    bar.finish();
                }
            }
            long stored = upload.finish();
            double seconds = (System.nanoTime() - started) / 1e9;
            long held = describe(client).getSize();
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
                    empty == 0 ? "" : "; " + empty + " files had no text",
                    held);
            return 0;
        }
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

    /**
     * The *.txt and *.md files under a folder, hidden ones and those in hidden folders skipped, by
     * path.
     */
    static List<Path> documents(Path folder) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(folder)) {
            walk.filter(Files::isRegularFile)
                    .filter(
                            p -> {
                                String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
                                return name.endsWith(".txt") || name.endsWith(".md");
                            })
                    .filter(
                            p -> {
                                for (Path part : folder.relativize(p)) {
                                    if (part.toString().startsWith(".")) {
                                        return false;
                                    }
                                }
                                return true;
                            })
                    .forEach(out::add);
        }
        // Sorted by the relative name as it is stored, so the order is the same on every system.
        out.sort(Comparator.comparing(p -> relativeName(folder, p)));
        return out;
    }

    /** The path under the folder with '/' between names: the chunks' source id. */
    static String relativeName(Path folder, Path file) {
        List<String> parts = new ArrayList<>();
        folder.relativize(file).forEach(p -> parts.add(p.toString()));
        return String.join("/", parts);
    }

    private static String readUtf8(Path f) throws IOException {
        byte[] bytes = Files.readAllBytes(f);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IOException(
                    f
                            + ": expected UTF-8 text, got bytes that are not (a binary file, or"
                            + " another encoding?)");
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /**
     * A chunk record on the wire: no vector (the collection embeds the text), no tenant (the
     * token's).
     */
    private static Record record(VectorRecord r) {
        Record.Builder b =
                Record.newBuilder()
                        .setId(r.id())
                        .setText(r.text())
                        .setSource(
                                dev.nepenthe.grpc.v1.SourceRef.newBuilder()
                                        .setKind(r.source().kind())
                                        .setId(r.source().id())
                                        .setVersion(r.source().version()));
        if (r.subject() != null) {
            b.setSubject(r.subject());
        }
        r.metadata()
                .forEach(
                        (k, v) ->
                                b.putMetadata(k, Value.newBuilder().setIntValue((Long) v).build()));
        return b.build();
    }

    // ---- a JSON Lines file --------------------------------------------------------------------

    private record Result(long records, long badLineNumber, String badLine) {}

    private Result send(
            BufferedReader lines,
            JsonlRecordReader reader,
            Upload upload,
            ProgressBar bar,
            Counting in)
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
            // one,
            // as it would across batches, so send what we have and start a new batch.
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
                bar.update(n, in.count);
            }
        }
        if (b.getRecordsCount() > 0) {
            upload.send(b.build());
        }
        return new Result(n, 0, null);
    }

    private CollectionInfo describe(ServerConnection.Client client) {
        return client.collections()
                .describe(DescribeCollectionRequest.newBuilder().setName(collection).build());
    }

    private CollectionInfo createOrCheck(
            ServerConnection.Client client, Metric metric, PrintWriter out) {
        CollectionInfo existing;
        try {
            existing = describe(client);
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                throw e;
            }
            CollectionInfo made =
                    client.collections()
                            .create(
                                    CreateCollectionRequest.newBuilder()
                                            .setSpec(
                                                    CollectionSpec.newBuilder()
                                                            .setName(collection)
                                                            .setDimension(create.dimension)
                                                            .setMetric(metric)
                                                            .setIndexKind(create.index)
                                                            .setTextAnalyzer(
                                                                    orEmpty(create.textAnalyzer))
                                                            .setEmbedder(orEmpty(create.embedder)))
                                            .build());
            out.printf(
                    "created collection '%s' (dimension %d, %s, %s index%s)%n",
                    collection,
                    create.dimension,
                    metric.name().toLowerCase(Locale.ROOT),
                    create.index,
                    textSettings(made.getSpec()));
            return made;
        }
        CollectionSpec s = existing.getSpec();
        if (s.getDimension() != create.dimension
                || s.getMetric() != metric
                || !s.getIndexKind().equals(create.index)
                || !s.getTextAnalyzer().equals(orEmpty(create.textAnalyzer))
                || !s.getEmbedder().equals(orEmpty(create.embedder))) {
            throw new IllegalStateException(
                    "--create: collection '"
                            + collection
                            + "' exists with dimension "
                            + s.getDimension()
                            + ", "
                            + s.getMetric().name().toLowerCase(Locale.ROOT)
                            + ", "
                            + s.getIndexKind()
                            + " index"
                            + textSettings(s)
                            + "; expected "
                            + create.dimension
                            + ", "
                            + metric.name().toLowerCase(Locale.ROOT)
                            + ", "
                            + create.index
                            + " index"
                            + textSettings(
                                    CollectionSpec.newBuilder()
                                            .setTextAnalyzer(orEmpty(create.textAnalyzer))
                                            .setEmbedder(orEmpty(create.embedder))
                                            .build()));
        }
        return existing;
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /** ", text index english, embedder all-minilm-l6-v2", or what of it the spec has. */
    private static String textSettings(CollectionSpec s) {
        return (s.getTextAnalyzer().isEmpty()
                        ? ", no text index"
                        : ", text index " + s.getTextAnalyzer())
                + (s.getEmbedder().isEmpty() ? ", no embedder" : ", embedder " + s.getEmbedder());
    }

    private Metric metric(String m) {
        return switch (m.toLowerCase(Locale.ROOT)) {
            case "cosine" -> Metric.COSINE;
            case "dot" -> Metric.DOT;
            case "l2" -> Metric.L2;
            default ->
                    throw new picocli.CommandLine.ParameterException(
                            spec.commandLine(),
                            "--metric: expected cosine, dot or l2, got '" + m + "'");
        };
    }

    /** Bytes read so far, for the progress bar. */
    private static final class Counting extends FilterInputStream {
        volatile long count;

        Counting(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }
    }

    /**
     * The client side of one bulk upsert stream, with flow control: {@link #send} waits while
     * gRPC's buffer is full, so a file larger than memory streams at the server's pace.
     */
    private static final class Upload
            implements ClientResponseObserver<UpsertRequest, UpsertResponse> {
        private final CompletableFuture<UpsertResponse> done = new CompletableFuture<>();
        private final Object ready = new Object();
        private ClientCallStreamObserver<UpsertRequest> requests;
        private UpsertResponse response;

        @Override
        public void beforeStart(ClientCallStreamObserver<UpsertRequest> r) {
            requests = r;
            r.setOnReadyHandler(this::wake);
        }

        void send(UpsertRequest batch) throws InterruptedException {
            synchronized (ready) {
                while (!requests.isReady() && !done.isDone()) {
                    ready.wait(100);
                }
            }
            if (done.isDone()) {
                // The server ended the call early (a refused batch): its status says why.
                finish();
                throw new IllegalStateException("the server closed the stream before it was done");
            }
            requests.onNext(batch);
        }

        /** Closes the stream and waits for the server's count. */
        long finish() throws InterruptedException {
            if (!done.isDone()) {
                requests.onCompleted();
            }
            try {
                return done.get().getUpserted();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                throw new IllegalStateException(e.getCause());
            }
        }

        void cancel(Throwable why) {
            if (!done.isDone()) {
                requests.cancel("the client stopped: " + why.getClass().getSimpleName(), null);
            }
        }

        private void wake() {
            synchronized (ready) {
                ready.notifyAll();
            }
        }

        @Override
        public void onNext(UpsertResponse value) {
            response = value;
        }

        @Override
        public void onError(Throwable t) {
            done.completeExceptionally(t);
            wake();
        }

        @Override
        public void onCompleted() {
            done.complete(response);
            wake();
        }
    }
}
