package dev.nepenthe.cluster.chaos;

import dev.nepenthe.cluster.Member;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.ClusterStatusRequest;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import io.grpc.CallCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * One plaintext loopback channel per replica with the operator's bearer token, kept for the whole
 * round: a channel reconnects by itself when its replica comes back. Each stub is made for one call
 * with its own deadline, so a call to a killed replica ends as UNAVAILABLE or DEADLINE_EXCEEDED.
 */
final class ChaosClients implements AutoCloseable {

    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<String> CONSISTENCY =
            Metadata.Key.of("nepenthe-consistency", Metadata.ASCII_STRING_MARSHALLER);

    /** How a write ended, as a client can know it. */
    enum Outcome {
        /** The replica answered OK: the write is in the log and applied on the leader. */
        ACKED,
        /** The replica answered with a definite refusal, or the call never left: no effect. */
        REFUSED,
        /** No answer (replica killed, deadline): the write may or may not take effect, later. */
        UNKNOWN
    }

    private final List<ManagedChannel> channels = new ArrayList<>();
    private final CallCredentials bearer;

    ChaosClients(List<Member> members, String token) {
        for (Member m : members) {
            channels.add(
                    Grpc.newChannelBuilderForAddress(
                                    Member.host(m.clientAddress()),
                                    Member.port(m.clientAddress(), "client address"),
                                    InsecureChannelCredentials.create())
                            .build());
        }
        this.bearer = new Bearer(token);
    }

    private <S extends AbstractStub<S>> S unary(S stub, long seconds) {
        return stub.withCallCredentials(bearer).withDeadlineAfter(seconds, TimeUnit.SECONDS);
    }

    CollectionsGrpc.CollectionsBlockingStub collections(int i) {
        return unary(CollectionsGrpc.newBlockingStub(channels.get(i)), 10);
    }

    RecordsGrpc.RecordsBlockingStub records(int i) {
        return unary(RecordsGrpc.newBlockingStub(channels.get(i)), 8);
    }

    ForgetGrpc.ForgetBlockingStub forget(int i) {
        return unary(ForgetGrpc.newBlockingStub(channels.get(i)), 10);
    }

    ClusterStatus status(int i) {
        return unary(AdminGrpc.newBlockingStub(channels.get(i)), 5)
                .getClusterStatus(ClusterStatusRequest.getDefaultInstance());
    }

    /** Whether replica i answers a linearizable read. */
    boolean answers(int i) {
        try {
            unary(CollectionsGrpc.newBlockingStub(channels.get(i)), 3)
                    .list(ListCollectionsRequest.getDefaultInstance());
            return true;
        } catch (StatusRuntimeException e) {
            return false;
        }
    }

    /** A linearizable get on replica i; empty on NOT_FOUND. */
    Optional<Record> get(int i, String collection, String id) {
        return get(records(i), collection, id);
    }

    /** A get on replica i with {@code nepenthe-consistency: stale}; empty on NOT_FOUND. */
    Optional<Record> staleGet(int i, String collection, String id) {
        Metadata stale = new Metadata();
        stale.put(CONSISTENCY, "stale");
        return get(
                records(i).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(stale)),
                collection,
                id);
    }

    private static Optional<Record> get(
            RecordsGrpc.RecordsBlockingStub stub, String collection, String id) {
        try {
            return Optional.of(
                    stub.get(GetRequest.newBuilder().setCollection(collection).setId(id).build())
                            .getRecord());
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * What a failed write call tells. A refusal the service decided (bad argument, a fenced scope)
     * is REFUSED; so is a call that could not connect, since nothing was sent. Everything else (the
     * replica died mid-call, a deadline, a log that did not take the entry in time) may have been
     * applied or may still be: UNKNOWN.
     */
    static Outcome classify(StatusRuntimeException e) {
        switch (e.getStatus().getCode()) {
            case INVALID_ARGUMENT,
                    FAILED_PRECONDITION,
                    NOT_FOUND,
                    ALREADY_EXISTS,
                    PERMISSION_DENIED,
                    UNAUTHENTICATED,
                    OUT_OF_RANGE -> {
                return Outcome.REFUSED;
            }
            case UNAVAILABLE -> {
                for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
                    if (t instanceof ConnectException) {
                        return Outcome.REFUSED;
                    }
                }
                return Outcome.UNKNOWN;
            }
            default -> {
                return Outcome.UNKNOWN;
            }
        }
    }

    @Override
    public void close() {
        for (ManagedChannel c : channels) {
            c.shutdownNow();
        }
        for (ManagedChannel c : channels) {
            try {
                c.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** "authorization: Bearer TOKEN"; never printed. */
    private static final class Bearer extends CallCredentials {
        private final String token;

        Bearer(String token) {
            this.token = token;
        }

        @Override
        public void applyRequestMetadata(
                RequestInfo info, Executor executor, MetadataApplier applier) {
            Metadata m = new Metadata();
            m.put(AUTHORIZATION, "Bearer " + token);
            applier.apply(m);
        }

        @Override
        public String toString() {
            return "Bearer(token not shown)";
        }
    }
}
