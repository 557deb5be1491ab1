package dev.nepenthe.cluster.cli;

import dev.nepenthe.cluster.Member;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.server.cli.BearerToken;
import io.grpc.CallCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A plaintext gRPC channel to one local node's API with the operator's bearer token on every call
 * (loopback only: the nodes {@code up} and {@code demo} start listen on 127.0.0.1). Each stub is
 * made for one call, with its own deadline.
 */
final class NodeClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final CallCredentials bearer;

    NodeClient(Member member, String token) {
        this.channel =
                Grpc.newChannelBuilderForAddress(
                                Member.host(member.clientAddress()),
                                Member.port(member.clientAddress(), "client address"),
                                InsecureChannelCredentials.create())
                        .build();
        this.bearer = new BearerToken(token);
    }

    private <S extends AbstractStub<S>> S unary(S stub, long seconds) {
        return stub.withCallCredentials(bearer).withDeadlineAfter(seconds, TimeUnit.SECONDS);
    }

    CollectionsGrpc.CollectionsBlockingStub collections() {
        return unary(CollectionsGrpc.newBlockingStub(channel), 30);
    }

    RecordsGrpc.RecordsBlockingStub records() {
        return unary(RecordsGrpc.newBlockingStub(channel), 30);
    }

    /** The admin service; a membership change waits for a new replica's copy, so minutes. */
    AdminGrpc.AdminBlockingStub admin(long seconds) {
        return unary(AdminGrpc.newBlockingStub(channel), seconds);
    }

    ForgetGrpc.ForgetBlockingStub forget() {
        return unary(ForgetGrpc.newBlockingStub(channel), 30);
    }

    ForgetGrpc.ForgetFutureStub forgetAsync() {
        return unary(ForgetGrpc.newFutureStub(channel), 60);
    }

    /**
     * Whether the node answers a linearizable read, which it can only once the group has a leader
     * and the node has caught up with it.
     */
    boolean answers() {
        try {
            unary(CollectionsGrpc.newBlockingStub(channel), 3)
                    .list(ListCollectionsRequest.getDefaultInstance());
            return true;
        } catch (StatusRuntimeException e) {
            return false;
        }
    }

    /** A record, or empty when the node answers NOT_FOUND. */
    Optional<Record> get(String collection, String id) {
        try {
            return Optional.of(
                    records()
                            .get(
                                    GetRequest.newBuilder()
                                            .setCollection(collection)
                                            .setId(id)
                                            .build())
                            .getRecord());
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
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
