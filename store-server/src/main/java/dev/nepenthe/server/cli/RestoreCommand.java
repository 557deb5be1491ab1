package dev.nepenthe.server.cli;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.grpc.v1.RestoreRequest;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe restore}: a snapshot copied into a new folder, by the server (store-operator
 * token) or, with {@code --offline}, right here with no server ({@link Nepenthe#restore(Path,
 * Path)}). Either way the copy is opened later by a server on the keystore that took the snapshot,
 * and that open drops whatever was forgotten since.
 */
@Command(
        name = "restore",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Copy SNAPSHOT into TARGET, an absent or empty folder (never the one being served)."
                + " Through the server (store-operator token; both paths on the server's machine,"
                + " inside its --snapshot-dir folders), or with --offline as a plain file copy on"
                + " this machine, with no server.",
            "Serve the copy with the keystore that took the snapshot (serve --data TARGET --keys"
                + " KEYS): opening it drops every record forgotten since the snapshot was taken."
        })
public final class RestoreCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @Option(
            names = "--offline",
            description = "Copy here, without a server; relative paths are fine.")
    boolean offline;

    @Parameters(index = "0", paramLabel = "SNAPSHOT", description = "A snapshot folder.")
    String snapshot;

    @Parameters(index = "1", paramLabel = "TARGET", description = "An absent or empty folder.")
    String target;

    @Override
    public Integer call() throws Exception {
        if (offline) {
            Nepenthe.restore(Path.of(snapshot), Path.of(target));
            return restored(target);
        }
        requireAbsolute(spec, "SNAPSHOT", snapshot);
        requireAbsolute(spec, "TARGET", target);
        try (ServerConnection.Client client = connection.connect()) {
            String done =
                    client.admin()
                            .restore(
                                    RestoreRequest.newBuilder()
                                            .setSnapshot(snapshot)
                                            .setTarget(target)
                                            .build())
                            .getTarget();
            return restored(done + " (on the server's machine)");
        }
    }

    /**
     * A path the server resolves must be absolute: a relative one would be resolved against the
     * server's working folder, which the person typing it cannot see.
     */
    static void requireAbsolute(CommandSpec spec, String what, String path) {
        if (!Path.of(path).isAbsolute()) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    what
                            + ": expected an absolute path (the server"
                            + " resolves it on its machine), got '"
                            + path
                            + "'");
        }
    }

    /** Says where the snapshot went; the exit code. */
    private int restored(String where) {
        spec.commandLine()
                .getOut()
                .println(
                        "restored "
                                + snapshot
                                + " into "
                                + where
                                + "; serve it with the keystore that took the snapshot");
        return 0;
    }
}
