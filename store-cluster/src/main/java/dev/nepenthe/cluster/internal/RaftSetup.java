package dev.nepenthe.cluster.internal;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.NodeTls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.TimeDuration;

/**
 * How a replica sets Ratis up: the group's id and peers, the server's keys (timeouts, snapshots,
 * install off, appender retries), TLS, and the clients a replica uses (writes, a configuration
 * change, a copy's fetch). Apart from {@link Replica} so that the assembly reads as one.
 */
final class RaftSetup {

    /** Applied entries between two automatic snapshot markers. */
    static final long SNAPSHOT_EVERY = 10_000;

    private RaftSetup() {}

    /** The group's Raft id: the same on every replica given the same group name. */
    static RaftGroupId groupId(String group) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(group.getBytes(StandardCharsets.UTF_8)));
    }

    static RaftPeer peer(Member m) {
        return RaftPeer.newBuilder()
                .setId(m.id())
                .setAddress(m.raftAddress())
                .setClientAddress(m.raftAddress())
                .build();
    }

    static RaftProperties properties(ClusterConfig config, Path raftDir) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(raftDir.toFile()));
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        Member me = config.member();
        GrpcConfigKeys.Server.setHost(p, Member.host(me.raftAddress()));
        GrpcConfigKeys.Server.setPort(p, Member.port(me.raftAddress(), "raft address"));
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Rpc.setTimeoutMin(
                p,
                TimeDuration.valueOf(
                        config.electionTimeoutMin().toMillis(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(
                p,
                TimeDuration.valueOf(
                        config.electionTimeoutMax().toMillis(), TimeUnit.MILLISECONDS));
        // A snapshot is a marker (the store is durable on its own): cheap, so taken often enough
        // that the Raft log (kinds and headers only) stays short. Ratis then purges the log up to
        // it, but never past a member that still needs it.
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, SNAPSHOT_EVERY);
        // A member that needs what the leader's log no longer holds, or a new one, is told to
        // catch up and fetches a copy of the leader's store itself: Ratis never ships files.
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
        // Ratis backs off from a follower it lost to one try every 5 s; a replica that restarts
        // would wait that long before it hears of what it missed. Every 200 ms, then every 1 s.
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(p, "1ms,10, 200ms,50, 1s,100000");
        // The journal forces its own file; a failed force fails it for good, so a retry of the
        // same sync could only fail again.
        RaftServerConfigKeys.Log.StateMachineData.setSync(p, true);
        RaftServerConfigKeys.Log.StateMachineData.setSyncTimeoutRetry(p, 1);
        return p;
    }

    /** Mutual TLS for Ratis's server, admin and client channels, or none. */
    static Parameters tls(NodeTls t) {
        Parameters p = new Parameters();
        if (t != null) {
            GrpcConfigKeys.TLS.setConf(
                    p,
                    new GrpcTlsConfig(
                            t.privateKey().toFile(),
                            t.certChain().toFile(),
                            t.trusted().toFile(),
                            true));
        }
        return p;
    }

    /** The client a replica writes through: 3 s a try, 50 tries 200 ms apart. */
    static RaftClient client(RaftGroup group, Parameters tls) {
        return client(group, tls, 3, 50, TimeDuration.valueOf(200, TimeUnit.MILLISECONDS));
    }

    /**
     * A client for one configuration change: it waits for a replica added to catch up by a copy,
     * which may take minutes, asking again meanwhile (Ratis answers "in progress").
     */
    static RaftClient adminClient(RaftGroup group, Parameters tls) {
        return client(group, tls, 10, 600, TimeDuration.valueOf(1, TimeUnit.SECONDS));
    }

    private static RaftClient client(
            RaftGroup group, Parameters tls, int trySeconds, int tries, TimeDuration apart) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(
                p, TimeDuration.valueOf(trySeconds, TimeUnit.SECONDS));
        return RaftClient.newBuilder()
                .setProperties(p)
                .setParameters(tls)
                .setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(tries, apart))
                .build();
    }

    static Map<String, Long> commitIndexes(RaftServer raft, RaftGroupId groupId) {
        Map<String, Long> out = new HashMap<>();
        if (raft == null) {
            return out;
        }
        try {
            for (CommitInfoProto c : raft.getDivision(groupId).getCommitInfos()) {
                out.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
            }
        } catch (IOException | RuntimeException e) {
            // Not started yet (Ratis throws "log is uninitialized" while it opens), or closing:
            // nothing known, so a forget's purge waits and asks again.
        }
        return out;
    }
}
