package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM that exits while its store is being written, as a server does at SIGTERM: its own shutdown
 * hook lets the writes in flight go on for a moment (the server's grace for calls in flight), then
 * stops them and closes the store. No library's exit hook may close the store's files under those
 * writes: every write either succeeds or is never started, and the reopened store holds exactly the
 * writes that succeeded. Chronicle Map's close-on-exit hook used to close the id map first, failing
 * the writes with "map closed" (found by the soak, issue 47).
 */
class ExitWhileWritingTest {

    /**
     * Child JVM: writes from two threads, exits from main; prints "acked N failed F first-failure".
     */
    public static final class Worker {
        public static void main(String[] args) throws Exception {
            Nepenthe store =
                    Nepenthe.open(
                            Path.of(args[0]),
                            StoreOptions.defaults().withKeystore(Path.of(args[1])));
            VectorCollection c = store.createCollection(CollectionSpec.of("c", 4, Metric.L2));
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger acked = new AtomicInteger();
            AtomicInteger failed = new AtomicInteger();
            AtomicReference<String> first = new AtomicReference<>("none");
            List<Thread> writers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                writers.add(
                        Thread.ofPlatform()
                                .daemon()
                                .start(
                                        () -> {
                                            for (int n = 0; !stop.get(); n++) {
                                                try {
                                                    c.upsert(
                                                            VectorRecord.builder(id + "-" + n)
                                                                    .vector(
                                                                            new float[] {
                                                                                n, id, 1, 2
                                                                            })
                                                                    .build());
                                                    acked.incrementAndGet();
                                                } catch (RuntimeException e) {
                                                    failed.incrementAndGet();
                                                    first.compareAndSet(
                                                            "none",
                                                            e.toString().replace('\n', ' '));
                                                }
                                            }
                                        }));
            }
            Runtime.getRuntime()
                    .addShutdownHook(
                            new Thread(
                                    () -> {
                                        try {
                                            Thread.sleep(300); // the writes in flight go on, as a
                                            // server's calls do in its grace
                                            stop.set(true);
                                            for (Thread w : writers) {
                                                w.join();
                                            }
                                            store.close();
                                        } catch (Exception e) {
                                            first.compareAndSet("none", "close: " + e);
                                            failed.incrementAndGet();
                                        }
                                        System.out.println(
                                                "acked "
                                                        + acked.get()
                                                        + " failed "
                                                        + failed.get()
                                                        + " "
                                                        + first.get());
                                        System.out.flush();
                                    }));
            while (acked.get() < 20) {
                Thread.sleep(5);
            }
            System.exit(0);
        }
    }

    @Test
    void writesInFlightAtExitSucceedAndAreKept(@TempDir Path tmp) throws Exception {
        Path data = tmp.resolve("data");
        Path keys = tmp.resolve("keys");
        List<String> cmd =
                new ArrayList<>(
                        List.of(
                                ProcessHandle.current().info().command().orElseThrow(),
                                "-Xmx256m"));
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-")
                    || a.startsWith("--enable-native-access")
                    || a.startsWith("--sun-misc")
                    || a.startsWith("-Dchronicle")
                    || a.startsWith("-Dnepenthe")) {
                cmd.add(a);
            }
        }
        cmd.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        Worker.class.getName(),
                        data.toString(),
                        keys.toString()));
        Path out = tmp.resolve("worker.out");
        Process p =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile())
                        .start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the worker did not exit within 120 s");
        String text = Files.readString(out, StandardCharsets.UTF_8);
        String line =
                text.lines()
                        .filter(l -> l.startsWith("acked "))
                        .findFirst()
                        .orElseThrow(
                                () -> new AssertionError("the worker printed no count: " + text));
        String[] f = line.split(" ", 5);
        assertEquals("0", f[3], "writes failed while the JVM exited: " + line);
        int acked = Integer.parseInt(f[1]);
        assertTrue(acked >= 20, line);
        try (Nepenthe store = Nepenthe.open(data, StoreOptions.defaults().withKeystore(keys))) {
            assertEquals(
                    acked,
                    store.collection("c").size(VectorRecord.DEFAULT_TENANT),
                    "the reopened store holds exactly the acknowledged writes");
        }
    }
}
