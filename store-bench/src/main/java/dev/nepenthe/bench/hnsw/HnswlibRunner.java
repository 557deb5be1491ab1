package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.ivfpq.VecFiles;
import dev.nepenthe.core.Metric;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * hnswlib (Debian's python3-hnswlib) on the same data as the Java engines: writes the vectors,
 * queries and exact answers to a temporary directory as .fvecs/.ivecs, runs
 * {@code store-bench/src/main/python/hnswlib_side.py} with Debian's own python3, and parses the
 * {@code hnswlib <what> key=value ...} lines it prints. The directory is deleted afterwards.
 */
final class HnswlibRunner implements AutoCloseable {

    /** One parsed output line: its kind ("build", "search", "delete") and its key=value pairs. */
    record Line(String what, Map<String, String> kv) {
        double d(String key) {
            return Double.parseDouble(kv.get(key));
        }
    }

    final Path dir;
    private final String python;
    private final String script;

    HnswlibRunner(BenchArgs a, float[][] base, float[][] queries, int[][] truth) throws IOException {
        this.python = a.s("python", "/usr/bin/python3");
        this.script = a.s("hnswlibScript", "store-bench/src/main/python/hnswlib_side.py");
        this.dir = Files.createTempDirectory("nepenthe-hnswlib-");
        VecFiles.writeFvecs(dir.resolve("base.fvecs"), base);
        VecFiles.writeFvecs(dir.resolve("query.fvecs"), queries);
        VecFiles.writeIvecs(dir.resolve("gt.ivecs"), truth);
    }

    /** Ids removed in stage {@code i} (cumulative stages) and the exact top-k among the survivors after it. */
    void writeStage(int i, int[] removedThisStage, int[][] truthAfter) throws IOException {
        int[][] rows = new int[removedThisStage.length][];
        for (int j = 0; j < rows.length; j++) {
            rows[j] = new int[] {removedThisStage[j]};
        }
        VecFiles.writeIvecs(dir.resolve("remove_" + i + ".ivecs"), rows);
        VecFiles.writeIvecs(dir.resolve("gt_" + i + ".ivecs"), truthAfter);
    }

    /** Runs the script; stderr and every output line are echoed to this process's stderr. */
    List<Line> run(String mode, Metric metric, int m, int efc, int k, int[] efs, int passes, int threads)
            throws IOException, InterruptedException {
        StringBuilder efList = new StringBuilder();
        for (int ef : efs) {
            efList.append(efList.isEmpty() ? "" : ",").append(ef);
        }
        // Cosine data arrive unit length, so hnswlib's inner-product space ranks as cosine does.
        List<String> cmd = List.of(python, script, "--dir", dir.toString(), "--mode", mode, "--space",
                metric == Metric.L2 ? "l2" : "ip", "--m", "" + m, "--efc", "" + efc, "--k", "" + k, "--efs",
                efList.toString(), "--passes", "" + passes, "--threads", "" + threads);
        System.err.println("running: " + String.join(" ", cmd));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("OMP_NUM_THREADS", "1");
        pb.environment().put("OPENBLAS_NUM_THREADS", "1");
        Process proc = pb.start();
        List<Line> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.err.println(line);
                String[] parts = line.trim().split("\\s+");
                if (parts.length < 2 || !parts[0].equals("hnswlib")) {
                    continue;
                }
                Map<String, String> kv = new LinkedHashMap<>();
                for (int i = 2; i < parts.length; i++) {
                    int eq = parts[i].indexOf('=');
                    if (eq > 0) {
                        kv.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
                    }
                }
                out.add(new Line(parts[1], kv));
            }
        }
        int rc = proc.waitFor();
        if (rc != 0) {
            throw new IOException("hnswlib_side.py exited with " + rc
                    + " (is python3-hnswlib installed? apt-get install python3-hnswlib python3-numpy)");
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
