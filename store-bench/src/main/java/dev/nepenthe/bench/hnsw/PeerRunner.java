package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.PeerProcess;
import dev.nepenthe.bench.ivfpq.VecFiles;
import dev.nepenthe.core.Metric;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;

/**
 * hnswlib (Debian's python3-hnswlib) on the same data as the Java engines: writes the vectors,
 * queries and exact answers to a temporary directory as .fvecs/.ivecs, runs
 * {@code store-bench/src/main/python/hnswlib_side.py} with Debian's own python3, and parses the
 * {@code hnswlib <what> key=value ...} lines it prints. The directory is deleted afterwards.
 */
final class HnswlibRunner implements AutoCloseable {

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
    List<PeerProcess.Line> run(String mode, Metric metric, int m, int efc, int k, int[] efs, int passes, int threads)
            throws IOException, InterruptedException {
        StringBuilder efList = new StringBuilder();
        for (int ef : efs) {
            efList.append(efList.isEmpty() ? "" : ",").append(ef);
        }
        // Cosine data arrive unit length, so hnswlib's inner-product space ranks as cosine does.
        List<String> cmd = List.of(python, script, "--dir", dir.toString(), "--mode", mode, "--space",
                metric == Metric.L2 ? "l2" : "ip", "--m", "" + m, "--efc", "" + efc, "--k", "" + k, "--efs",
                efList.toString(), "--passes", "" + passes, "--threads", "" + threads);
        return PeerProcess.run(cmd, "hnswlib", "is python3-hnswlib installed? apt-get install python3-hnswlib python3-numpy");
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
