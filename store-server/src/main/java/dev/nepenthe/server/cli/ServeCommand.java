package dev.nepenthe.server.cli;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe serve}: the gRPC server over a store folder, until it is stopped (SIGTERM or
 * Ctrl-C shut it down gracefully). On its first start it makes a store-operator token for the
 * default tenant and says where the token is, never what it is.
 */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Serve a store over gRPC (loopback unless told otherwise). On first start, makes a"
                + " store-operator token for the default tenant and prints the file it is in (never"
                + " the token).",
            "The bundled embedder all-minilm-l6-v2 (384 dimensions) is available to collections"
                    + " created with it; the model loads on the first text to embed."
        })
public final class ServeCommand implements Callable<Integer> {

    /** This command as parsed, so that a refusal is printed where the command line prints. */
    @Spec CommandSpec spec;

    @Option(
            names = "--data",
            paramLabel = "DIR",
            defaultValue = "nepenthe-data",
            description = "Store folder (default: ${DEFAULT-VALUE}); created if missing.")
    Path data;

    @Option(
            names = "--keys",
            paramLabel = "DIR",
            description =
                    "Keystore folder, apart from the data (default: DIR.keys beside the data"
                            + " folder).")
    Path keys;

    @Option(
            names = "--host",
            defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(
            names = "--port",
            defaultValue = "7707",
            description = "Port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(
            names = "--tokens",
            paramLabel = "FILE",
            description =
                    "Tokens file: sha256 of each token, its tenant and roles (default:"
                            + " KEYS/server/tokens.conf).")
    Path tokens;

    @Option(
            names = "--tls-cert",
            paramLabel = "PEM",
            description = "Certificate chain for TLS (with --tls-key).")
    Path tlsCert;

    @Option(
            names = "--tls-key",
            paramLabel = "PEM",
            description = "PKCS#8 private key for TLS (with --tls-cert).")
    Path tlsKey;

    @Option(
            names = "--snapshot-dir",
            paramLabel = "DIR",
            description =
                    "A folder snapshots and restores over gRPC may use (repeatable; created if"
                        + " missing; apart from the data and keystore folders). Without one, both"
                        + " calls are refused.")
    List<Path> snapshotDirs = new ArrayList<>();

    @Option(
            names = NepentheServer.INSECURE_PLAINTEXT_FLAG,
            description =
                    "Serve without TLS on an address other than loopback. Bearer tokens and records"
                        + " then cross the network in clear text; without this flag such a --host"
                        + " is refused.")
    boolean insecurePlaintextOnNetwork;

    @Option(
            names = "--max-calls",
            paramLabel = "N",
            defaultValue = "64",
            description =
                    "Most calls in flight over all callers; handlers run on N + 4 threads (default:"
                            + " ${DEFAULT-VALUE}).")
    int maxCalls;

    @Option(
            names = "--max-calls-per-tenant",
            paramLabel = "N",
            defaultValue = "32",
            description = "Most calls in flight for one tenant (default: ${DEFAULT-VALUE}).")
    int maxCallsPerTenant;

    @Option(
            names = "--max-calls-per-token",
            paramLabel = "N",
            defaultValue = "16",
            description = "Most calls in flight for one token (default: ${DEFAULT-VALUE}).")
    int maxCallsPerToken;

    @Option(
            names = "--max-receiving-mib",
            paramLabel = "MIB",
            defaultValue = "256",
            description =
                    "Most MiB of request messages still arriving, over all calls; a tenant may hold"
                            + " half (default: ${DEFAULT-VALUE}).")
    int maxReceivingMib;

    @Option(
            names = "--request-idle-seconds",
            paramLabel = "S",
            defaultValue = "60",
            description =
                    "Longest wait for a call's next request message or the end of its request"
                            + " (default: ${DEFAULT-VALUE}).")
    int requestIdleSeconds;

    @Option(
            names = "--connection-idle-seconds",
            paramLabel = "S",
            defaultValue = "300",
            description =
                    "Close a connection with no call for this long; 0: never (default:"
                            + " ${DEFAULT-VALUE}).")
    int connectionIdleSeconds;

    @Option(
            names = "--connection-age-seconds",
            paramLabel = "S",
            defaultValue = "86400",
            description =
                    "Ask a connection this old to reconnect; its calls get an hour more; 0: never"
                            + " (default: ${DEFAULT-VALUE}).")
    int connectionAgeSeconds;

    @Option(
            names = "--port-file",
            paramLabel = "FILE",
            hidden = true,
            description =
                    "Write the bound port here once serving (for scripts and tests that ask for"
                            + " port 0).")
    Path portFile;

    @Override
    public Integer call() throws Exception {
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--tls-cert and --tls-key: expected both or neither, got one");
        }
        try {
            // Before the store opens: a refused start leaves nothing behind.
            NepentheServer.checkPlaintext(host, tlsCert != null, insecurePlaintextOnNetwork);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        // The bundled model is registered, not loaded: it loads on the first text to embed.
        StoreOptions options = NepentheServer.withBundledEmbedders(StoreOptions.defaults());
        if (keys != null) {
            options = options.withKeystore(keys);
        }
        Path keysFolder =
                keys != null
                        ? keys.toAbsolutePath().normalize()
                        : data.toAbsolutePath()
                                .normalize()
                                .resolveSibling(
                                        data.toAbsolutePath().normalize().getFileName() + ".keys");
        Path tokensFile =
                tokens != null ? tokens : keysFolder.resolve("server").resolve("tokens.conf");
        PrintStream out = System.out;
        Nepenthe store = Nepenthe.open(data, options);
        NepentheServer server;
        try {
            if (!Files.exists(tokensFile)) {
                Path tokenFile = tokensFile.resolveSibling("operator.token");
                NepentheServer.bootstrapTokens(tokensFile, tokenFile);
                out.println(
                        "nepenthe: first start: a store-operator token for the default tenant is in"
                                + " "
                                + tokenFile
                                + " (readable by you only); its hash is in "
                                + tokensFile);
            }
            NepentheServer.Options o =
                    new NepentheServer.Options()
                            .listen(host, port)
                            .tokens(tokensFile)
                            .snapshotDirs(snapshotDirs)
                            .insecurePlaintextOnNetwork(insecurePlaintextOnNetwork)
                            .callsInFlight(maxCalls, maxCallsPerTenant, maxCallsPerToken)
                            .receivingBytes(
                                    (long) maxReceivingMib << 20, (long) maxReceivingMib << 19)
                            .timeouts(
                                    requestIdleSeconds,
                                    connectionIdleSeconds,
                                    connectionAgeSeconds,
                                    3_600);
            if (tlsCert != null) {
                o.tls(tlsCert, tlsKey);
            }
            server = NepentheServer.start(store, o);
        } catch (IOException | RuntimeException e) {
            store.close();
            throw e;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        server.close();
                                    } catch (IOException e) {
                                        System.err.println(
                                                "nepenthe serve: closing the store failed: "
                                                        + e.getMessage());
                                    } finally {
                                        stopped.countDown();
                                    }
                                },
                                "nepenthe-shutdown"));
        out.println(
                "nepenthe: serving "
                        + data.toAbsolutePath().normalize()
                        + " on "
                        + host
                        + ":"
                        + server.port()
                        + (tlsCert != null
                                ? " (TLS)"
                                : insecurePlaintextOnNetwork
                                        ? " (PLAINTEXT ON THE NETWORK: tokens and records travel in"
                                                + " clear text)"
                                        : " (plaintext, loopback)")
                        + "; tokens from "
                        + tokensFile);
        out.flush();
        if (portFile != null) {
            Files.writeString(portFile, Integer.toString(server.port()));
        }
        stopped.await();
        return 0;
    }
}
