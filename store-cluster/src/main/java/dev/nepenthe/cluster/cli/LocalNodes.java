package dev.nepenthe.cluster.cli;

import dev.nepenthe.cluster.Member;
import dev.nepenthe.core.MasterKeyFiles;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A group of replicas on loopback, each a child JVM running {@code cluster node} with this JVM's
 * java binary, flags and class path: member {@code n<i>} serves clients on {@code base+i} and Raft
 * on {@code base+100+i}, keeps its data in {@code DIR/n<i>} and writes its output to {@code
 * DIR/n<i>.log}; a node stops when this JVM ends, however it ends. One tokens file and one operator
 * token file under DIR serve every member. A process can be killed (SIGKILL) and started again on
 * its folder; {@link #close} stops the ones still running with SIGTERM (their shutdown hook closes
 * the replica) and waits for them.
 */
final class LocalNodes implements AutoCloseable {

    static final String GROUP = "nepenthe-local";

    /** How long a node gets to close after SIGTERM before it is killed. */
    private static final Duration STOP_GRACE = Duration.ofSeconds(20);

    private final Path dir;
    private final List<Member> members;
    private final Process[] processes;
    private final String electionTimeoutMs;

    /**
     * @param dir the group's folder
     * @param n how many members
     * @param basePort client ports are base+1..base+n, Raft ports base+101..base+100+n
     * @param electionTimeoutMs the nodes' --election-timeout-ms (MIN-MAX)
     */
    LocalNodes(Path dir, int n, int basePort, String electionTimeoutMs) {
        if (n < 1 || n > 99) {
            throw new IllegalArgumentException("--nodes: expected 1 to 99, got " + n);
        }
        if (basePort < 1024 || basePort + 100 + n > 65_535) {
            throw new IllegalArgumentException(
                    "--base-port: expected 1024 to " + (65_535 - 100 - n) + ", got " + basePort);
        }
        this.dir = dir.toAbsolutePath().normalize();
        this.members = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            members.add(
                    new Member(
                            "n" + i,
                            "127.0.0.1:" + (basePort + 100 + i),
                            "127.0.0.1:" + (basePort + i)));
        }
        this.processes = new Process[n];
        this.electionTimeoutMs = electionTimeoutMs;
    }

    List<Member> members() {
        return members;
    }

    int size() {
        return members.size();
    }

    Path dir() {
        return dir;
    }

    Path dataDir(int i) {
        return dir.resolve(members.get(i).id());
    }

    Path log(int i) {
        return dir.resolve(members.get(i).id() + ".log");
    }

    Path tokensFile() {
        return dir.resolve("tokens");
    }

    Path tokenFile() {
        return dir.resolve("operator.token");
    }

    /**
     * Writes the tokens file and the operator token on first run; a later run reuses both.
     *
     * @return whether they were written now
     * @throws IllegalStateException if only one of the two exists (the token cannot be recovered
     *     from its hash)
     */
    boolean ensureTokens() throws IOException {
        boolean tokens = Files.exists(tokensFile());
        boolean token = Files.exists(tokenFile());
        if (tokens && token) {
            return false;
        }
        if (tokens || token) {
            throw new IllegalStateException(
                    "expected both "
                            + tokensFile()
                            + " and "
                            + tokenFile()
                            + " or neither, got only "
                            + (tokens ? tokensFile() : tokenFile())
                            + "; remove it to start with a new token");
        }
        Files.createDirectories(dir);
        NepentheServer.bootstrapTokens(tokensFile(), tokenFile());
        return true;
    }

    /** The group's master key: one for every node, so one can catch up by a copy of another. */
    Path groupKeyFile() {
        return dir.resolve("group.key");
    }

    /**
     * Makes the group's master key when the group is new (before any node starts, so that they do
     * not race to make one each); a later run reuses it. A group made before there was one keeps a
     * key per node.
     */
    void ensureGroupKey() throws IOException {
        if (Files.isDirectory(dataDir(0))) {
            return;
        }
        Files.createDirectories(dir);
        MasterKeyFiles.ensure(groupKeyFile());
    }

    String token() throws IOException {
        return Files.readString(tokenFile(), StandardCharsets.UTF_8).strip();
    }

    /**
     * Refuses to start when a port of the group is taken (another cluster, or another program).
     *
     * @throws IllegalStateException naming the port, the member and what it is for
     */
    void checkPortsFree() {
        for (Member m : members) {
            checkFree(m.clientAddress(), "client port of " + m.id());
            checkFree(m.raftAddress(), "Raft port of " + m.id());
        }
    }

    private static void checkFree(String address, String what) {
        int port = Member.port(address, what);
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        } catch (IOException e) {
            throw new IllegalStateException(
                    what
                            + ": expected port "
                            + port
                            + " on 127.0.0.1 to be free, got it taken ("
                            + e.getMessage()
                            + "); is a cluster already running? Pass --base-port to use others");
        }
    }

    /** The command line of member i's process. */
    List<String> command(int i) {
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
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ClusterMain.class.getName());
        cmd.add("node");
        cmd.add("--id");
        cmd.add(members.get(i).id());
        cmd.add("--group");
        cmd.add(GROUP);
        for (Member m : members) {
            cmd.add("--member");
            cmd.add(MemberFlag.format(m));
        }
        cmd.add("--data");
        cmd.add(dataDir(i).toString());
        cmd.add("--tokens");
        cmd.add(tokensFile().toString());
        if (Files.exists(groupKeyFile())) {
            cmd.add("--master-key");
            cmd.add(groupKeyFile().toString());
        }
        cmd.add("--election-timeout-ms");
        cmd.add(electionTimeoutMs);
        cmd.add("--stop-with");
        cmd.add(String.valueOf(ProcessHandle.current().pid()));
        return cmd;
    }

    /** Starts member i's process (its output appended to its log). */
    void start(int i) throws IOException {
        if (processes[i] != null && processes[i].isAlive()) {
            throw new IllegalStateException(members.get(i).id() + " is running already");
        }
        Files.createDirectories(dir);
        processes[i] =
                new ProcessBuilder(command(i))
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log(i).toFile()))
                        .start();
    }

    /** SIGKILL of member i's process, as a crash: nothing of it runs on. */
    void kill(int i) throws InterruptedException {
        Process p = processes[i];
        if (p != null) {
            p.destroyForcibly();
            p.waitFor();
            processes[i] = null;
        }
    }

    boolean alive(int i) {
        return processes[i] != null && processes[i].isAlive();
    }

    long pid(int i) {
        return processes[i].pid();
    }

    /**
     * Waits until each given member answers a read through its gRPC API (so the group has a
     * leader).
     *
     * @throws IllegalStateException if a process ends first (with the tail of its log) or the time
     *     runs out
     */
    void awaitServing(String token, Duration max, int... which)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        for (int i : which) {
            try (NodeClient c = new NodeClient(members.get(i), token)) {
                while (!c.answers()) {
                    if (!alive(i)) {
                        System.err.println(tail(log(i), 10));
                        throw new IllegalStateException(
                                members.get(i).id()
                                        + " ended before it served (exit status "
                                        + processes[i].exitValue()
                                        + "); its output is in "
                                        + log(i)
                                        + ", whose last lines are above");
                    }
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                members.get(i).id()
                                        + " did not answer within "
                                        + max.toSeconds()
                                        + " s (no leader elected?); see "
                                        + log(i));
                    }
                    Thread.sleep(200);
                }
            }
        }
    }

    /** The last lines of a log, for an error message. */
    static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(" + log + " cannot be read: " + e.getMessage() + ")";
        }
    }

    /** Prints where each member is, for a user. */
    void describe(PrintStream out) {
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            out.printf(
                    "   %s  client %s  raft %s  data %s  log %s%n",
                    m.id(), m.clientAddress(), m.raftAddress(), dataDir(i), log(i));
        }
    }

    /** SIGTERM to every running member, then waits; one that does not end in time is killed. */
    @Override
    public void close() {
        for (Process p : processes) {
            if (p != null && p.isAlive()) {
                p.destroy();
            }
        }
        long deadline = System.nanoTime() + STOP_GRACE.toNanos();
        for (int i = 0; i < processes.length; i++) {
            Process p = processes[i];
            if (p == null) {
                continue;
            }
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                if (!p.waitFor(left, TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            processes[i] = null;
        }
    }
}
