package dev.nepenthe.server.cli;

import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.AbstractStub;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options every client command shares (a picocli mixin): where the server is, which token to
 * send, whether to trust a TLS certificate, and how long a call may take. {@link #connect} opens
 * the channel; the token is read only when a call needs it, and never printed, logged or put in a
 * message (an error names the file it came from, not what it holds).
 */
public final class ServerConnection {

    /**
     * A call with no --deadline gets this long; streams (a bulk ingest, a watch) get no deadline.
     */
    static final double DEFAULT_UNARY_DEADLINE_SECONDS = 30;

    /** RFC 6750's token68 characters: anything else in a token file is not a token. */
    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._~+/=-]+");

    /**
     * grpc-java logs a failed name lookup or connection at WARNING with a stack trace, before the
     * call fails with the same news; a command line reports it once, in one line (--verbose has the
     * trace). Held here so the level sticks (java.util.logging keeps loggers only weakly).
     */
    private static final Logger GRPC_LOG = Logger.getLogger("io.grpc");

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(
            names = "--server",
            paramLabel = "HOST:PORT",
            defaultValue = "${env:NEPENTHE_SERVER:-127.0.0.1:7707}",
            description = "The server (default: ${DEFAULT-VALUE}; env NEPENTHE_SERVER).")
    String server;

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            defaultValue = "${env:NEPENTHE_TOKEN_FILE:-nepenthe-data.keys/server/operator.token}",
            description =
                    "File holding the bearer token (default: ${DEFAULT-VALUE}, which 'serve' writes"
                        + " on first start; env NEPENTHE_TOKEN_FILE). The token is never printed.")
    Path tokenFile;

    @Option(
            names = "--tls-ca",
            paramLabel = "PEM",
            description =
                    "Use TLS, trusting the server certificate (or its CA) in this PEM file;"
                            + " plaintext without it.")
    Path tlsCa;

    @Option(
            names = "--deadline",
            paramLabel = "SECONDS",
            description =
                    "The most each call may take (default: 30 s for single calls, none for a bulk"
                            + " ingest's stream and a forget's watch).")
    Double deadline;

    /** Opens a channel to the server; nothing is sent until a call is made. */
    Client connect() throws IOException {
        int colon = server.lastIndexOf(':');
        String host = colon > 0 ? server.substring(0, colon) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = -1;
        try {
            port = colon > 0 ? Integer.parseInt(server.substring(colon + 1)) : -1;
        } catch (NumberFormatException e) {
            // reported below
        }
        if (host.isEmpty() || port < 1 || port > 65_535) {
            throw misuse(
                    "--server: expected HOST:PORT with a port from 1 to 65535, got '"
                            + server
                            + "'");
        }
        if (deadline != null && !(deadline > 0)) {
            throw misuse("--deadline: expected a number of seconds above 0, got " + deadline);
        }
        GRPC_LOG.setLevel(Level.SEVERE);
        ChannelCredentials credentials;
        if (tlsCa != null) {
            credentials = TlsChannelCredentials.newBuilder().trustManager(tlsCa.toFile()).build();
        } else {
            credentials = InsecureChannelCredentials.create();
            if (!isLoopback(host)) {
                mixee.commandLine()
                        .getErr()
                        .println(
                                "nepenthe "
                                        + mixee.name()
                                        + ": warning: sending the bearer"
                                        + " token to "
                                        + server
                                        + " in plaintext; pass --tls-ca to use TLS");
            }
        }
        ManagedChannel channel =
                Grpc.newChannelBuilderForAddress(host, port, credentials)
                        .intercept(new Explainer())
                        .build();
        return new Client(channel);
    }

    private CommandLine.ParameterException misuse(String message) {
        return new CommandLine.ParameterException(mixee.commandLine(), message);
    }

    private static boolean isLoopback(String host) {
        if (host.equals("localhost")) {
            return true;
        }
        try {
            // Only literal addresses are checked: no name lookup just to decide on a warning.
            return (host.matches("[0-9.]+") || host.contains(":"))
                    && InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Reads the token: one line of token68 characters. */
    private String readToken() {
        String text;
        try {
            text = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "token file "
                            + tokenFile
                            + ": cannot be read ("
                            + e.getClass().getSimpleName()
                            + "); 'nepenthe serve' writes one on first start, or pass --token-file",
                    e);
        }
        if (text.isEmpty()) {
            throw new IllegalStateException(
                    "token file " + tokenFile + ": expected a token, got an empty file");
        }
        if (!TOKEN.matcher(text).matches()) {
            // Never quote it: it may be a real token with a stray character.
            throw new IllegalStateException(
                    "token file "
                            + tokenFile
                            + ": expected one token of letters, digits and"
                            + " -._~+/=, got other characters");
        }
        return text;
    }

    /**
     * An open channel, with stubs that carry the bearer token and the deadline. Each stub is made
     * for one call (a stub's deadline is fixed when it is made).
     */
    final class Client implements AutoCloseable {
        private final ManagedChannel channel;
        private CallCredentials bearer;

        private Client(ManagedChannel channel) {
            this.channel = channel;
        }

        /** The standard health service: no token. */
        HealthGrpc.HealthBlockingStub health() {
            return unary(HealthGrpc.newBlockingStub(channel));
        }

        CollectionsGrpc.CollectionsBlockingStub collections() {
            return unary(authed(CollectionsGrpc.newBlockingStub(channel)));
        }

        RecordsGrpc.RecordsBlockingStub records() {
            return unary(authed(RecordsGrpc.newBlockingStub(channel)));
        }

        /** For the bulk upsert stream: no deadline unless --deadline says one. */
        RecordsGrpc.RecordsStub recordsStream() {
            return stream(authed(RecordsGrpc.newStub(channel)));
        }

        ForgetGrpc.ForgetBlockingStub forget() {
            return unary(authed(ForgetGrpc.newBlockingStub(channel)));
        }

        /** For a watch: no deadline unless --deadline says one. */
        ForgetGrpc.ForgetBlockingStub forgetWatch() {
            return stream(authed(ForgetGrpc.newBlockingStub(channel)));
        }

        AdminGrpc.AdminBlockingStub admin() {
            return unary(authed(AdminGrpc.newBlockingStub(channel)));
        }

        private <S extends AbstractStub<S>> S authed(S stub) {
            if (bearer == null) {
                bearer = new BearerToken(readToken());
            }
            return stub.withCallCredentials(bearer);
        }

        private <S extends AbstractStub<S>> S unary(S stub) {
            double seconds = deadline != null ? deadline : DEFAULT_UNARY_DEADLINE_SECONDS;
            return stub.withDeadlineAfter((long) (seconds * 1e9), TimeUnit.NANOSECONDS);
        }

        private <S extends AbstractStub<S>> S stream(S stub) {
            return deadline == null
                    ? stub
                    : stub.withDeadlineAfter((long) (deadline * 1e9), TimeUnit.NANOSECONDS);
        }

        @Override
        public void close() {
            try {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Rewrites the statuses a user cannot act on as they stand: a connection failure names the
     * server and the cause ("io exception" alone says neither), and a refused token names the file
     * it came from. The code stays as it was, so scripts can match on it.
     */
    private final class Explainer implements ClientInterceptor {
        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(
                MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(
                    next.newCall(method, options)) {
                @Override
                public void start(Listener<R> listener, Metadata headers) {
                    super.start(
                            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(
                                    listener) {
                                @Override
                                public void onClose(Status status, Metadata trailers) {
                                    super.onClose(explain(status), trailers);
                                }
                            },
                            headers);
                }
            };
        }

        private Status explain(Status s) {
            String d = s.getDescription() == null ? "" : s.getDescription();
            return switch (s.getCode()) {
                // A cause is set on the client side only: the transport failed, not the server's
                // storage.
                case UNAVAILABLE ->
                        s.getCause() == null
                                ? s
                                : s.withDescription(
                                        "cannot reach "
                                                + server
                                                + ": "
                                                + d
                                                + " ("
                                                + s.getCause().getMessage()
                                                + ")");
                case UNAUTHENTICATED, PERMISSION_DENIED ->
                        s.withDescription(d + " (token from " + tokenFile + ")");
                default -> s;
            };
        }
    }
}
