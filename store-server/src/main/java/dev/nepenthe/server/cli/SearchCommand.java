package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.Filter;
import dev.nepenthe.grpc.v1.SearchHit;
import dev.nepenthe.grpc.v1.SearchMode;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.SearchResponse;
import dev.nepenthe.grpc.v1.Value;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe search}: a vector, semantic, keyword or hybrid query against a collection on a
 * server, hits as a table.
 */
@Command(
        name = "search",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Search a collection on a server, in the token's tenant, and print the hits: rank,"
                    + " score (higher is closer), id, subject and the start of the text.",
            "By vector (--vector), by meaning (--text: the collection's embedder embeds it), by"
                + " keyword (--text --mode keyword: BM25 over the collection's text index) or both"
                + " fused (--text --mode hybrid, with --vector to use it instead of embedding the"
                + " text)."
        })
public final class SearchCommand implements Callable<Integer> {

    /** Text longer than this is cut, with an ellipsis, so a hit stays on one line. */
    static final int TEXT_CHARS = 60;

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @Option(
            names = "--collection",
            required = true,
            paramLabel = "C",
            description = "The collection.")
    String collection;

    @Option(
            names = "--vector",
            paramLabel = "\"0.1,0.2,...\"",
            description =
                    "The query vector, comma-separated; as many numbers as the collection's"
                            + " dimension.")
    String vector;

    @Option(
            names = "--text",
            paramLabel = "\"...\"",
            description =
                    "The query text: what the collection's embedder embeds (vector mode), or the"
                            + " keywords (keyword and hybrid modes).")
    String text;

    @Option(
            names = "--mode",
            paramLabel = "vector|keyword|hybrid",
            description =
                    "What to search by (default: vector). Keyword and hybrid need --text and a"
                            + " collection with a text index; vector with --text needs a collection"
                            + " with an embedder.")
    String mode;

    @Option(
            names = "-k",
            defaultValue = "10",
            paramLabel = "K",
            description = "How many hits (default: ${DEFAULT-VALUE}).")
    int k;

    @Option(names = "--subject", paramLabel = "S", description = "Only records about this subject.")
    String subject;

    @Option(
            names = "--filter",
            paramLabel = "KEY=VALUE",
            description =
                    "Only records whose metadata KEY equals VALUE; repeat to require several. true"
                        + " and false are booleans, 12 an integer, 1.5 a double, anything else a"
                        + " string; quote to force a string: year='\"2024\"'.")
    List<String> filters = new ArrayList<>();

    @Option(names = "--min-score", paramLabel = "X", description = "Drop hits scoring below X.")
    Float minScore;

