package dev.nepenthe.server;

import dev.nepenthe.server.cli.DemoCommand;
import dev.nepenthe.server.cli.ForgetCommand;
import dev.nepenthe.server.cli.IngestCommand;
import dev.nepenthe.server.cli.ReadmitCommand;
import dev.nepenthe.server.cli.RestoreCommand;
import dev.nepenthe.server.cli.SearchCommand;
import dev.nepenthe.server.cli.ServeCommand;
import dev.nepenthe.server.cli.SnapshotCommand;
import dev.nepenthe.server.cli.StatusCommand;
import dev.nepenthe.server.cli.TokenCommand;
import dev.nepenthe.server.cli.VerifyLedgerCommand;
import dev.nepenthe.server.cli.VerifyReceiptCommand;
import io.grpc.StatusRuntimeException;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The {@code nepenthe} command line. Exit status, for scripts: 0 done (a check that held, an
 * operation that sealed); 1 done, but what was checked does not hold (a receipt or ledger that
 * fails, a forget that did not seal); 2 misuse (an unknown command or option, a missing or bad
 * argument); 3 could not be done (a file that cannot be read, a server that cannot be reached or
 * refuses). Errors are one line on standard error; {@code --verbose} adds the stack trace.
 */
@Command(
        name = "nepenthe",
        mixinStandardHelpOptions = true,
        version = "nepenthe 0.1.0",
        description = "A vector store that can truly forget. With no command: the demo.",
        subcommands = {
            DemoCommand.class,
            ServeCommand.class,
            IngestCommand.class,
            SearchCommand.class,
            ForgetCommand.class,
            ReadmitCommand.class,
            StatusCommand.class,
            SnapshotCommand.class,
            RestoreCommand.class,
            TokenCommand.class,
            VerifyReceiptCommand.class,
            VerifyLedgerCommand.class,
            CommandLine.HelpCommand.class
        },
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
            "0:done; a check that held, an operation that sealed",
            "1:done, but what was checked does not hold",
            "2:misuse: unknown command or option, bad argument",
            "3:could not be done: unreadable file, unreachable or refusing server"
        })
public final class Main implements Runnable {

    /** Exit status: what was checked does not hold. */
    public static final int DOES_NOT_HOLD = 1;

    /** Exit status: could not be done. */
    public static final int FAILED = 3;

    /**
     * The model's runtime (DJL) logs GPU probing at WARNING and Chronicle Map logs a banner at INFO
     * on every start; that is noise for a CPU-only embedded store. Held here so the levels stick
     * (java.util.logging keeps loggers only weakly).
     */
    private static final Logger DJL_LOG = Logger.getLogger("ai.djl");

    private static final Logger CHRONICLE_LOG = Logger.getLogger("net.openhft");

    @Option(
            names = "--verbose",
            scope = CommandLine.ScopeType.INHERIT,
            description = "On an error, print the stack trace too.")
    boolean verbose;

    @Override
    public void run() {
        // No command: the demo, on its defaults.
        new CommandLine(new DemoCommand()).execute();
    }

    public static void main(String[] args) {
        DJL_LOG.setLevel(Level.SEVERE);
        CHRONICLE_LOG.setLevel(Level.WARNING);
        System.exit(commandLine().execute(args));
    }

    /** The command line with Nepenthe's error handling: one line, status 3, trace on --verbose. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler(
                (e, line, parsed) -> {
                    boolean verbose =
                            parsed.matchedOptionValue("--verbose", false)
                                    || parsed.subcommands().stream()
                                            .anyMatch(
                                                    p -> p.matchedOptionValue("--verbose", false));
                    line.getErr().println("nepenthe " + line.getCommandName() + ": " + oneLine(e));
                    if (verbose) {
                        e.printStackTrace(line.getErr());
                    }
                    return FAILED;
                });
        return cl;
    }

    private static String oneLine(Throwable e) {
        String m = e.getMessage();
        if (e instanceof StatusRuntimeException s) {
            m = s.getStatus().getCode() + ": " + s.getStatus().getDescription();
        }
        return (m == null ? e.getClass().getSimpleName() : m).replace('\n', ' ');
    }
}
