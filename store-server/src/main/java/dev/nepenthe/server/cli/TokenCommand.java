package dev.nepenthe.server.cli;

import dev.nepenthe.server.grpc.NepentheServer;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nepenthe token}: a bearer token for a tenant, so a server can serve more than the default
 * tenant without anyone editing hashes by hand. The token goes into a new file readable by its
 * owner only, and is never printed; its hash is appended to the server's tokens file.
 */
@Command(
        name = "token",
        mixinStandardHelpOptions = true,
        description =
                "Make a bearer token for a tenant: its hash is appended to the server's tokens"
                    + " file, the token itself is written to a new file readable by you only (never"
                    + " printed). A running server accepts it from its next call on; delete its"
                    + " line to revoke it.")
public final class TokenCommand implements Callable<Integer> {

    @Option(
            names = "--tenant",
            required = true,
            description = "The tenant the token's calls are scoped to.")
    String tenant;

    @Option(
            names = "--role",
            paramLabel = "ROLE",
            defaultValue = "tenant",
            description =
                    "tenant (records, searches and forgets in its tenant; the default),"
                        + " tenant-admin (also its tenant's statistics) or store-operator (also the"
                        + " whole store: collections, snapshots, restores, ledger checks, every"
                        + " tenant's statistics).")
    String role;

    @Option(names = "--operator", description = "The same as --role store-operator.")
    boolean operator;

    @Option(
            names = "--tokens",
            paramLabel = "FILE",
            defaultValue = "nepenthe-data.keys/server/tokens.conf",
            description =
                    "The server's tokens file (default: ${DEFAULT-VALUE}); created if missing.")
    Path tokens;

    @Option(
            names = "--out",
            paramLabel = "FILE",
            required = true,
            description = "Where to write the token: a new file, readable by you only.")
    Path out;

    @Override
    public Integer call() throws Exception {
        String r = operator ? "store-operator" : role;
        NepentheServer.addToken(tokens, out, tenant, r);
        System.out.println(
                "nepenthe: a "
                        + r
                        + " token for '"
                        + tenant
                        + "' is in "
                        + out
                        + "; its hash is in "
                        + tokens
                        + " (a running server accepts it from its next call on)");
        return 0;
    }
}
