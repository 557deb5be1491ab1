package dev.nepenthe.cluster.chaos;

import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.cli.ClusterMain;
import dev.nepenthe.core.MasterKeyFiles;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Three replicas as child JVMs ({@code cluster node}) on loopback, each on its own folder, that the
 * chaos thread kills (SIGKILL) and starts again. A trimmed copy of the CLI's package-private {@code
 * LocalNodes} (same command line, same layout: member {@code n<i>} serves clients on {@code
 * 127.0.0.1:base+i}, Raft on {@code base+100+i}, data in {@code DIR/n<i>}), so this test needs no
 * change to main code's visibility. Every method that touches a process is synchronized: the chaos
 * thread and the workload's checks of {@link #alive} run at once.
 *
 * <p>Replicas reach each other by name, so the test can put a proxy on every directed link: Ratis
 * gives every replica the peer addresses of the leader's configuration, the same text everywhere,
 * but each replica's JVM resolves names from its own hosts file ({@code jdk.net.hosts.file}). In
 * replica i's file its own name is {@link #ip ip(i, i)}, where it binds its Raft server, and peer
 * j's name is {@code ip(i, j)}, where the test's {@link Links} proxy for i to j listens on j's Raft
 * port.
 */
final class ChaosNodes implements AutoCloseable {

    static final int N = 3;
    private static final String GROUP = "nepenthe-chaos";
    private static final String DOMAIN = ".nepenthe.test";

    private final Path dir;
    private final List<Member> members = new ArrayList<>();
    private final Process[] processes = new Process[N];

    private ChaosNodes(Path dir, int basePort) {
        this.dir = dir.toAbsolutePath().normalize();
        for (int i = 1; i <= N; i++) {
            members.add(
                    new Member(
                            "n" + i,
                            "n" + i + DOMAIN + ":" + (basePort + 100 + i),
                            "127.0.0.1:" + (basePort + i)));
        }
    }

