package dev.nepenthe.cluster.internal;

import com.google.gson.JsonObject;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.grpc.v1.AddReplicaRequest;
import dev.nepenthe.grpc.v1.RemoveReplicaRequest;
import dev.nepenthe.server.grpc.RoutedCall;
import dev.nepenthe.server.grpc.RoutedResult;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.server.RaftServer;

/**
 * An operator adds or removes a replica. Both go through Ratis's configuration change; we add only
 * the checks and the order. A replica added catches up by a copy of the leader's store before the
 * configuration holds it, so the call waits for that copy (Ratis retries it meanwhile). A replica
 * removed first leaves through the log (a LEAVE entry: excused from every open forget it has not
 * attested, recorded as removed), then the configuration drops it; it stops and marks its folder
 * for wiping. An id once removed is never added again: its keys stay in the ledger, so the receipts
 * it attested still verify.
 */
final class Membership {

    private static final String ID = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
    private static final String REASON = "[a-z0-9][a-z0-9_.-]{0,63}";
    private static final long LEAVE_WAIT_SECONDS = 15;

    private final Supplier<RaftClient> adminClient;
    private final Supplier<RaftServer.Division> division;
    private final ClusterState state;
    private final Function<Command, CompletableFuture<RoutedResult>> log;

    /**
     * @param adminClient makes a client whose retries outlast a copy (closed after each call)
     * @param division this replica's Raft division, for the configuration as it stands
     * @param state the group's state
     * @param log puts a command in the log and answers with its result
     */
    Membership(
            Supplier<RaftClient> adminClient,
            Supplier<RaftServer.Division> division,
            ClusterState state,
            Function<Command, CompletableFuture<RoutedResult>> log) {
        this.adminClient = adminClient;
        this.division = division;
        this.state = state;
        this.log = log;
    }

    /** Adds a replica; empty when the configuration holds it, else why not. */
    Optional<RoutedResult> add(RoutedCall call) {
        AddReplicaRequest r;
        try {
            r = AddReplicaRequest.parseFrom(call.request());
        } catch (InvalidProtocolBufferException e) {
            return refuse(Status.INVALID_ARGUMENT, "expected an AddReplicaRequest");
        }
        Optional<RoutedResult> badId = checkId(r.getReplica());
        if (badId.isPresent()) {
            return badId;
        }
        try {
            Member.port(r.getRaftAddress(), "raft address");
        } catch (IllegalArgumentException e) {
            return refuse(Status.INVALID_ARGUMENT, e.getMessage());
        }
        List<RaftPeer> current = currentPeers();
        if (current.stream().anyMatch(p -> p.getId().toString().equals(r.getReplica()))) {
            return refuse(
                    Status.ALREADY_EXISTS,
                    "replica " + r.getReplica() + " is a member of the group already");
        }
        if (state.wasRemoved(r.getReplica()) || state.nodeKey(r.getReplica()).isPresent()) {
            return refuse(
                    Status.FAILED_PRECONDITION,
                    "expected a new replica id, got "
                            + r.getReplica()
                            + ", a member of this group before: a replica rejoins from a wiped"
                            + " folder under a new id (its old keys stay in the ledger for the"
                            + " receipts it attested)");
        }
        RaftPeer peer =
                RaftSetup.peer(new Member(r.getReplica(), r.getRaftAddress(), r.getRaftAddress()));
        return configure(
                SetConfigurationRequest.Arguments.newBuilder()
                        .setServersInNewConf(List.of(peer))
                        .setMode(SetConfigurationRequest.Mode.ADD)
                        .build());
    }

    /** Removes a replica; empty when the configuration no longer holds it, else why not. */
    Optional<RoutedResult> remove(RoutedCall call) {
        RemoveReplicaRequest r;
        try {
            r = RemoveReplicaRequest.parseFrom(call.request());
        } catch (InvalidProtocolBufferException e) {
            return refuse(Status.INVALID_ARGUMENT, "expected a RemoveReplicaRequest");
        }
        if (!r.getReasonCode().matches(REASON)) {
            return refuse(
                    Status.INVALID_ARGUMENT,
                    "reason_code: expected a code of 1 to 64 lower-case letters, digits, '-', '_'"
                            + " or '.', got "
                            + r.getReasonCode().length()
                            + " characters of something else");
        }
        Optional<RoutedResult> badId = checkId(r.getReplica());
        if (badId.isPresent()) {
            return badId;
        }
        List<RaftPeer> current = currentPeers();
        List<RaftPeer> rest = new ArrayList<>();
        for (RaftPeer p : current) {
            if (!p.getId().toString().equals(r.getReplica())) {
                rest.add(p);
            }
        }
        if (rest.size() == current.size()) {
            return refuse(
                    Status.NOT_FOUND,
                    "expected a member of the group, got "
                            + r.getReplica()
                            + ", none of "
                            + current.stream().map(p -> p.getId().toString()).toList());
        }
        if (rest.isEmpty()) {
            return refuse(
                    Status.FAILED_PRECONDITION,
                    "expected a group that keeps at least one member, got a removal of the last");
        }
        JsonObject o = new JsonObject();
        o.addProperty("node", r.getReplica());
        o.addProperty("reason", "removed:" + r.getReasonCode());
        RoutedResult left;
        try {
            left =
                    log.apply(
                                    new Command(
                                            Command.Kind.LEAVE,
                                            o.toString().getBytes(StandardCharsets.UTF_8)))
                            .get(LEAVE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return refuse(Status.CANCELLED, "interrupted");
        } catch (ExecutionException | TimeoutException e) {
            return refuse(
                    Status.UNAVAILABLE,
                    "the log did not take the removal within "
                            + LEAVE_WAIT_SECONDS
                            + " s (no leader?); ask again");
        }
        if (!left.ok()) {
            return Optional.of(left);
        }
        return configure(
                SetConfigurationRequest.Arguments.newBuilder()
                        .setServersInNewConf(rest)
                        .setMode(SetConfigurationRequest.Mode.SET_UNCONDITIONALLY)
                        .build());
    }

    private static Optional<RoutedResult> checkId(String id) {
        if (id.matches(ID)) {
            return Optional.empty();
        }
        return refuse(
                Status.INVALID_ARGUMENT,
                "replica: expected an id of 1 to 64 letters, digits, '-', '_' or '.', got "
                        + id.length()
                        + " characters of something else");
    }

    private List<RaftPeer> currentPeers() {
        return new ArrayList<>(division.get().getRaftConf().getCurrentPeers());
    }

    private Optional<RoutedResult> configure(SetConfigurationRequest.Arguments arguments) {
        try (RaftClient c = adminClient.get()) {
            RaftClientReply reply = c.admin().setConfiguration(arguments);
            if (reply.isSuccess()) {
                return Optional.empty();
            }
            return refuse(
                    Status.UNAVAILABLE,
                    "the group did not take the new configuration ("
                            + (reply.getException() == null
                                    ? "no reason given"
                                    : reply.getException().getClass().getSimpleName())
                            + "); look at the cluster status and ask again");
        } catch (IOException e) {
            return refuse(
                    Status.UNAVAILABLE,
                    "the group did not take the new configuration ("
                            + e.getClass().getSimpleName()
                            + "); look at the cluster status and ask again");
        }
    }

    private static Optional<RoutedResult> refuse(Status status, String why) {
        return Optional.of(RoutedResult.of(status.withDescription(why)));
    }
}
