package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.index.IntegrityReport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM ingests and deletes, printing an acknowledgement after each call returns; the
 * test kills it with SIGKILL at a seeded random moment, reopens the store and checks: every
 * acknowledged write is there, nothing acknowledged as deleted came back, every file verifies
 * and the indexes agree with the records. Runs {@value #RUNS} times in the suite; the Maven
 * profile {@code crash-long} ({@code mvn -B verify -Pcrash-long}) runs it 200 times.
 */
class CrashTest {

    static final int RUNS = 20;

    /** Child-JVM entry point: writes until killed. Args: data folder, keystore folder, seed. */
    public static final class Worker {
        public static void main(String[] args) throws Exception {
            Path data = Path.of(args[0]);
            StoreOptions opts = StoreOptions.defaults().withKeystore(Path.of(args[1])).withCheckpointBytes(1 << 16);
            Random rnd = new Random(Long.parseLong(args[2]));
            PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
            try (Nepenthe store = Nepenthe.open(data, opts)) {
                VectorCollection c = store.collections().isEmpty()
                        ? store.createCollection(CollectionSpec.of("c", 8, Metric.L2)) : store.collection("c");
                out.println("READY");
                for (int n = 0; ; n++) {
                    int op = rnd.nextInt(10);
                    if (op < 7) {
                        List<VectorRecord> batch = new ArrayList<>();
                        int size = 1 + rnd.nextInt(20);
                        for (int i = 0; i < size; i++) {
                            String id = args[2] + "-" + n + "-" + i;
                            float[] v = new float[8];
                            v[0] = n;
                            v[1] = i;
                            batch.add(VectorRecord.builder(id).subject("s" + rnd.nextInt(6)).vector(v).text("t" + id).build());
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
    void killedWritersLoseNothingAcknowledgedAndResurrectNothingDeleted(@TempDir Path tmp) throws Exception {
        int runs = Integer.getInteger("nepenthe.crash.runs", RUNS);
        Random rnd = new Random(20261129L);
        Path data = tmp.resolve("data");
        Path keys = tmp.resolve("keys");
        // What the store must hold: acknowledged puts minus acknowledged deletes, across runs.
        java.util.Map<String, String> expected = new java.util.HashMap<>();
        Set<String> mustBeGone = new HashSet<>();
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        List<String> jvmFlags = new ArrayList<>();
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-") || a.startsWith("--enable-native-access") || a.startsWith("--sun-misc")
                    || a.startsWith("-Dchronicle") || a.startsWith("-Dnepenthe")) {
                jvmFlags.add(a);
            }
        }
        for (int run = 0; run < runs; run++) {
            List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx256m"));
            cmd.addAll(jvmFlags);
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Worker.class.getName(),
                    data.toString(), keys.toString(), Long.toString(run)));
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = lines.readLine();
            assertEquals("READY", first, "worker did not start");
            // Collect acknowledgements on another thread: the pipe may close when the child dies.
            List<String> acks = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread reader = new Thread(() -> {
                try {
                    for (String line; (line = lines.readLine()) != null; ) {
                        acks.add(line);
                    }
                } catch (IOException closed) {
                    // The child is gone; what was read is what it acknowledged.
                }
            });
            reader.start();
            long killAfter = 50 + rnd.nextInt(700);
            Thread.sleep(killAfter);
            p.destroyForcibly(); // SIGKILL on Linux: no shutdown hooks, no flushing
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            reader.join(30_000);
            for (String line : acks) {
                String[] f = line.split(" ");
                if (f.length < 2) {
                    continue; // a line cut by the kill was never a complete acknowledgement
                }
                switch (f[0]) {
                    case "PUT" -> {
                        if (f.length == 3) {
                            expected.put(f[1], f[2]);
                            mustBeGone.remove(f[1]);
                        }
                    }
                    case "DEL" -> {
                        expected.remove(f[1]);
                        mustBeGone.add(f[1]);
                    }
                    // A delete in flight when the worker died may or may not have happened:
                    // its records are required neither present nor absent (until acknowledged).
                    case "WILL-DEL" -> expected.remove(f[1]);
                    case "WILL-DROP" -> expected.values().removeIf(subject -> subject.equals(f[1]));
                    case "DROP" -> expected.entrySet().removeIf(e -> {
                        if (e.getValue().equals(f[1])) {
                            mustBeGone.add(e.getKey());
                            return true;
                        }
                        return false;
                    });
                    default -> { }
                }
            }
            try (Nepenthe store = Nepenthe.open(data, StoreOptions.defaults().withKeystore(keys))) {
                VectorCollection c = store.collection("c");
                List<String> lost = expected.keySet().stream().filter(id -> c.get(id).isEmpty()).sorted().toList();
                int thisRun = run;
                assertTrue(lost.isEmpty(), () -> "run " + thisRun + ": " + lost.size() + " acknowledged writes lost: " + lost
                        + "; open report " + c.openReport() + "; this run's last acknowledgements: "
                        + acks.subList(Math.max(0, acks.size() - 12), acks.size()) + "; its deletions: "
                        + acks.stream().filter(l -> !l.startsWith("PUT")).toList());
                for (String id : mustBeGone) {
                    assertTrue(c.get(id).isEmpty(), "run " + run + ": acknowledged delete came back");
                }
                for (IntegrityReport r : c.verifyIntegrity().values()) {
                    assertTrue(r.isClean(), "run " + run + ": " + r);
                }
                // Unacknowledged writes may or may not be there; whatever is there is whole.
                for (String id : c.ids(VectorRecord.DEFAULT_TENANT)) {
                    assertEquals("t" + id, c.get(id).orElseThrow().text());
                }
            }
        }
        assertTrue(expected.size() > 0, "the workers acknowledged no writes: the test exercised nothing");
    }
}
