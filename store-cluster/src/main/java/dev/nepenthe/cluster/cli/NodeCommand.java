package dev.nepenthe.cluster.cli;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.ClusterReplica;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.NodeTls;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe cluster node}: one replica in this process until SIGTERM or SIGINT, when a
 * shutdown hook closes it (its store, Raft server and journal shut cleanly). {@code up} and {@code
 * demo} run their nodes through this command in child processes.
 */
@Command(
        name = "node",
        mixinStandardHelpOptions = true,
        description = {
            "Run one replica of a group in this process until SIGTERM or Ctrl-C.",
            "Every member of the group is given the same --group and --member flags."
        })
final class NodeCommand implements Callable<Integer> {

    /** What a node prints on standard output once it serves; {@code up} and tests wait for it. */
    static final String READY = "nepenthe cluster node: serving";

    @Spec CommandSpec spec;

    @Option(names = "--id", required = true, paramLabel = "ID", description = "This member's id.")
    String id;

    @Option(
            names = "--group",
            required = true,
            paramLabel = "NAME",
            description = "The group's name; the same on every member.")
    String group;

    @Option(
            names = "--member",
            required = true,
            paramLabel = MemberFlag.FORM,
            description = "A member of the group, this one included; once per member.")
    List<String> members = new ArrayList<>();

    @Option(
            names = "--data",
            required = true,
            paramLabel = "DIR",
            description = "This replica's folder (made if missing; reused on restart).")
    Path data;

    @Option(
            names = "--tokens",
            required = true,
            paramLabel = "FILE",
            description = "The tokens file of the gRPC API (hashes of the tokens it accepts).")
    Path tokens;

    @Option(
            names = "--election-timeout-ms",
            paramLabel = "MIN-MAX",
            defaultValue = "1000-2000",
            description =
                    "How long a follower waits for the leader before it stands (default"
                            + " ${DEFAULT-VALUE}).")
    String electionTimeout;

    @Option(
            names = "--stop-with",
            paramLabel = "PID",
            hidden = true,
            description =
                    "Stop (closing the replica) when the process PID ends: how 'up' and"
                            + " 'demo' keep a node from outliving them when they are killed.")
    Long stopWith;

