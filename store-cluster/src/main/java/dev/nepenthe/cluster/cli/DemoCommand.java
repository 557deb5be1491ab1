package dev.nepenthe.cluster.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code nepenthe cluster demo}: the flags of {@link ClusterDemo} and its exit status. */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Three replicas as child processes: a forget through one while another is killed, the"
                    + " operation waiting for it, the replica restarted, the forget sealed with"
                    + " every member's attestation, the receipt verified offline, and the"
                    + " forgotten records gone from every replica's answers and files.",
            "Exit status 1 if a check fails."
        })
final class DemoCommand implements Callable<Integer> {

    @Option(
            names = "--data",
            paramLabel = "DIR",
            defaultValue = "cluster-demo",
            description = "The demo's folder, wiped on each run (default: ./${DEFAULT-VALUE}).")
    Path data;

    @Option(
            names = "--base-port",
            paramLabel = "BASE",
            defaultValue = "7840",
            description =
                    "Ports: BASE+i for clients, BASE+100+i for Raft (default: ${DEFAULT-VALUE}).")
    int basePort;

    @Option(
            names = "--seal-wait",
            paramLabel = "SECONDS",
            defaultValue = "120",
            description =
                    "How long the forget may take to seal after the restart (default:"
                            + " ${DEFAULT-VALUE}).")
    int sealWait;

    @Option(names = "--verbose", description = "On an error, print the stack trace too.")
    boolean verbose;

    @Override
    public Integer call() throws Exception {
        ClusterDemo.Outcome o =
                new ClusterDemo(data, basePort, Duration.ofSeconds(sealWait), System.out).run();
        return o.passed() ? 0 : ClusterMain.DOES_NOT_HOLD;
    }
}
