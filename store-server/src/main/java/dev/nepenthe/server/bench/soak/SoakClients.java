package dev.nepenthe.server.bench.soak;

import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.channels.ClosedChannelException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The harness's side of the wire: one channel to the current server (a restarted server listens on
 * a new port, so a restart installs a new channel), the bearer tokens of the two tenants and of the
 * store operator, and the restart window. A call that fails UNAVAILABLE (or whose connection closed
 * under it) is expected when the window was open, or the channel it went out on was replaced, while
 * it ran; any other failure is an error.
 */
final class SoakClients {

    /** The channel a call goes out on, and its generation (one per server start). */
    record Conn(ManagedChannel channel, int generation) {}

    /** Every call's deadline: generous, since clients and server share two busy cores. */
    static final long DEADLINE_SECONDS = 60;

    private final Map<String, ClientInterceptor> tenants;
    private final ClientInterceptor operator;
    private volatile Conn conn;
    private volatile boolean window;

    SoakClients(Map<String, String> tenantTokens, String operatorToken) {
        this.tenants =
                Map.copyOf(
                        tenantTokens.entrySet().stream()
                                .collect(
                                        Collectors.toMap(
                                                Map.Entry::getKey, e -> bearer(e.getValue()))));
        this.operator = bearer(operatorToken);
    }

    private static ClientInterceptor bearer(String token) {
        Metadata auth = new Metadata();
        auth.put(
                Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + token);
        return MetadataUtils.newAttachHeadersInterceptor(auth);
    }

    /** Installs a channel to the server just started on {@code port} and closes the window. */
    void connect(int port) {
        // No transparent retries: the harness sees every refusal itself and counts it against the
        // restart window, and grpc-java 1.83's retry buffer can fail with an NPE when a channel is
        // shut down under calls in flight, as connect() does to the old one.
        ManagedChannel ch =
                NettyChannelBuilder.forAddress("127.0.0.1", port)
                        .usePlaintext()
                        .disableRetry()
                        .build();
        Conn old = conn;
        conn = new Conn(ch, old == null ? 1 : old.generation() + 1);
        window = false;
        if (old != null) {
            old.channel().shutdownNow();
        }
    }

    /** Opens the restart window: from now until {@link #connect}, UNAVAILABLE is expected. */
    void openWindow() {
        window = true;
    }

    Conn conn() {
        return conn;
    }

    /**
     * Whether a call that went out on {@code c} and failed with {@code e} failed as a restart makes
     * calls fail: UNAVAILABLE while the window was open or after its channel was replaced.
     */
    boolean expected(Conn c, StatusRuntimeException e) {
        return (e.getStatus().getCode() == Status.Code.UNAVAILABLE || closedUnderIt(e))
                && (window || conn.generation() != c.generation());
    }

    /**
     * Whether the call's connection closed under it: grpc-java reports some of those as UNKNOWN
     * "channel closed" (a ClosedChannelException from the transport) rather than UNAVAILABLE. It is
     * the same server going away, counted as UNAVAILABLE; an UNKNOWN the server sent is not.
     */
    private static boolean closedUnderIt(StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNKNOWN) {
            return false;
        }
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof ClosedChannelException) {
                return true;
            }
        }
        return false;
    }

    RecordsGrpc.RecordsBlockingStub records(Conn c, String tenant) {
        return RecordsGrpc.newBlockingStub(c.channel())
                .withInterceptors(tenants.get(tenant))
                .withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    ForgetGrpc.ForgetBlockingStub forget(Conn c, String tenant) {
        return ForgetGrpc.newBlockingStub(c.channel())
                .withInterceptors(tenants.get(tenant))
                .withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    AdminGrpc.AdminBlockingStub admin(Conn c) {
        return AdminGrpc.newBlockingStub(c.channel())
                .withInterceptors(operator)
                .withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    CollectionsGrpc.CollectionsBlockingStub collections(Conn c) {
        return CollectionsGrpc.newBlockingStub(c.channel())
                .withInterceptors(operator)
                .withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    void close() {
        Conn c = conn;
        if (c != null) {
            c.channel().shutdownNow();
        }
    }
}
