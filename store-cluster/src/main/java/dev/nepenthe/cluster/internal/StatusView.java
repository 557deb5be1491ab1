package dev.nepenthe.cluster.internal;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.ReplicaStatus;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

/**
 * The group as this replica sees it, for {@code Admin/ClusterStatus}: who leads in which term, and
 * for every member how far it has come (its commit index as the leader last heard it) and when it
 * was last heard from.
 */
final class StatusView {

    private final ClusterConfig config;
    private final Supplier<RaftServer.Division> division;

    StatusView(ClusterConfig config, Supplier<RaftServer.Division> division) {
        this.config = config;
        this.division = division;
    }

    ClusterStatus status() {
        ClusterStatus.Builder b =
                ClusterStatus.newBuilder().setGroup(config.group()).setSelf(config.self());
        RaftServer.Division d = division.get();
        if (d == null) {
            for (Member m : config.members()) {
                b.addReplicas(unknown(m));
            }
            return b.build();
        }
        DivisionInfo info = d.getInfo();
        String leader = info.getLeaderId() == null ? "" : info.getLeaderId().toString();
        b.setLeader(leader).setTerm(info.getCurrentTerm());
        Map<String, Long> commits = new HashMap<>();
        for (CommitInfoProto c : d.getCommitInfos()) {
            commits.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
        }
        Map<String, Long> contact = new HashMap<>();
        RoleInfoProto role = info.getRoleInfoProto();
        if (role.hasLeaderInfo()) {
            for (ServerRpcProto f : role.getLeaderInfo().getFollowerInfoList()) {
                contact.put(f.getId().getId().toStringUtf8(), f.getLastRpcElapsedTimeMs());
            }
        } else if (role.hasFollowerInfo() && !leader.isEmpty()) {
            contact.put(leader, role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs());
        }
        long top = commits.getOrDefault(leader, -1L);
        // The configuration as it stands (members added or removed since the start); a replica
        // that waits to be added knows none yet.
        List<Member> members = new ArrayList<>();
        for (RaftPeer p : d.getRaftConf().getCurrentPeers()) {
            members.add(new Member(p.getId().toString(), p.getAddress(), p.getAddress()));
        }
        if (members.isEmpty()) {
            for (Member m : config.members()) {
                b.addReplicas(unknown(m));
            }
            return b.build();
        }
        members.sort(Comparator.comparing(Member::id));
        for (Member m : members) {
            long commit = commits.getOrDefault(m.id(), -1L);
            String r =
                    m.id().equals(config.self())
                            ? info.getCurrentRole().name()
                            : m.id().equals(leader) ? "LEADER" : "MEMBER";
            b.addReplicas(
                    ReplicaStatus.newBuilder()
                            .setId(m.id())
                            .setRaftAddress(m.raftAddress())
                            .setRole(r)
                            .setCommitIndex(commit)
                            .setLag(commit < 0 || top < 0 ? -1 : Math.max(0, top - commit))
                            .setLastContactMillis(contact.getOrDefault(m.id(), -1L)));
        }
        return b.build();
    }

    private static ReplicaStatus unknown(Member m) {
        return ReplicaStatus.newBuilder()
                .setId(m.id())
                .setRaftAddress(m.raftAddress())
                .setRole("UNKNOWN")
                .setCommitIndex(-1)
                .setLag(-1)
                .setLastContactMillis(-1)
                .build();
    }
}
