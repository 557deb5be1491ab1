package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The forget worker runs at the OS priority the options ask for (docs/FORGET.md, "Who gets the
 * CPU"). Oracle: the kernel's own record of each thread, {@code /proc/self/task/<tid>/stat} (field
 * 19 is the nice value), found by the thread's name in {@code comm}.
 */
class ForgetWorkerPriorityTest {

    @TempDir Path tmp;

    @Test
    void workerRunsAtTheConfiguredNiceAndSearchesAtNormalPriority() throws Exception {
        assumeTrue(
                System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux"),
                "Linux only");
        assumeTrue(
                Nepenthe.class.getModule().isNativeAccessEnabled(), "needs --enable-native-access");
        // The build may itself run under `nice`: the worker only ever lowers its priority, so
        // it runs at the configured value or at the process's own, whichever is lower.
        int base = niceOf(Path.of("/proc/thread-self/stat"));
        assertAll(Math.max(10, base), niceAfterOneForget(StoreOptions.defaults(), "default"));
        assertAll(
                base,
                niceAfterOneForget(StoreOptions.defaults().withForgetWorkerNice(0), "normal"));
        assertAll(
                Math.max(19, base),
                niceAfterOneForget(StoreOptions.defaults().withForgetWorkerNice(19), "lowest"));
        // The caller's thread (where the mark runs, and where searches run) is untouched.
        assertEquals(base, niceOf(Path.of("/proc/thread-self/stat")));
    }

    /**
     * The worker and the threads of its pool (names start "nepenthe-forget"): at least the worker.
     */
    private static void assertAll(int expected, List<Integer> nices) {
        assertTrue(nices.size() >= 2, "expected the worker and a pool thread, found " + nices);
        for (int n : nices) {
            assertEquals(expected, n, "nice values of the forget threads: " + nices);
        }
    }

    @Test
    void aNiceOutsideTheRangeIsRefusedWithItsName() {
        var e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> StoreOptions.defaults().withForgetWorkerNice(20));
        assertTrue(
                e.getMessage().contains("forgetWorkerNice") && e.getMessage().contains("20"),
                e.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> StoreOptions.defaults().withForgetWorkerNice(-1));
    }

    /** Opens a store, forgets one subject, and returns the nice value of every forget thread. */
    private List<Integer> niceAfterOneForget(StoreOptions base, String name) throws Exception {
        Path dir = tmp.resolve(name);
        try (Nepenthe store =
                Nepenthe.open(dir.resolve("data"), base.withKeystore(dir.resolve("keys")))) {
            VectorCollection c =
                    store.createCollection(
                            new CollectionSpec("c", 4, Metric.COSINE, IndexSpec.exact()));
            c.upsertAll(
                    List.of(
                            VectorRecord.builder("r1")
                                    .subject("s")
                                    .vector(new float[] {1, 0, 0, 0})
                                    .build(),
                            VectorRecord.builder("r2")
                                    .subject("t")
                                    .vector(new float[] {0, 1, 0, 0})
                                    .build()));
            ForgetOperation op =
                    store.forget(ForgetRequest.of(ForgetScope.subject("s"), "k-" + name, "test"));
            assertEquals(
                    OperationState.SEALED,
                    store.awaitOperation(op.id(), Duration.ofSeconds(60)).state());
            // The worker thread is alive until the store closes: read its priority now.
            List<Integer> nices = new ArrayList<>();
            try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
                for (Path task : tasks.toList()) {
                    String comm;
                    try {
                        comm = Files.readString(task.resolve("comm")).trim();
                    } catch (java.io.IOException gone) {
                        continue; // a thread that ended while we listed
                    }
                    if (comm.startsWith("nepenthe-forget")) {
                        nices.add(niceOf(task.resolve("stat")));
                    }
                }
            }
            return nices;
        }
    }

    /**
     * Field 19 of a stat line; the command name (field 2) may hold spaces, so count after its ')'.
     */
    private static int niceOf(Path stat) throws java.io.IOException {
        String line = Files.readString(stat);
        String[] rest = line.substring(line.lastIndexOf(')') + 2).split(" ");
        return Integer.parseInt(rest[16]); // rest[0] is field 3 (state), so field 19 is rest[16]
    }
}
