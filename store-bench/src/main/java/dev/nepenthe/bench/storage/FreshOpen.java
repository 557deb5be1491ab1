package dev.nepenthe.bench.storage;

import static dev.nepenthe.bench.storage.OpenBench.seconds;

import dev.nepenthe.bench.BenchStores;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.testing.ChildJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A clean open in a JVM of its own, as a restart does it (a cold JIT, a fresh heap, memory never
 * touched): seconds, heap and RSS after it, and what the open did with the index. The parent starts
 * the child with its own flags and class path and reads back the one line it prints.
 */
record FreshOpen(double openS, double heapMb, double rssMb, boolean loaded, String index) {

    /**
     * Opens the store at {@code dir} in a new JVM with this one's flags and class path, as a
     * restart would, and reads back what {@link #measureAndPrint} printed.
     */
    static FreshOpen inNewJvm(Path dir) throws IOException, InterruptedException {
        List<String> cmd = ChildJvm.command(null);
        cmd.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        OpenBench.class.getName(),
                        FRESH_OPEN,
                        dir.toString()));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String result = null;
        try (var out =
                new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith(FRESH_OPEN + " ")) {
                    result = line;
                }
            }
        }
        int exit = p.waitFor();
        if (exit != 0 || result == null) {
            throw new IOException(
                    "the open in a new JVM exited with status "
                            + exit
                            + (result == null ? " and no result" : "")
                            + ": "
                            + String.join(" ", cmd));
        }
        String[] f = result.split(" ", 6);
        return new FreshOpen(
                Double.parseDouble(f[1]),
                Double.parseDouble(f[2]),
                Double.parseDouble(f[3]),
                Boolean.parseBoolean(f[4]),
                f[5]);
    }

    /** The first argument that runs {@link #measureAndPrint} instead of the benchmark. */
    static final String FRESH_OPEN = "--fresh-open";

    /** The child's side of {@link #inNewJvm}: opens, measures, prints one line, closes. */
    static void measureAndPrint(Path dir) throws IOException {
        StoreOptions opts = BenchStores.options(dir);
        long t0 = System.nanoTime();
        try (Nepenthe store = BenchStores.open(dir, opts)) {
            double openS = seconds(t0);
            OpenReport.IndexRecovery r = store.collection("bench").openReport().index();
            System.out.printf(
                    Locale.ROOT,
                    "%s %.3f %.1f %.1f %b %s%n",
                    FRESH_OPEN,
                    openS,
                    MemoryUse.heapUsedMb(),
                    MemoryUse.rssMb(),
                    r.loaded() && r.added() + r.removed() == 0,
                    r);
        }
    }
}
