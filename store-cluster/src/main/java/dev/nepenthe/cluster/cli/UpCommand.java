package dev.nepenthe.cluster.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nepenthe cluster up}: a local group in one command, for trying the cluster on one machine.
 * It stays in the foreground so that Ctrl-C stops every node it started; run again on the same
 * folder, the group comes back with its data.
 */
@Command(
        name = "up",
        mixinStandardHelpOptions = true,
        description = {
            "Start a group of replicas on loopback, each in a process of its own, and stay in the"
                    + " foreground until Ctrl-C, which stops them.",
            "Member n<i> serves clients on BASE+i and Raft on BASE+100+i; its data is DIR/n<i>, its"
                    + " output DIR/n<i>.log. The first run writes DIR/tokens and"
                    + " DIR/operator.token; later runs reuse them and the data."
        })
final class UpCommand implements Callable<Integer> {

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--data",
            paramLabel = "DIR",
            defaultValue = "cluster-data",
            description = "The group's folder (default: ./${DEFAULT-VALUE}).")
    Path data;

    @Option(
            names = "--nodes",
            paramLabel = "N",
            defaultValue = "3",
            description = "How many replicas (default: ${DEFAULT-VALUE}).")
    int count;

    @Option(
            names = "--base-port",
            paramLabel = "BASE",
            defaultValue = "7800",
            description =
                    "Ports: BASE+i for clients, BASE+100+i for Raft (default: ${DEFAULT-VALUE}).")
    int basePort;

    @Option(
            names = "--wait",
            paramLabel = "SECONDS",
            defaultValue = "120",
            description = "How long to wait for a leader (default: ${DEFAULT-VALUE}).")
    int waitSeconds;

    @Option(names = "--verbose", description = "On an error, print the stack trace too.")
    boolean verbose;

    @Override
    public Integer call() throws Exception {
        PrintStream out = System.out;
        LocalNodes nodes;
        try {
            nodes = new LocalNodes(data, count, basePort, "1000-2000");
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        nodes.checkPortsFree();
        boolean fresh = !Files.isDirectory(nodes.dataDir(0));
        boolean newToken = nodes.ensureTokens();
        nodes.ensureGroupKey();
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopping = new AtomicBoolean();
        Thread hook =
                new Thread(
                        () -> {
                            stopping.set(true);
                            out.println("stopping the nodes...");
                            nodes.close();
                            out.println("stopped; the data stays in " + nodes.dir());
                            stopped.countDown();
                        },
                        "stop-nodes");
        Runtime.getRuntime().addShutdownHook(hook);
        out.printf(
                "%s a group of %d replicas in %s ...%n",
                fresh ? "starting" : "restarting", nodes.size(), nodes.dir());
        for (int i = 0; i < nodes.size(); i++) {
            nodes.start(i);
        }
        int[] all = new int[nodes.size()];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        try {
            nodes.awaitServing(nodes.token(), Duration.ofSeconds(waitSeconds), all);
        } catch (RuntimeException e) {
            Runtime.getRuntime().removeShutdownHook(hook);
            nodes.close();
            throw e;
        }
        out.println("a leader is elected; every node answers:");
        nodes.describe(out);
        out.printf(
                "  operator token: %s (%s)%n",
                nodes.tokenFile(), newToken ? "new" : "reused from the last run");
        if (Files.exists(nodes.groupKeyFile())) {
            out.printf(
                    "  group master key: %s (every replica's; keep it off backups of the data)%n",
                    nodes.groupKeyFile());
        }
        out.printf(
                "try: ./nepenthe status --server %s --token-file %s%n",
                nodes.members().getFirst().clientAddress(), nodes.tokenFile());
        out.println(
                "Ctrl-C stops the nodes; 'nepenthe cluster up' on the same --data brings them"
                        + " back.");
        out.flush();
        // A node that ends on its own is reported once; the others go on serving.
        boolean[] reported = new boolean[nodes.size()];
        while (!stopped.await(1, TimeUnit.SECONDS)) {
            for (int i = 0; i < reported.length; i++) {
                if (!stopping.get() && !reported[i] && !nodes.alive(i)) {
                    reported[i] = true;
                    out.printf(
                            "%s ended on its own; the end of %s:%n%s%n",
                            nodes.members().get(i).id(),
                            nodes.log(i),
                            LocalNodes.tail(nodes.log(i), 10));
                }
            }
        }
        return 0;
    }
}
