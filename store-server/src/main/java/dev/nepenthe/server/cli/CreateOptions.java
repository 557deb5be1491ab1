package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.Metric;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code nepenthe ingest --create DIM} and the options that mean something only with it (picocli
 * enforces that through the argument group), with what they do: create the collection, or check
 * that the one there has these settings. Apart from {@link IngestCommand}, whose job is streaming
 * the records.
 */
final class CreateOptions {
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

    /**
     * The collection as the server describes it.
     *
     * @param client the connection
     * @param collection the collection's name
     * @return its description
     * @throws StatusRuntimeException NOT_FOUND if there is none
     */
    static CollectionInfo describe(ServerConnection.Client client, String collection) {
        return client.collections()
                .describe(DescribeCollectionRequest.newBuilder().setName(collection).build());
    }

    /**
     * The --metric value on the wire.
     *
     * @param commandLine the command, for a usage error
     * @return the metric
     * @throws CommandLine.ParameterException if it is none of cosine, dot, l2
     */
    Metric metric(CommandLine commandLine) {
        return switch (metric.toLowerCase(Locale.ROOT)) {
            case "cosine" -> Metric.COSINE;
            case "dot" -> Metric.DOT;
            case "l2" -> Metric.L2;
            default ->
                    throw new CommandLine.ParameterException(
                            commandLine,
                            "--metric: expected cosine, dot or l2, got '" + metric + "'");
        };
    }

    /**
     * Creates the collection with these settings, or checks that the one there has them.
     *
     * @param client the connection
     * @param collection the collection's name
     * @param m the metric, as {@link #metric(CommandLine)} read it
     * @param out where to say that it was created
     * @return the collection's description
     * @throws IllegalStateException if it exists with other settings
     */
    CollectionInfo createOrCheck(
            ServerConnection.Client client, String collection, Metric m, PrintWriter out) {
        CollectionInfo existing;
        try {
            existing = describe(client, collection);
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
                                                            .setDimension(dimension)
                                                            .setMetric(m)
                                                            .setIndexKind(index)
                                                            .setTextAnalyzer(orEmpty(textAnalyzer))
                                                            .setEmbedder(orEmpty(embedder)))
                                            .build());
            out.printf(
                    Locale.ROOT,
                    "created collection '%s' (dimension %d, %s, %s index%s)%n",
                    collection,
                    dimension,
                    m.name().toLowerCase(Locale.ROOT),
                    index,
                    textSettings(made.getSpec()));
            return made;
        }
        CollectionSpec s = existing.getSpec();
        if (s.getDimension() != dimension
                || s.getMetric() != m
                || !s.getIndexKind().equals(index)
                || !s.getTextAnalyzer().equals(orEmpty(textAnalyzer))
                || !s.getEmbedder().equals(orEmpty(embedder))) {
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
                            + dimension
                            + ", "
                            + m.name().toLowerCase(Locale.ROOT)
                            + ", "
                            + index
                            + " index"
                            + textSettings(
                                    CollectionSpec.newBuilder()
                                            .setTextAnalyzer(orEmpty(textAnalyzer))
                                            .setEmbedder(orEmpty(embedder))
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
}
