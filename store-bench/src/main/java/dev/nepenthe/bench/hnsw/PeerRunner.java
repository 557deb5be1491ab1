package dev.nepenthe.bench.hnsw;

import dev.nepenthe.bench.PeerProcess;
import dev.nepenthe.bench.data.VecFiles;
import dev.nepenthe.core.Metric;
import dev.nepenthe.testing.TestFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Python peers of the HNSW harnesses (Debian's python3-hnswlib and python3-faiss) on the same
 * data as the Java engines: writes the vectors, queries and exact answers once to a temporary
 * directory as .fvecs/.ivecs, runs a script from {@code store-bench/src/main/python} (argument
 * {@code pythonDir=}) with Debian's own python3 (argument {@code python=}) over them, and parses
 * the {@code <tag> <what> key=value ...} lines it prints. The directory is deleted by {@link
 * #close()}.
 */
final class PeerRunner implements AutoCloseable {

    /** The script and how to install what it imports. */
    record Peer(String script, String tag, String installHint) {}

    static final Peer HNSWLIB =
            new Peer(
                    "hnswlib_side.py",
                    "hnswlib",
                    "is python3-hnswlib installed? apt-get install python3-hnswlib python3-numpy");
    static final Peer FAISS =
            new Peer(
                    "faiss_hnsw.py",
                    "faiss",
                    "is python3-faiss installed? apt-get install python3-faiss python3-numpy");

    final Path dir;
    private final String python;
    private final Path scripts;

    PeerRunner(BenchArgs a, float[][] base, float[][] queries, int[][] truth) throws IOException {
        this.python = a.s("python", "/usr/bin/python3");
        this.scripts = Path.of(a.s("pythonDir", "store-bench/src/main/python"));
        this.dir = Files.createTempDirectory("nepenthe-peers-");
        VecFiles.writeFvecs(dir.resolve("base.fvecs"), base);
        VecFiles.writeFvecs(dir.resolve("query.fvecs"), queries);
        VecFiles.writeIvecs(dir.resolve("gt.ivecs"), truth);
    }

    /**
     * Ids removed in stage {@code i} (cumulative stages) and the exact top-k among the survivors
     * after it.
     */
    void writeStage(int i, int[] removedThisStage, int[][] truthAfter) throws IOException {
        int[][] rows = new int[removedThisStage.length][];
        for (int j = 0; j < rows.length; j++) {
            rows[j] = new int[] {removedThisStage[j]};
        }
        VecFiles.writeIvecs(dir.resolve("remove_" + i + ".ivecs"), rows);
        VecFiles.writeIvecs(dir.resolve("gt_" + i + ".ivecs"), truthAfter);
    }

    /**
     * Runs a peer's script with the graph settings every peer takes, then {@code extra}; stderr and
     * every output line are echoed to this process's stderr.
     */
    List<PeerProcess.Line> run(
            Peer peer,
            Metric metric,
            int m,
            int efc,
            int k,
            int[] efs,
            int passes,
            List<String> extra)
            throws IOException, InterruptedException {
        // Cosine data arrive unit length, so an inner-product space ranks as cosine does.
        List<String> cmd =
                new ArrayList<>(
                        List.of(
                                python,
                                scripts.resolve(peer.script()).toString(),
                                "--dir",
                                dir.toString(),
                                "--space",
                                metric == Metric.L2 ? "l2" : "ip",
                                "--m",
                                "" + m,
                                "--efc",
                                "" + efc,
                                "--k",
                                "" + k,
                                "--efs",
                                csv(efs),
                                "--passes",
                                "" + passes));
        cmd.addAll(extra);
        return PeerProcess.run(cmd, peer.tag(), peer.installHint());
    }

    static String csv(int[] values) {
        StringBuilder out = new StringBuilder();
        for (int v : values) {
            out.append(out.isEmpty() ? "" : ",").append(v);
        }
        return out.toString();
    }

    @Override
    public void close() throws IOException {
        TestFiles.deleteTree(dir);
    }
}
