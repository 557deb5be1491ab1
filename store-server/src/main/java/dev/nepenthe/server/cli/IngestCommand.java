package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.UpsertResponse;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe ingest}: a JSON Lines file into a collection, over the bulk upsert stream. Lines
 * are read, checked (see {@link JsonlRecordReader}) and sent in batches as they come, with gRPC's
 * flow control holding the reader back when the server is slower than the file; the server
 * stores each batch durably as it arrives.
 *
 * <p>A malformed line stops the ingest there: every line before it is stored and none after it
 * (the batch in hand is sent, the stream closed, and the error names the file and line). Upserts
 * replace by id, so fixing the line and running again is safe.
 */
@Command(name = "ingest", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Load a JSON Lines file into a collection on a server, streaming batches.",
            "Each line is one record: {\"id\": \"r1\", \"vector\": [0.1, ...], \"subject\": \"alice\", \"text\": \"...\","
                    + " \"metadata\": {\"lang\": \"en\", \"year\": 2024, \"draft\": false},"
                    + " \"source\": {\"kind\": \"doc\", \"id\": \"d1\", \"version\": 3}, \"derivedFrom\": [\"r0\"]};"
                    + " id and vector are required. Blank lines are skipped.",
            "A malformed line stops the ingest with its line number (exit 3); the lines before it are stored.",
            "Progress (records/s, time left) is drawn on standard error when it is a terminal."})
public final class IngestCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ServerConnection connection;

    @Parameters(index = "0", paramLabel = "FILE.jsonl", description = "The records, one JSON object a line; - for standard input.")
    Path file;

    @Option(names = "--collection", required = true, paramLabel = "C", description = "The collection to load into.")
    String collection;

    @ArgGroup(exclusive = false, heading = "Creating the collection first (operator token):%n")
    Create create;

    /** --metric and --index mean something only with --create, which picocli enforces through the group. */
    static final class Create {
        @Option(names = "--create", required = true, paramLabel = "DIM",
                description = "Create the collection with this dimension unless it exists with the same settings.")
        int dimension;

        @Option(names = "--metric", defaultValue = "cosine", paramLabel = "cosine|dot|l2",
                description = "Its metric (default: ${DEFAULT-VALUE}).")
        String metric = "cosine";

        @Option(names = "--index", defaultValue = "exact", paramLabel = "exact|hnsw|ivfpq",
                description = "Its index (default: ${DEFAULT-VALUE}).")
        String index = "exact";
    }

    @Option(names = "--batch", defaultValue = "500", paramLabel = "N",
            description = "Records per message (default: ${DEFAULT-VALUE}); larger batches cost more memory on both ends.")
    int batch;

    @Option(names = {"-q", "--quiet"}, description = "No progress bar.")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (batch < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--batch: expected 1 or more, got " + batch);
        }
        Metric metric = create == null ? null : metric(create.metric);
        boolean stdin = file.toString().equals("-");
        if (!stdin && !Files.isReadable(file)) {
            throw new IOException(file + ": cannot be read (no such file, or not readable)");
        }
        try (ServerConnection.Client client = connection.connect()) {
            CollectionInfo info = create == null ? describe(client) : createOrCheck(client, metric, out);
            int dimension = info.getSpec().getDimension();
            long totalBytes = stdin ? -1 : Files.size(file);
            long started = System.nanoTime();
            Counting in = new Counting(stdin ? System.in : Files.newInputStream(file));
            ProgressBar bar = quiet || !ProgressBar.stderrIsTerminal() ? null
                    : new ProgressBar(spec.commandLine().getErr(), totalBytes, System::nanoTime);
            Upload upload = new Upload();
            client.recordsStream().upsertStream(upload);
            Result r;
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
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
                throw new IllegalArgumentException(name + ":" + r.badLineNumber + ": " + r.badLine + "; the " + stored
                        + " records before it are stored (upserts replace by id: fix the line and run again)");
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long size = describe(client).getSize();
            out.printf(Locale.ROOT, "stored %,d records from %s in '%s' in %.1f s (%,.0f records/s); it holds %,d of"
                    + " yours%n", stored, name, collection, seconds, stored / Math.max(seconds, 1e-9), size);
            return 0;
        }
    }

    private record Result(long records, long badLineNumber, String badLine) {}

    private Result send(BufferedReader lines, JsonlRecordReader reader, Upload upload, ProgressBar bar, Counting in)
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
            // The store refuses a batch that names an id twice; a later line replaces an earlier one,
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
        return client.collections().describe(DescribeCollectionRequest.newBuilder().setName(collection).build());
    }

    private CollectionInfo createOrCheck(ServerConnection.Client client, Metric metric, PrintWriter out) {
        CollectionInfo existing;
        try {
            existing = describe(client);
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
                throw e;
            }
            CollectionInfo made = client.collections().create(CreateCollectionRequest.newBuilder().setSpec(
                    CollectionSpec.newBuilder().setName(collection).setDimension(create.dimension).setMetric(metric)
                            .setIndexKind(create.index)).build());
            out.printf("created collection '%s' (dimension %d, %s, %s index)%n", collection, create.dimension,
                    metric.name().toLowerCase(Locale.ROOT), create.index);
            return made;
        }
        CollectionSpec s = existing.getSpec();
        if (s.getDimension() != create.dimension || s.getMetric() != metric || !s.getIndexKind().equals(create.index)) {
            throw new IllegalStateException("--create: collection '" + collection + "' exists with dimension "
                    + s.getDimension() + ", " + s.getMetric().name().toLowerCase(Locale.ROOT) + ", " + s.getIndexKind()
                    + " index; expected " + create.dimension + ", " + metric.name().toLowerCase(Locale.ROOT) + ", "
                    + create.index);
        }
        return existing;
    }

    private Metric metric(String m) {
        return switch (m.toLowerCase(Locale.ROOT)) {
            case "cosine" -> Metric.COSINE;
            case "dot" -> Metric.DOT;
            case "l2" -> Metric.L2;
            default -> throw new picocli.CommandLine.ParameterException(spec.commandLine(),
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
    private static final class Upload implements ClientResponseObserver<UpsertRequest, UpsertResponse> {
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
