package dev.nepenthe.core;

import static dev.nepenthe.testing.TestFiles.copyTree;
import static dev.nepenthe.testing.TestFiles.deleteTree;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Seeds;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM ingests and deletes, printing an acknowledgement after each call returns (and an
 * announcement before each deletion starts); the test kills it with SIGKILL at a random moment
 * drawn from a printed seed, reopens the store and checks: every acknowledged write is there,
 * nothing acknowledged as deleted came back, every file verifies and the indexes agree with the
 * records. A failing run's files are kept under {@code target/crash-failures/}. {@link
 * CrashPointTest} crashes at chosen moments in one process, reproducibly. Runs {@value #RUNS} times
 * in the suite; the Maven profile {@code crash-long} ({@code mvn -B verify -Pcrash-long}) runs it
 * 200 times.
 */
class CrashTest {

    static final int RUNS = 20;

    /**
     * Child-JVM entry point: writes until killed. Args: data folder, keystore folder, run number,
     * seed.
     */
    public static final class Worker {
        public static void main(String[] args) throws Exception {
            Path data = Path.of(args[0]);
            StoreOptions opts =
                    StoreOptions.defaults()
                            .withKeystore(Path.of(args[1]))
                            .withCheckpointBytes(1 << 16);
            String run = args[2];
            Random rnd = new Random(Long.parseLong(args[3]));
            PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
            try (Nepenthe store = Nepenthe.open(data, opts)) {
                VectorCollection c =
                        store.collections().isEmpty()
                                ? store.createCollection(
                                        CollectionSpec.of("c", 8, Metric.L2)
                                                .withTextIndex("whitespace"))
                                : store.collection("c");
                out.println("READY");
                // Bounded: a worker orphaned by a test JVM that died stops by itself.
                long stopAt = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
                for (int n = 0; System.nanoTime() < stopAt; n++) {
                    int op = rnd.nextInt(10);
                    if (op < 7) {
                        List<VectorRecord> batch = new ArrayList<>();
                        int size = 1 + rnd.nextInt(20);
                        for (int i = 0; i < size; i++) {
                            String id = run + "-" + n + "-" + i;
                            float[] v = new float[8];
                            v[0] = n;
                            v[1] = i;
                            batch.add(
                                    VectorRecord.builder(id)
                                            .subject("s" + rnd.nextInt(6))
                                            .vector(v)
                                            .text("t" + id)
                                            .build());
                        }
                        c.upsertAll(batch);
                        for (VectorRecord r : batch) {
                            out.println("PUT " + r.id() + " " + r.subject());
                        }
                    } else if (op < 9) {
                        List<String> ids = c.ids(VectorRecord.DEFAULT_TENANT);
                        if (!ids.isEmpty()) {
                            String id = ids.get(rnd.nextInt(ids.size()));
                            out.println("WILL-DEL " + id);
                            c.delete(id);
                            out.println("DEL " + id);
                        }
                    } else {
                        String s = "s" + rnd.nextInt(6);
                        out.println("WILL-DROP " + s);
                        c.deleteSubject(VectorRecord.DEFAULT_TENANT, s);
                        out.println("DROP " + s);
                    }
                }
            }
        }
    }

    @Test
    void killedWritersLoseNothingAcknowledgedAndResurrectNothingDeleted(@TempDir Path tmp)
            throws Exception {
        int runs = Integer.getInteger("nepenthe.crash.runs", RUNS);
        long seed = Seeds.draw("CrashTest");
        Random rnd = new Random(seed);
        Path data = tmp.resolve("data");
        Path keys = tmp.resolve("keys");
        // What the store must hold: acknowledged puts minus acknowledged deletes, across runs.
        Map<String, String> expected = new HashMap<>();
        Set<String> mustBeGone = new HashSet<>();
        // Records of a subject whose drop was announced but not acknowledged: either way is fine.
        Map<String, Set<String>> dropping = new HashMap<>();
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        List<String> jvmFlags = new ArrayList<>();
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-")
                    || a.startsWith("--enable-native-access")
                    || a.startsWith("--sun-misc")
                    || a.startsWith("-Dchronicle")
                    || a.startsWith("-Dnepenthe")) {
                jvmFlags.add(a);
            }
        }
        for (int run = 0; run < runs; run++) {
            List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx256m"));
            cmd.addAll(jvmFlags);
            long workerSeed = rnd.nextLong();
            cmd.addAll(
                    List.of(
                            "-cp",
                            System.getProperty("java.class.path"),
                            Worker.class.getName(),
                            data.toString(),
                            keys.toString(),
                            Integer.toString(run),
                            Long.toString(workerSeed)));
            Path stderr = tmp.resolve("worker-" + run + ".err");
            // Acknowledgements go to a file, not a pipe: a line the worker wrote before it was
            // killed is in the file (the kernel keeps what a killed process wrote), while a pipe
            // read by a thread as the JDK's process reaper drains it on exit was measured to lose
            // the last lines in one run of five. A lost "WILL-DEL" made an in-flight delete look
            // like a lost acknowledged write: the false alarm this test used to raise.
            Path ackFile = tmp.resolve("worker-" + run + ".acks");
            Process p =
                    new ProcessBuilder(cmd)
                            .redirectError(stderr.toFile())
                            .redirectOutput(ackFile.toFile())
                            .start();
            int thisRun = run;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!completeLines(ackFile).contains("READY")
                    && p.isAlive()
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(
                    completeLines(ackFile).contains("READY"),
                    () ->
                            "run "
                                    + thisRun
                                    + ": worker did not start: "
                                    + readQuietly(stderr)
                                    + Seeds.replay(seed));
            long killAfter = 50 + rnd.nextInt(700);
            Thread.sleep(killAfter);
            // A worker that died on its own (an exception) would pass for a killed one: check
            // first.
            assertTrue(
                    p.isAlive(),
                    () ->
                            "run "
                                    + thisRun
                                    + ": the worker died before it was killed: "
                                    + readQuietly(stderr)
                                    + Seeds.replay(seed));
            p.destroyForcibly(); // SIGKILL on Linux: no shutdown hooks, no flushing
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            List<String> acks = completeLines(ackFile);
            for (String line : acks) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "PUT" -> {
                        expected.put(f[1], f[2]);
                        mustBeGone.remove(f[1]);
                    }
                    case "DEL" -> {
                        expected.remove(f[1]);
                        mustBeGone.add(f[1]);
                    }
                    // A delete in flight when the worker died may or may not have happened:
                    // its records are required neither present nor absent (until acknowledged).
                    case "WILL-DEL" -> expected.remove(f[1]);
                    case "WILL-DROP" -> {
                        Set<String> doomed = new HashSet<>();
                        expected.entrySet()
                                .removeIf(e -> e.getValue().equals(f[1]) && doomed.add(e.getKey()));
                        dropping.put(f[1], doomed);
                    }
                    case "DROP" -> mustBeGone.addAll(dropping.remove(f[1]));
                    default -> {}
                }
            }
            dropping.clear();
            Path image = tmp.resolve("before-open");
            copyTree(data, image.resolve("data"));
            copyTree(keys, image.resolve("keys"));
            try (Nepenthe store = Nepenthe.open(data, StoreOptions.defaults().withKeystore(keys))) {
                VectorCollection c = store.collection("c");
                List<String> lost =
                        expected.keySet().stream()
                                .filter(id -> c.get(id).isEmpty())
                                .sorted()
                                .toList();
                List<String> back =
                        mustBeGone.stream().filter(id -> c.get(id).isPresent()).sorted().toList();
                if (!lost.isEmpty() || !back.isEmpty()) {
                    Path kept = keepImage(image, run);
                    fail(
                            "run "
                                    + run
                                    + ": "
                                    + lost.size()
                                    + " acknowledged writes lost: "
                                    + lost
                                    + "; "
                                    + back.size()
                                    + " acknowledged deletes came back: "
                                    + back
                                    + "; open report "
                                    + c.openReport()
                                    + "; this run's last acknowledgements: "
                                    + acks.subList(Math.max(0, acks.size() - 12), acks.size())
                                    + "; its deletions: "
                                    + acks.stream().filter(l -> !l.startsWith("PUT")).toList()
                                    + "; the files as the killed worker left them: "
                                    + kept
                                    + Seeds.replay(seed));
                }
                for (IntegrityReport r : c.verifyIntegrity().values()) {
                    assertTrue(r.isClean(), "run " + run + ": " + r + Seeds.replay(seed));
                }
                // Unacknowledged writes may or may not be there; whatever is there is whole, and
                // the text index (its commit may trail the records) finds each by its text.
                List<String> live = c.ids(VectorRecord.DEFAULT_TENANT);
                for (String id : live) {
                    assertEquals("t" + id, c.get(id).orElseThrow().text(), Seeds.replay(seed));
                }
                for (String id : live.subList(0, Math.min(20, live.size()))) {
                    List<SearchHit> byText = c.search(SearchRequest.keyword("t" + id, 2));
                    assertEquals(
                            List.of(id),
                            byText.stream().map(SearchHit::id).toList(),
                            "run "
                                    + run
                                    + ": keyword search for a live record's text"
                                    + Seeds.replay(seed));
                }
            }
            deleteTree(image);
        }
        assertTrue(
                expected.size() > 0,
                "the workers acknowledged no writes: the test exercised nothing");
    }

    /**
     * Lines the worker finished: a line is complete only with its newline, and a line the kill cut
     * short (its tail never written) is no acknowledgement.
     */
    private static List<String> completeLines(Path f) throws IOException {
        if (!Files.exists(f)) {
            return List.of();
        }
        String all = Files.readString(f, StandardCharsets.UTF_8);
        int end = all.lastIndexOf('\n');
        return end < 0 ? List.of() : List.of(all.substring(0, end).split("\n"));
    }

    private static String readQuietly(Path f) {
        try {
            return Files.exists(f) ? Files.readString(f) : "(no output)";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** Moves a failing run's files under target/ so the failure can be studied after the test. */
    private static Path keepImage(Path image, int run) throws IOException {
        Path kept =
                Path.of("target", "crash-failures", "run-" + run + "-" + System.currentTimeMillis())
                        .toAbsolutePath();
        copyTree(image, kept);
        return kept;
    }
}
