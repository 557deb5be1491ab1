package dev.nepenthe.cluster.internal;

import com.google.gson.JsonObject;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.ExcuseReplicaRequest;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.server.grpc.Replication;
import dev.nepenthe.server.grpc.RoutedCall;
import dev.nepenthe.server.grpc.RoutedResult;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.proto.RaftProtos.ReplicationLevel;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * The cluster's side of the server's {@link Replication} seam. A write becomes a WRITE entry sent
 * to the leader by this replica's Raft client (which finds the leader and retries with the same
 * call id, so Ratis's retry cache keeps a retried entry from being appended twice); the result is
 * the leader's, from applying it. A read first asks this replica's Raft server for a linearizable
 * read (ReadIndex: the leader confirms it still leads, and this replica waits until it has applied
 * up to the leader's commit index). Reads of a replicated forget ({@code cfop-...}) are answered
 * from the group's state.
 */
final class ClusterReplication implements Replication {

    private static final String GET_OPERATION =
            ForgetGrpc.getGetOperationMethod().getFullMethodName();
    private static final String WATCH = ForgetGrpc.getWatchMethod().getFullMethodName();

    /** How long a read barrier is tried again; the server gives a read ten seconds in all. */
    private static final long READ_RETRY_NANOS = TimeUnit.SECONDS.toNanos(8);

    private static final String FORGET = ForgetGrpc.getForgetMethod().getFullMethodName();

    private static final String CLUSTER_STATUS =
            AdminGrpc.getGetClusterStatusMethod().getFullMethodName();
    private static final String EXCUSE = AdminGrpc.getExcuseReplicaMethod().getFullMethodName();
    private static final String ADD_REPLICA = AdminGrpc.getAddReplicaMethod().getFullMethodName();
    private static final String REMOVE_REPLICA =
            AdminGrpc.getRemoveReplicaMethod().getFullMethodName();

    /** How long an excuse waits for the log to take it. */
    private static final long EXCUSE_WAIT_SECONDS = 15;

    private final RenewingClient client;
    private final RaftPeerId self;
    private final ForgetView view;
    private final StaleReads stale;
    private final StatusView status;
    private final Membership membership;

    ClusterReplication(
            RenewingClient client,
            RaftPeerId self,
            ForgetView view,
            StaleReads stale,
            StatusView status,
            Membership membership) {
        this.client = client;
        this.self = self;
        this.view = view;
        this.stale = stale;
        this.status = status;
        this.membership = membership;
    }

    @Override
    public CompletableFuture<RoutedResult> write(RoutedCall call) {
        boolean forget = call.method().equals(FORGET);
        if (forget) {
            Optional<RoutedResult> refused = refusedForget(call);
            if (refused.isPresent()) {
                return CompletableFuture.completedFuture(refused.get());
            }
        }
        Command c = new Command(Command.Kind.WRITE, call.encode());
        CompletableFuture<RaftClientReply> sent =
                client.send(Message.valueOf(ByteString.copyFrom(c.encode())));
        if (!forget) {
            return sent.thenApply(ClusterReplication::result);
        }
        // A forget returns once every member holds its entry, or once the stale-read lease has
        // run out on those that do not: none of them answers a stale read with what it blocks.
        return sent.thenCompose(
                reply -> {
                    RoutedResult r = result(reply);
                    if (!r.ok()) {
                        return CompletableFuture.completedFuture(r);
                    }
                    return client.async()
                            .watch(reply.getLogIndex(), ReplicationLevel.ALL_COMMITTED)
                            .handle((w, t) -> r)
                            .completeOnTimeout(
                                    r, StaleReads.LEASE_MILLIS + 500, TimeUnit.MILLISECONDS);
                });
    }

    /** Puts an operator's excuse in the log and answers with the forget as it then stands. */
    private RoutedResult excuse(RoutedCall call) {
        ExcuseReplicaRequest r;
        try {
            r = ExcuseReplicaRequest.parseFrom(call.request());
        } catch (InvalidProtocolBufferException e) {
            return RoutedResult.of(
                    Status.INVALID_ARGUMENT.withDescription("expected an ExcuseReplicaRequest"));
        }
        if (!r.getReasonCode().matches("[a-z0-9][a-z0-9_.-]{0,63}")) {
            return RoutedResult.of(
                    Status.INVALID_ARGUMENT.withDescription(
                            "reason_code: expected a code of 1 to 64 lower-case letters, digits,"
                                    + " '-', '_' or '.', got "
                                    + r.getReasonCode().length()
                                    + " characters of something else"));
        }
        JsonObject o = new JsonObject();
        o.addProperty("operation", r.getOperation());
        o.addProperty("node", r.getReplica());
        o.addProperty("reason", r.getReasonCode());
        RoutedResult applied;
        try {
            applied =
                    send(new Command(
                                    Command.Kind.EXCUSE,
                                    o.toString().getBytes(StandardCharsets.UTF_8)))
                            .get(EXCUSE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return RoutedResult.of(Status.CANCELLED.withDescription("interrupted"));
        } catch (ExecutionException | TimeoutException e) {
            return RoutedResult.of(
                    Status.UNAVAILABLE.withDescription(
                            "the log did not take the excuse within "
                                    + EXCUSE_WAIT_SECONDS
                                    + " s (no leader?); it may still be applied: look at the"
                                    + " operation"));
        }
        return applied.ok() ? view.operation(r.getOperation(), call) : applied;
    }

    /**
     * A forget by metadata filter is not replicated: while it is live a replica refuses every new
     * record its filter matches, once sealed only the records it removed, and replicas seal at
     * different moments, so a write in between would land on some and not others.
     */
    private static Optional<RoutedResult> refusedForget(RoutedCall call) {
        try {
            if (ForgetRequest.parseFrom(call.request()).getScope().hasMetadata()) {
                return Optional.of(
                        RoutedResult.of(
                                Status.FAILED_PRECONDITION.withDescription(
                                        "expected a forget by subject, record ids or source in a"
                                                + " cluster, got one by metadata filter, which"
                                                + " replicas would fence differently while it"
                                                + " seals; forget the records' ids instead")));
            }
        } catch (InvalidProtocolBufferException e) {
            // The service says what it expected.
        }
        return Optional.empty();
    }

    CompletableFuture<RoutedResult> send(Command c) {
        return send(client, c);
    }

    /** Puts a command in the log through {@code client}; answers with the result of applying it. */
    static CompletableFuture<RoutedResult> send(RenewingClient client, Command c) {
        return client.send(Message.valueOf(ByteString.copyFrom(c.encode())))
                .thenApply(ClusterReplication::result);
    }

    private static RoutedResult result(RaftClientReply reply) {
        if (!reply.isSuccess()) {
            return RoutedResult.of(
                    Status.UNAVAILABLE.withDescription(
                            "the replicated log did not take the write ("
                                    + (reply.getException() == null
                                            ? "no reason given"
                                            : reply.getException().getClass().getSimpleName())
                                    + "); it may or may not have been applied: retry with the"
                                    + " same idempotency key"));
        }
        return RoutedResult.decode(reply.getMessage().getContent().toByteArray());
    }

    @Override
    public CompletableFuture<Void> readable(boolean stale) {
        if (stale) {
            return this.stale.readable();
        }
        return readIndex(System.nanoTime() + READ_RETRY_NANOS);
    }

    /**
     * A linearizable read barrier on this replica, tried again until the deadline: a replica that
     * just started, or just lost its leader, refuses a read index until it knows the new one.
     */
    private CompletableFuture<Void> readIndex(long deadline) {
        return client.async()
                .sendReadOnlyUnordered(Message.EMPTY, self)
                .handle((reply, t) -> t == null && reply.isSuccess())
                .thenCompose(
                        ok -> {
                            if (ok) {
                                return CompletableFuture.<Void>completedFuture(null);
                            }
                            if (System.nanoTime() > deadline) {
                                return CompletableFuture.<Void>failedFuture(
                                        Status.UNAVAILABLE
                                                .withDescription(
                                                        "this replica could not confirm it is up"
                                                                + " to date (no leader?)")
                                                .asRuntimeException());
                            }
                            return CompletableFuture.supplyAsync(
                                            () -> null,
                                            CompletableFuture.delayedExecutor(
                                                    100, TimeUnit.MILLISECONDS))
                                    .thenCompose(x -> readIndex(deadline));
                        });
    }

    @Override
    public Optional<RoutedResult> answer(RoutedCall call) {
        if (call.method().equals(CLUSTER_STATUS)) {
            return Optional.of(new RoutedResult(0, "", status.status().toByteArray()));
        }
        if (call.method().equals(EXCUSE)) {
            return Optional.of(excuse(call));
        }
        if (call.method().equals(ADD_REPLICA) || call.method().equals(REMOVE_REPLICA)) {
            Optional<RoutedResult> refused =
                    call.method().equals(ADD_REPLICA)
                            ? membership.add(call)
                            : membership.remove(call);
            return Optional.of(
                    refused.orElseGet(
                            () -> new RoutedResult(0, "", status.status().toByteArray())));
        }
        if (!call.method().equals(GET_OPERATION) && !call.method().equals(WATCH)) {
            return Optional.empty();
        }
        String id;
        try {
            id = GetOperationRequest.parseFrom(call.request()).getId();
        } catch (InvalidProtocolBufferException e) {
            return Optional.empty(); // the service says what it expected
        }
        if (!id.startsWith("cfop-")) {
            return Optional.empty();
        }
        return Optional.of(view.operation(id, call));
    }
}