    /**
     * A group on a random block of ports that are free now on every address it uses (the nodes and
     * the link proxies bind them a bit later).
     */
    static ChaosNodes onFreePorts(Path dir, Random rnd) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            // Below the kernel's ephemeral range (32768 up): there, an outgoing connection can take
            // a port between this check and the node's bind.
            int base = 10_000 + rnd.nextInt(21_000);
            if (free(base)) {
                ChaosNodes nodes = new ChaosNodes(dir, base);
                Files.createDirectories(nodes.dir);
                NepentheServer.bootstrapTokens(nodes.tokensFile(), nodes.tokenFile());
                // One master key for the group, as 'cluster up' gives its nodes: a replica that
                // falls behind the leader's log catches up by a copy only that key reads.
                MasterKeyFiles.ensure(nodes.groupKeyFile());
                for (int i = 0; i < N; i++) {
                    nodes.writeHostsFile(i);
                }
                return nodes;
            }
        }
        throw new IOException("no free block of loopback ports found in 200 tries");
    }

    private static boolean free(int base) {
        for (int j = 0; j < N; j++) {
            if (!free(InetAddress.getLoopbackAddress(), base + 1 + j)) {
                return false;
            }
            for (int i = 0; i < N; i++) {
                if (!free(ip(i, j), base + 101 + j)) {
                    return false;
                }
            }
        }
        return true;
    }

    private static boolean free(InetAddress ip, int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(ip, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The loopback address at which replica {@code from} reaches replica {@code to}: {@code
     * 127.0.<from+1>.<to+1>}, replica i's own when both are i (Linux routes all of 127/8 to
     * loopback).
     */
    static InetAddress ip(int from, int to) {
        try {
            return InetAddress.getByAddress(
                    new byte[] {127, 0, (byte) (from + 1), (byte) (to + 1)});
        } catch (UnknownHostException e) {
            throw new AssertionError("four bytes are an IPv4 address", e);
        }
    }

    /** The port of replica i's Raft server. */
    int raftPort(int i) {
        return Member.port(members.get(i).raftAddress(), "raft address");
    }

    private Path hostsFile(int i) {
        return dir.resolve(id(i) + ".hosts");
    }

    /**
     * Replica i's hosts file: each member's name at {@link #ip ip(i, member)}, and this machine's
     * names at 127.0.0.1 (with the file set, the JVM resolves from it alone).
     */
    private void writeHostsFile(int i) throws IOException {
        StringBuilder out = new StringBuilder("127.0.0.1 localhost");
        try {
            out.append(' ').append(InetAddress.getLocalHost().getHostName());
        } catch (UnknownHostException e) {
            // The machine's name does not resolve here either: nothing to copy.
        }
        out.append('\n');
        for (int j = 0; j < N; j++) {
            out.append(ip(i, j).getHostAddress())
                    .append(' ')
                    .append(Member.host(members.get(j).raftAddress()))
                    .append('\n');
        }
        Files.writeString(hostsFile(i), out.toString(), StandardCharsets.UTF_8);
    }

    List<Member> members() {
        return members;
    }

    String id(int i) {
        return members.get(i).id();
    }

    Path dataDir(int i) {
        return dir.resolve(id(i));
    }

    Path log(int i) {
        return dir.resolve(id(i) + ".log");
    }

    private Path tokensFile() {
        return dir.resolve("tokens");
    }

    private Path tokenFile() {
        return dir.resolve("operator.token");
    }

    String token() throws IOException {
        return Files.readString(tokenFile(), StandardCharsets.UTF_8).strip();
    }

    private List<String> command(int i) {
        List<String> cmd = new ArrayList<>();
        cmd.add(
                ProcessHandle.current()
                        .info()
                        .command()
                        .orElse(
                                Path.of(System.getProperty("java.home"), "bin", "java")
                                        .toString()));
        for (String f : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // An agent or debugger would clash with its parent's (same port, same output file).
            if (!f.startsWith("-agentlib")
                    && !f.startsWith("-javaagent")
                    && !f.startsWith("-Xrunjdwp")) {
                cmd.add(f);
            }
        }
        cmd.add("-Djdk.net.hosts.file=" + hostsFile(i));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ClusterMain.class.getName());
        cmd.add("node");
        cmd.add("--id");
        cmd.add(id(i));
        cmd.add("--group");
        cmd.add(GROUP);
        for (Member m : members) {
            cmd.add("--member");
            cmd.add(m.id() + "=" + m.clientAddress() + "/" + m.raftAddress());
        }
        cmd.add("--data");
        cmd.add(dataDir(i).toString());
        cmd.add("--tokens");
        cmd.add(tokensFile().toString());
        cmd.add("--master-key");
        cmd.add(groupKeyFile().toString());
        cmd.add("--election-timeout-ms");
        cmd.add("1000-2000");
        cmd.add("--stop-with");
        cmd.add(String.valueOf(ProcessHandle.current().pid()));
        return cmd;
    }

    /** The group's master key, made once before any node starts. */
    Path groupKeyFile() {
        return dir.resolve("group.key");
    }

    /** Starts member i's process on its folder (its output appended to its log). */
    synchronized void start(int i) throws IOException {
        if (processes[i] != null && processes[i].isAlive()) {
            throw new IllegalStateException(id(i) + " is running already");
        }
        processes[i] =
                new ProcessBuilder(command(i))
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log(i).toFile()))
                        .start();
    }

    /** SIGKILL of member i's process, as a crash; returns its pid, or -1 if it was not running. */
    synchronized long kill(int i) throws InterruptedException {
        Process p = processes[i];
        if (p == null) {
            return -1;
        }
        p.destroyForcibly();
        p.waitFor();
        processes[i] = null;
        return p.pid();
    }

    synchronized boolean alive(int i) {
        return processes[i] != null && processes[i].isAlive();
    }

    /** How a member's process stands, for a failure message. */
    synchronized String describe(int i) {
        Process p = processes[i];
        if (p == null) {
            return id(i) + " stopped";
        }
        return p.isAlive()
                ? id(i) + " running (pid " + p.pid() + ")"
                : id(i) + " ended with status " + p.exitValue();
    }

    /**
     * Waits until member i answers a linearizable read (so the group has a leader and it caught
     * up).
     *
     * @throws IllegalStateException if its process ends first or the time runs out, with the tail
     *     of its log
     */
    void awaitServing(ChaosClients clients, int i, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!clients.answers(i)) {
            if (!alive(i) || System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        id(i)
                                + (alive(i)
                                        ? " did not answer within " + max.toSeconds() + " s"
                                        : " ended before it served")
                                + "; last lines of "
                                + log(i)
                                + ":\n"
                                + tail(log(i), 15));
            }
            Thread.sleep(200);
        }
    }

    static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(" + log + " cannot be read: " + e.getMessage() + ")";
        }
    }

    /** SIGKILL to every process still running: the test checks files, not a clean shutdown. */
    @Override
    public synchronized void close() {
        for (int i = 0; i < N; i++) {
            Process p = processes[i];
            if (p != null) {
                p.destroyForcibly();
                try {
                    p.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                processes[i] = null;
            }
        }
    }
}