    @Option(
            names = "--tls-cert",
            paramLabel = "PEM",
            description =
                    "This replica's certificate chain: with --tls-key and --tls-trust, mutual TLS"
                            + " between replicas and TLS on the client API (required when a member"
                            + " is beyond loopback).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "Its PKCS#8 private key.")
    Path tlsKey;

    @Option(
            names = "--tls-trust",
            paramLabel = "PEM",
            description = "The certificates this replica accepts from the other members.")
    Path tlsTrust;

    @Option(
            names = "--master-key",
            paramLabel = "FILE",
            description =
                    "The group's master key, the same on every member (NEPENTHE_MASTER_KEY takes"
                            + " precedence). Needed for a replica to catch up by a copy of"
                            + " another's store: to join, or after the leader's log moved on."
                            + " Made here if missing, unless --join.")
    Path masterKey;

    @Option(
            names = "--join",
            description =
                    "Join a running group: start with no configuration and wait until a member"
                            + " adds this one ('nepenthe cluster add-replica'); --member lists the"
                            + " running members and this one. Needs --master-key.")
    boolean join;

    @Option(names = "--verbose", description = "On an error, print the stack trace too.")
    boolean verbose;

    /**
     * The replica's configuration from the flags.
     *
     * @throws CommandLine.ParameterException naming the flag, what was expected and what arrived
     */
    ClusterConfig config() {
        List<Member> parsed = new ArrayList<>();
        for (String m : members) {
            try {
                parsed.add(MemberFlag.parse(m));
            } catch (IllegalArgumentException e) {
                throw misuse(e.getMessage());
            }
        }
        if (!Files.isRegularFile(tokens)) {
            throw misuse(
                    "--tokens: expected a tokens file, got '"
                            + tokens
                            + "', which "
                            + (Files.exists(tokens) ? "is not a file" : "does not exist")
                            + " ('nepenthe cluster up' or 'nepenthe token' writes one)");
        }
        String envKey = System.getenv("NEPENTHE_MASTER_KEY");
        if (join && masterKey == null && (envKey == null || envKey.isBlank())) {
            throw misuse(
                    "--join: expected the group's master key (--master-key FILE, the file the"
                            + " members were given, or NEPENTHE_MASTER_KEY), got none: a replica"
                            + " that joins catches up by a copy only that key reads");
        }
        if (join && masterKey != null && !Files.isRegularFile(masterKey)) {
            throw misuse(
                    "--master-key: expected the group's key file to join with, got '"
                            + masterKey
                            + "', which does not exist");
        }
        Duration[] timeouts = timeouts();
        boolean anyTls = tlsCert != null || tlsKey != null || tlsTrust != null;
        if (anyTls && (tlsCert == null || tlsKey == null || tlsTrust == null)) {
            throw misuse(
                    "--tls-cert, --tls-key, --tls-trust: expected all three, got only "
                            + (tlsCert != null ? "--tls-cert " : "")
                            + (tlsKey != null ? "--tls-key " : "")
                            + (tlsTrust != null ? "--tls-trust" : "").strip());
        }
        try {
            ClusterConfig c =
                    ClusterConfig.of(id, group, parsed, data, tokens)
                            .withElectionTimeouts(timeouts[0], timeouts[1])
                            .withTls(anyTls ? new NodeTls(tlsCert, tlsKey, tlsTrust) : null)
                            .withMasterKeyFile(masterKey);
            if (join) {
                c = c.asJoining();
            }
            c.checkPlaintext();
            return c;
        } catch (IllegalArgumentException e) {
            String m = e.getMessage();
            throw misuse(
                    m.startsWith("self:")
                            ? "--id" + m.substring("self".length())
                            : m.startsWith("members:") ? "--member" + m.substring(7) : m);
        }
    }

    private Duration[] timeouts() {
        String[] parts = electionTimeout.split("-", -1);
        try {
            if (parts.length == 2) {
                return new Duration[] {
                    Duration.ofMillis(Long.parseLong(parts[0].strip())),
                    Duration.ofMillis(Long.parseLong(parts[1].strip()))
                };
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw misuse(
                "--election-timeout-ms: expected MIN-MAX in milliseconds (e.g. 1000-2000), got '"
                        + electionTimeout
                        + "'");
    }

    private static Void report(Throwable e) {
        System.err.println("nepenthe cluster node: watching the parent process: " + e);
        return null;
    }

    private CommandLine.ParameterException misuse(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        ClusterConfig config = config();
        ClusterReplica replica = ClusterReplica.start(config);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        replica.close();
                                    } catch (IOException e) {
                                        System.err.println(
                                                "nepenthe cluster node: closing "
                                                        + config.self()
                                                        + ": "
                                                        + e.getMessage());
                                    } finally {
                                        closed.countDown();
                                    }
                                },
                                "close-replica"));
        if (stopWith != null) {
            // System.exit runs the hook above, so the replica still closes cleanly.
            CompletableFuture<?> parentEnded =
                    ProcessHandle.of(stopWith)
                            .map(ProcessHandle::onExit)
                            .orElse(CompletableFuture.completedFuture(null));
            parentEnded.thenRun(() -> System.exit(0)).exceptionally(NodeCommand::report);
        }
        PrintWriter out = spec.commandLine().getOut();
        Member me = config.member();
        out.printf(
                "%s %s: client %s, raft %s, data %s%n",
                READY, me.id(), me.clientAddress(), me.raftAddress(), config.dataDir());
        out.flush();
        // The process ends when a signal runs the hook; until then this thread only waits.
        closed.await();
        return 0;
    }
}
