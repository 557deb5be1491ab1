package dev.nepenthe.server.cli;

import dev.nepenthe.server.grpc.NepentheServer;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nepenthe token}: a bearer token for a tenant, so a server can serve more than the
 * default tenant without anyone editing hashes by hand. The token goes into a new file readable
 * by its owner only, and is never printed; its hash is appended to the server's tokens file.
 */
@Command(name = "token", mixinStandardHelpOptions = true,
        description = "Make a bearer token for a tenant: its hash is appended to the server's tokens file, the token"
                + " itself is written to a new file readable by you only (never printed). Restart the server to use it.")
public final class TokenCommand implements Callable<Integer> {

    @Option(names = "--tenant", required = true, description = "The tenant the token's calls are scoped to.")
    String tenant;

    @Option(names = "--operator", description = "Also allow collections, snapshots, restores and ledger checks.")
    boolean operator;

    @Option(names = "--tokens", paramLabel = "FILE", defaultValue = "nepenthe-data.keys/server/tokens.conf",
            description = "The server's tokens file (default: ${DEFAULT-VALUE}); created if missing.")
    Path tokens;

    @Option(names = "--out", paramLabel = "FILE", required = true,
            description = "Where to write the token: a new file, readable by you only.")
    Path out;

    @Override
    public Integer call() throws Exception {
        NepentheServer.addToken(tokens, out, tenant, operator);
        System.out.println("nepenthe: a " + (operator ? "tenant and operator" : "tenant") + " token for '" + tenant
                + "' is in " + out + "; its hash is in " + tokens + " (restart the server to use it)");
        return 0;
    }
}
