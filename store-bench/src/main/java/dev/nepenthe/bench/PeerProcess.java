package dev.nepenthe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs a peer library's side of a side-by-side benchmark (a script under {@code
 * store-bench/src/main/python}, run with Debian's own python3) and reads back its result lines,
 * {@code <tag> <what> key=value ...}. The peer runs single-threaded, its BLAS and OpenMP included,
 * to compare with the single-threaded Java searches; a script that measures scaling raises its own
 * thread count for that (FAISS's {@code omp_set_num_threads}, hnswlib's {@code num_threads}).
 * Everything it prints is echoed to stderr.
 */
public final class PeerProcess {

    /** One result line: what was measured and its values, in the order printed. */
    public record Line(String what, Map<String, String> kv) {
        public double d(String key) {
            return Double.parseDouble(kv.get(key));
        }
    }

    private PeerProcess() {}

    /**
     * Runs a peer's script with one thread for its math libraries, echoes everything it prints to
     * stderr, and returns the lines that start with {@code tag}, their key=value words read.
     *
     * @param tag the first word of the lines to keep ("faiss", "hnswlib")
     * @param installHint added to the error when the script fails (how to install the peer)
     */
    public static List<Line> run(List<String> cmd, String tag, String installHint)
            throws IOException, InterruptedException {
        System.err.println("running: " + String.join(" ", cmd));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("OMP_NUM_THREADS", "1");
        pb.environment().put("OPENBLAS_NUM_THREADS", "1");
        pb.environment().put("MKL_NUM_THREADS", "1");
        Process proc = pb.start();
        List<Line> out = new ArrayList<>();
        try (BufferedReader r =
                new BufferedReader(
                        new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.err.println(line);
                String[] parts = line.trim().split("\\s+", -1);
                if (parts.length < 2 || !parts[0].equals(tag)) {
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
            throw new IOException(cmd.get(1) + " exited with " + rc + " (" + installHint + ")");
        }
        return out;
    }
}
