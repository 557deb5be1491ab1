package dev.nepenthe.bench.suite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The suite's smoke, as CI runs it: every step at {@code profile=smoke} (a few hundred vectors, no
 * Python peers) against a document of its own, so the suite and every harness it calls cannot rot.
 * Checks each step's section holds the tables its harness prints, that the plots are PNGs, and that
 * the text outside the suite's region is untouched. The server's load run needs store-server's
 * class path, which the launcher hands over as a property: here it is this test's own (store-server
 * is a test dependency), and a run without it must fail, not pass empty.
 */
class BenchSuiteSmokeTest {
    private static final String SERVER_CLASSPATH = "nepenthe.suite.serverClasspath";

    @Test
    void everyStepWritesItsSectionAtTheSmokeProfile(@TempDir Path dir) throws Exception {
        Path doc = dir.resolve("BENCHMARKS.md");
        String before =
                "# Benchmarks\n\n"
                        + ReportDoc.BEGIN
                        + "\n"
                        + ReportDoc.END
                        + "\n\n## Older runs\n\nkept\n";
        Files.writeString(doc, before);
        List<String> steps =
                BenchSuite.choose("", new BenchSuite.Profile("smoke", false)).stream()
                        .map(BenchSuite.Step::name)
                        .toList();
        assertTrue(steps.contains("server-load"), steps.toString());
        List<String> failed;
        System.setProperty(SERVER_CLASSPATH, System.getProperty("java.class.path"));
        try {
            failed =
                    BenchSuite.run(
                            new String[] {
                                "profile=smoke",
                                "doc=" + doc,
                                "dir=" + dir,
                                "only=" + String.join(",", steps)
                            });
        } finally {
            System.clearProperty(SERVER_CLASSPATH);
        }
        assertEquals(List.of(), failed);
        String after = Files.readString(doc);
        assertTrue(after.startsWith("# Benchmarks\n\n" + ReportDoc.BEGIN + "\n"), after);
        assertTrue(after.endsWith(ReportDoc.END + "\n\n## Older runs\n\nkept\n"), after);
        for (String step : steps) {
            assertEquals(
                    1, count(after, ReportDoc.begin(step)), step + "'s section, once: " + after);
            assertTrue(after.contains("./nepenthe bench all profile=smoke only=" + step), step);
        }
        String kernels = section(after, "kernels");
        for (String kernel : List.of("dot", "squareDistance", "cosine")) {
            assertTrue(
                    Pattern.compile(
                                    "\\| "
                                            + kernel
                                            + " \\| 64 \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\|"
                                            + " [0-9.]+ \\|")
                            .matcher(kernels)
                            .find(),
                    kernels);
        }
        String rebuild = section(after, "rebuild-cost");
        // Every index and count removed has a row with both strategies timed.
        for (String index : List.of("hnsw", "ivfpq", "text")) {
            for (String removed : List.of("1 (one record)", "60 (10%)")) {
                String dim = index.equals("text") ? "-" : "16";
                Matcher m =
                        Pattern.compile(
                                        "\\| "
                                                + index
                                                + " \\| 600 \\| "
                                                + dim
                                                + " \\| "
                                                + Pattern.quote(removed)
                                                + " \\| [0-9.]+; [^|]+ \\| [0-9.]+; [^|]+ \\|"
                                                + " [0-9.]+ \\|")
                                .matcher(rebuild);
                assertTrue(m.find(), index + " " + removed + ": " + rebuild);
            }
        }
        assertPng(dir.resolve("plots/rebuild-cost.png"));
        assertTrue(rebuild.contains("](plots/rebuild-cost.png)"), rebuild);
        String hnsw = section(after, "hnsw");
        assertTrue(
                hnsw.contains("| nepenthe |")
                        && hnsw.contains("| efSearch | nepenthe recall | nepenthe QPS |"),
                hnsw);
        assertTrue(
                hnsw.contains("\n#### HNSW engines side by side"),
                "the harness's heading, one level down: " + hnsw);
        assertPng(dir.resolve("plots/hnsw-recall-qps.png"));
        assertTrue(hnsw.contains("](plots/hnsw-recall-qps.png)"), hnsw);
        String delete = section(after, "hnsw-delete");
        // The residue table: ours holds none of the removed; Lucene keeps its deleted documents.
        Matcher residue =
                Pattern.compile("\\| 60 \\| 0 \\| 0 \\| 60 \\| not run \\|").matcher(delete);
        assertTrue(residue.find(), delete);
        assertPng(dir.resolve("plots/hnsw-delete-recall.png"));
        assertTrue(section(after, "ivfpq").contains("recall"), section(after, "ivfpq"));
        assertPng(dir.resolve("plots/ivfpq-recall-qps.png"));
        assertTrue(section(after, "forget").contains("SEALED"), section(after, "forget"));
        assertPng(dir.resolve("plots/forget-search-latency.png"));
        // Each phase of the server's run answered searches (queries per second above zero).
        String server = section(after, "server-load");
        for (String phase : List.of("embedded", "server", "server, forgets running")) {
            Matcher m = Pattern.compile("\\| " + phase + " \\| 1 \\| ([0-9]+) \\|").matcher(server);
            assertTrue(
                    m.find() && Long.parseLong(m.group(1)) > 0,
                    phase + " answered nothing: " + server);
        }
        assertTrue(
                Pattern.compile("\\| 1000 \\| [0-9]+ \\| [0-9]+ \\| -?[0-9.]+% \\|")
                        .matcher(section(after, "ingest"))
                        .find(),
                section(after, "ingest"));
    }

    @Test
    void theRealEmbeddingsRunOnlyInTheFullProfileUnlessNamed() {
        for (String profile : List.of("smoke", "quick")) {
            assertTrue(
                    BenchSuite.choose("", new BenchSuite.Profile(profile, true)).stream()
                            .noneMatch(s -> s.name().equals("hnsw-gcide")),
                    profile);
        }
        assertTrue(
                BenchSuite.choose("", new BenchSuite.Profile("full", true)).stream()
                        .anyMatch(s -> s.name().equals("hnsw-gcide")));
        assertEquals(
                List.of("hnsw-gcide"),
                BenchSuite.choose("hnsw-gcide", new BenchSuite.Profile("quick", true)).stream()
                        .map(BenchSuite.Step::name)
                        .toList());
    }

    @Test
    void theServerStepWithoutTheServersClassPathFailsAndLeavesItsSectionAlone(@TempDir Path dir)
            throws Exception {
        Path doc = dir.resolve("BENCHMARKS.md");
        String before = "# Benchmarks\n\n" + ReportDoc.BEGIN + "\n" + ReportDoc.END + "\n";
        Files.writeString(doc, before);
        String saved = System.clearProperty(SERVER_CLASSPATH);
        try {
            assertEquals(
                    List.of("server-load"),
                    BenchSuite.run(
                            new String[] {
                                "profile=smoke", "doc=" + doc, "dir=" + dir, "only=server-load"
                            }));
        } finally {
            if (saved != null) {
                System.setProperty(SERVER_CLASSPATH, saved);
            }
        }
        assertEquals(before, Files.readString(doc));
    }

    private static void assertPng(Path file) throws java.io.IOException {
        byte[] png = Files.readAllBytes(file);
        assertTrue(
                png.length > 1000 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G',
                file + " is a PNG");
    }

    private static String section(String doc, String step) {
        int s = doc.indexOf(ReportDoc.begin(step));
        return doc.substring(s, doc.indexOf(ReportDoc.end(step), s));
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
