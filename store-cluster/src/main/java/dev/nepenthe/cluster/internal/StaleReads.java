package dev.nepenthe.cluster.internal;

import io.grpc.Status;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

/**
 * When a replica may answer a read a client asked to be stale (no round trip to the leader): only
 * while it is in touch with the group, under a lease of {@value #LEASE_MILLIS} ms. A follower must
 * have heard from its leader within the lease, a leader from a majority of its followers, and
 * either first applies everything it knows committed. A forget's write in turn returns only once
 * every member holds its entry, or once the lease has run out for those that do not ({@link
 * ClusterReplication}): so after a forget returns, a replica that has not applied it refuses stale
 * reads instead of serving what it blocks. The lease assumes clocks that run at about the same rate
 * on every machine, not synchronised ones.
 */
final class StaleReads {

    /** How long a replica counts as in touch after it last heard from the group. */
    static final long LEASE_MILLIS = 1_000;

    /** How long a stale read waits for this replica to apply what it knows committed. */
    private static final long APPLY_WAIT_MILLIS = 2_000;

    private final Supplier<RaftServer.Division> division;

    StaleReads(Supplier<RaftServer.Division> division) {
        this.division = division;
    }

    CompletableFuture<Void> readable() {
        RaftServer.Division d = division.get();
        if (d == null) {
            return refuse("it has not started");
        }
        RoleInfoProto role = d.getInfo().getRoleInfoProto();
        long touch =
                switch (role.getPeerInfoCase()) {
                    case FOLLOWERINFO ->
                            // No leader known: Ratis leaves the leader's entry empty.
                            role.getFollowerInfo().getLeaderInfo().getId().getId().isEmpty()
                                    ? Long.MAX_VALUE
                                    : role.getFollowerInfo()
                                            .getLeaderInfo()
                                            .getLastRpcElapsedTimeMs();
                    case LEADERINFO -> majorityTouch(role);
                    default -> Long.MAX_VALUE;
                };
        if (touch >= LEASE_MILLIS) {
            return refuse(
                    touch == Long.MAX_VALUE
                            ? "it is not in touch with a leader"
                            : "it last heard from the group " + touch + " ms ago");
        }
        long committed = d.getRaftLog().getLastCommittedIndex();
        return applied(
                d, committed, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(APPLY_WAIT_MILLIS));
    }

    /** The time since the leader last heard from enough followers to make a majority with it. */
    private static long majorityTouch(RoleInfoProto role) {
        var followers = role.getLeaderInfo().getFollowerInfoList();
        long[] elapsed =
                followers.stream()
                        .mapToLong(ServerRpcProto::getLastRpcElapsedTimeMs)
                        .sorted()
                        .toArray();
        int needed = (followers.size() + 1) / 2; // with the leader itself, a majority of all
        return needed == 0 ? 0 : elapsed.length < needed ? Long.MAX_VALUE : elapsed[needed - 1];
    }

    private static CompletableFuture<Void> applied(
            RaftServer.Division d, long index, long deadline) {
        if (d.getInfo().getLastAppliedIndex() >= index) {
            return CompletableFuture.completedFuture(null);
        }
        if (System.nanoTime() > deadline) {
            return refuse("it has not applied log index " + index + " yet");
        }
        return CompletableFuture.supplyAsync(
                        () -> null, CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS))
                .thenCompose(x -> applied(d, index, deadline));
    }

    private static CompletableFuture<Void> refuse(String why) {
        return CompletableFuture.failedFuture(
                Status.UNAVAILABLE
                        .withDescription(
                                "this replica cannot answer a stale read: "
                                        + why
                                        + " (a stale read there could miss a forget); ask without"
                                        + " the stale header for a linearizable read")
                        .asRuntimeException());
    }

    static Supplier<RaftServer.Division> of(Supplier<RaftServer> raft, RaftGroupId group) {
        return () -> {
            RaftServer r = raft.get();
            try {
                return r == null ? null : r.getDivision(group);
            } catch (IOException e) {
                return null;
            }
        };
    }
}
