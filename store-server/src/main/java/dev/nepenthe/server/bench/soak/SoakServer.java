package dev.nepenthe.server.bench.soak;

import com.sun.tools.attach.VirtualMachine;
import dev.nepenthe.testing.ChildJvm;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The server under soak: {@code nepenthe serve} in a JVM of its own (this JVM's flags and class
 * path, its own heap limit), on loopback, so that it can be stopped cleanly (SIGTERM, the graceful
 * shutdown) or killed (SIGKILL) and started again over the same folders. Its output goes to a log
 * file in the run's folder.
 *
 * <p>Memory is read from outside: the resident set from {@code /proc/PID/status}, and the heap
 * through JMX, by attaching to the process (the attach API starts its local management agent; the
 * server itself exposes no heap figure). The heap is read after a full collection the probe asks
 * for, so that it measures what is live, not how lazily the collector ran.
 */
final class SoakServer {

    /**
     * What a probe read; {@code heapBytes} is -1 with {@code heapProblem} saying why when JMX could
     * not be reached.
     */
    record Memory(long heapBytes, long rssBytes, String heapProblem) {}

    private final Path keys;
    private final Path tokens;
    private final Path snapshots;
    private final Path log;
    private final String heap;
    private Path data;
    private Process process;
    private int port;

    SoakServer(Path data, Path keys, Path tokens, Path snapshots, Path log, String heap) {
        this.data = data;
        this.keys = keys;
        this.tokens = tokens;
        this.snapshots = snapshots;
        this.log = log;
        this.heap = heap;
    }

    /**
     * Serves another data folder from the next start on (a restored snapshot, for the rollback
     * fault).
     */
    void useData(Path folder) {
        this.data = folder;
    }

    /**
     * Starts the server and waits until it serves (it writes its port once it listens).
     *
     * @return the port
     * @throws IOException if it exits, or does not serve within {@code timeoutSeconds}
     */
    int start(int timeoutSeconds) throws IOException, InterruptedException {
        Path portFile = log.resolveSibling("port");
        Files.deleteIfExists(portFile);
        List<String> cmd = ChildJvm.command(heap);
        cmd.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        "dev.nepenthe.server.Main",
                        "serve",
                        "--data",
                        data.toString(),
                        "--keys",
                        keys.toString(),
                        "--tokens",
                        tokens.toString(),
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--port-file",
                        portFile.toString(),
                        "--snapshot-dir",
                        snapshots.toString()));
        process =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                        .start();
        process.getOutputStream().close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        while (!Files.exists(portFile) || Files.size(portFile) == 0) {
            if (!process.isAlive()) {
                throw new IOException(
                        "the server exited with "
                                + process.exitValue()
                                + " before serving; see "
                                + log);
            }
            if (System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IOException(
                        "the server did not serve within " + timeoutSeconds + " s; see " + log);
            }
            Thread.sleep(20);
        }
        port = Integer.parseInt(Files.readString(portFile).strip());
        return port;
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    /**
     * A clean stop: SIGTERM, which runs the server's graceful shutdown (calls in flight finish,
     * then the store closes).
     *
     * @return null, or what went wrong (it did not exit in time and was killed)
     */
    String stop(int timeoutSeconds) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            return "the server did not stop within "
                    + timeoutSeconds
                    + " s of SIGTERM and was killed";
        }
        return null;
    }

    /** SIGKILL: no shutdown hook, no close; the next start recovers from what is on disk. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    /**
     * The server's heap after a full collection (through JMX) and its resident set (from /proc).
     * The JMX address comes from the local agent of the child process this harness started, not
     * from outside input, so the JNDI lookup behind it resolves nothing a user chose.
     */
    @SuppressWarnings("BanJNDI")
    Memory memory() {
        long rss = rss(process.pid());
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(process.pid()));
            String url;
            try {
                url = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
            try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(url))) {
                MemoryMXBean m =
                        ManagementFactory.newPlatformMXBeanProxy(
                                c.getMBeanServerConnection(),
                                ManagementFactory.MEMORY_MXBEAN_NAME,
                                MemoryMXBean.class);
                m.gc();
                return new Memory(m.getHeapMemoryUsage().getUsed(), rss, null);
            }
        } catch (Exception | LinkageError e) {
            return new Memory(-1, rss, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /** VmRSS from /proc/PID/status, in bytes; -1 where there is no /proc. */
    static long rss(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    String[] f = line.substring(6).trim().split("\\s+", -1);
                    return Long.parseLong(f[0]) * 1024; // the kernel reports kB
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
