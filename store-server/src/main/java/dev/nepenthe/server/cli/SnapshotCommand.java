package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.SnapshotRequest;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe snapshot}: a consistent copy of the served store, taken by the server while it
 * serves.
 */
@Command(
        name = "snapshot",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Ask a server to snapshot the store it serves into TARGET, a folder on the server's"
                + " machine that does not exist yet, inside a folder the server was started with"
                + " --snapshot-dir (store-operator token). The snapshot holds no keys: it opens"
                + " only against the keystore that took it."
        })
public final class SnapshotCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin ServerConnection connection;

    @Parameters(
            index = "0",
            paramLabel = "TARGET",
            description = "An absolute path on the server's machine.")
    String target;

    @Override
    public Integer call() throws Exception {
        RestoreCommand.requireAbsolute(spec, "TARGET", target);
        try (ServerConnection.Client client = connection.connect()) {
            String done =
                    client.admin()
                            .snapshot(SnapshotRequest.newBuilder().setTarget(target).build())
                            .getTarget();
            spec.commandLine()
                    .getOut()
                    .println("snapshot written to " + done + " (on the server's machine)");
            return 0;
        }
    }
}