    @Option(
            names = "--param",
            paramLabel = "NAME=VALUE",
            description =
                    "A knob, repeatable: efSearch (hnsw), nprobe and rerank (ivfpq); window and"
                            + " rrfK (hybrid).")
    Map<String, String> params = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        SearchRequest.Builder q =
                SearchRequest.newBuilder().setCollection(collection).setK(k).setMode(mode());
        if (vector != null) {
            for (float x : floats(vector)) {
                q.addVector(x);
            }
        }
        if (text != null) {
            q.setText(text);
        }
        if (subject != null) {
            q.setSubject(subject);
        }
        if (filters.size() == 1) {
            q.setFilter(eq(filters.get(0)));
        } else if (filters.size() > 1) {
            Filter.All.Builder all = Filter.All.newBuilder();
            filters.forEach(f -> all.addFilters(eq(f)));
            q.setFilter(Filter.newBuilder().setAll(all));
        }
        if (minScore != null) {
            q.setMinScore(minScore);
        }
        q.putAllParams(params);
        SearchResponse r;
        try (ServerConnection.Client client = connection.connect()) {
            r = client.records().search(q.build());
        }
        print(spec.commandLine().getOut(), r.getHitsList());
        return 0;
    }

    static void print(PrintWriter out, List<SearchHit> hits) {
        if (hits.isEmpty()) {
            out.println("no hits");
            return;
        }
        int idWidth = "id".length();
        int subjectWidth = "subject".length();
        for (SearchHit h : hits) {
            idWidth = Math.max(idWidth, h.getRecord().getId().length());
            subjectWidth = Math.max(subjectWidth, h.getRecord().getSubject().length());
        }
        String row = "%3s  %-9s  %-" + idWidth + "s  %-" + subjectWidth + "s  %s%n";
        out.printf(Locale.ROOT, row, "#", "score", "id", "subject", "text");
        for (int i = 0; i < hits.size(); i++) {
            SearchHit h = hits.get(i);
            out.printf(
                    Locale.ROOT,
                    row,
                    i + 1,
                    String.format(Locale.ROOT, "%.6f", h.getScore()),
                    h.getRecord().getId(),
                    h.getRecord().getSubject(),
                    truncate(h.getRecord().getText()));
        }
    }

    static String truncate(String text) {
        String oneLine = text.replaceAll("\\s+", " ").strip();
        return oneLine.length() <= TEXT_CHARS
                ? oneLine
                : oneLine.substring(0, TEXT_CHARS - 1) + "…";
    }

    /** The mode asked for, checked against what was given, so a misuse exits 2 before any call. */
    private SearchMode mode() {
        if (vector == null && text == null) {
            throw misuse("expected --vector or --text, got neither");
        }
        String m = mode == null ? "vector" : mode.toLowerCase(Locale.ROOT);
        return switch (m) {
            case "vector" -> {
                if (vector != null && text != null) {
                    throw misuse(
                            "--vector and --text: expected one in vector mode, got both (--mode"
                                    + " hybrid uses both)");
                }
                yield SearchMode.VECTOR;
            }
            case "keyword" -> {
                if (text == null || vector != null) {
                    throw misuse("--mode keyword: expected --text and no --vector");
                }
                yield SearchMode.KEYWORD;
            }
            case "hybrid" -> {
                if (text == null) {
                    throw misuse("--mode hybrid: expected --text (and --vector, optionally)");
                }
                yield SearchMode.HYBRID;
            }
            default ->
                    throw misuse("--mode: expected vector, keyword or hybrid, got '" + mode + "'");
        };
    }

    private float[] floats(String csv) {
        String[] parts = csv.split(",", -1);
        float[] v = new float[parts.length];
        for (int i = 0; i < parts.length; i++) {
            try {
                v[i] = Float.parseFloat(parts[i].strip());
            } catch (NumberFormatException e) {
                throw misuse(
                        "--vector: expected comma-separated numbers, got '"
                                + parts[i].strip()
                                + "' at position "
                                + i);
            }
            if (!Float.isFinite(v[i])) {
                throw misuse(
                        "--vector: expected finite numbers, got "
                                + parts[i].strip()
                                + " at position "
                                + i);
            }
        }
        return v;
    }

    private Filter eq(String kv) {
        int eq = kv.indexOf('=');
        if (eq <= 0) {
            throw misuse("--filter: expected KEY=VALUE, got '" + kv + "'");
        }
        return Filter.newBuilder()
                .setEq(
                        Filter.Eq.newBuilder()
                                .setKey(kv.substring(0, eq))
                                .setValue(value(kv.substring(eq + 1))))
                .build();
    }

    static Value value(String s) {
        if (s.length() >= 2
                && ((s.startsWith("\"") && s.endsWith("\""))
                        || (s.startsWith("'") && s.endsWith("'")))) {
            return Value.newBuilder().setStringValue(s.substring(1, s.length() - 1)).build();
        }
        if (s.equals("true") || s.equals("false")) {
            return Value.newBuilder().setBoolValue(Boolean.parseBoolean(s)).build();
        }
        if (s.matches("-?\\d{1,18}")) {
            return Value.newBuilder().setIntValue(Long.parseLong(s)).build();
        }
        if (s.matches("-?\\d+(\\.\\d+)?([eE][-+]?\\d+)?")) {
            return Value.newBuilder().setDoubleValue(Double.parseDouble(s)).build();
        }
        return Value.newBuilder().setStringValue(s).build();
    }

    private CommandLine.ParameterException misuse(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
