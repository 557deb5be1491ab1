package dev.nepenthe.cluster.cli;

import io.grpc.StatusRuntimeException;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code nepenthe cluster}: the entry point the launcher runs for a cluster command, apart from the
 * single-node command line because store-server does not know the cluster. Exit status as for the
 * other commands: 0 done; 1 done, but a check did not hold; 2 misuse (a missing or bad flag); 3
 * could not be done (a port taken, a node that did not start, a file that cannot be written).
 */
@Command(
        name = "nepenthe cluster",
        mixinStandardHelpOptions = true,
        version = "nepenthe 0.1.0",
        description = "Replicas of one store on Apache Ratis (docs/CLUSTER.md).",
        subcommands = {
            NodeCommand.class,
            UpCommand.class,
            DemoCommand.class,
            VerifyReceiptCommand.class,
            MembershipCommand.Add.class,
            MembershipCommand.Remove.class,
            CommandLine.HelpCommand.class
        },
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
            "0:done; every check held",
            "1:done, but a check did not hold",
            "2:misuse: unknown command or option, bad argument",
            "3:could not be done: a port taken, a node that did not start, a file"
        })
public final class ClusterMain implements Runnable {

    /** Exit status: a check did not hold. */
    static final int DOES_NOT_HOLD = 1;

    /** Exit status: could not be done. */
    static final int FAILED = 3;

    /**
     * Ratis logs every configuration key and election at INFO, the model runtime probes for GPUs at
     * WARNING, and Chronicle Map prints a banner: noise in a node's log. Held here so the levels
     * stick (java.util.logging keeps loggers only weakly).
     */
    private static final Logger RATIS_LOG = Logger.getLogger("org.apache.ratis");

    private static final Logger DJL_LOG = Logger.getLogger("ai.djl");
    private static final Logger CHRONICLE_LOG = Logger.getLogger("net.openhft");
    private static final Logger GRPC_LOG = Logger.getLogger("io.grpc");

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(
                spec.commandLine(),
                "expected a command: node, up, demo, verify-receipt, add-replica or"
                        + " remove-replica");
    }

    /**
     * Runs a cluster command and exits with its status.
     *
     * @param args the command and its flags
     */
    public static void main(String[] args) {
        RATIS_LOG.setLevel(Level.WARNING);
        DJL_LOG.setLevel(Level.SEVERE);
        CHRONICLE_LOG.setLevel(Level.WARNING);
        GRPC_LOG.setLevel(Level.SEVERE);
        System.exit(commandLine().execute(args));
    }

    /** The command line with the one-line error handling of the other commands. */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new ClusterMain());
        cl.setExecutionExceptionHandler(
                (e, line, parsed) -> {
                    line.getErr()
                            .println(line.getCommandSpec().qualifiedName() + ": " + oneLine(e));
                    if (parsed.subcommands().stream()
                            .anyMatch(p -> p.matchedOptionValue("--verbose", false))) {
                        e.printStackTrace(line.getErr());
                    }
                    return FAILED;
                });
        return cl;
    }

    static String oneLine(Throwable e) {
        String m = e.getMessage();
        if (e instanceof StatusRuntimeException s) {
            m = s.getStatus().getCode() + ": " + s.getStatus().getDescription();
        }
        return (m == null ? e.getClass().getSimpleName() : m).replace('\n', ' ');
    }
}
