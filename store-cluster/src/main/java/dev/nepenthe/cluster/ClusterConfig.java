package dev.nepenthe.cluster;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * How one replica starts: which member it is, the group it belongs to, where its data lives, and
 * the tokens its gRPC API accepts.
 *
 * @param self this replica's id (one of {@code members})
 * @param group the group's name; every member must be given the same one
 * @param members every member of the group's first configuration
 * @param dataDir this replica's folder: store, keystore, Raft storage, journal, cluster state
 * @param tokensFile the tokens file of the gRPC API (see the server's docs)
 * @param electionTimeoutMin the shortest time a follower waits for the leader before it stands
 * @param electionTimeoutMax the longest such time (a random time between the two is taken)
 * @param tls TLS between replicas and on the client API, or null for plaintext (refused when a
 *     member is beyond loopback)
 * @param masterKeyFile the group's master key, the same file (or the same bytes) on every replica,
 *     or null for a key of this replica's own in its keystore folder. A replica catches up by a
 *     copy of another's store only when they share the key: the copy's keys are wrapped by it, and
 *     its write fences and holds are keyed hashes under it. {@code NEPENTHE_MASTER_KEY} takes
 *     precedence, as for a single store.
 * @param joining whether this replica joins a running group: it starts with no configuration and
 *     waits until a member adds it (Admin AddReplica), then catches up by a copy of the leader's
 *     store. {@code members} then lists the running members and this one.
 */
public record ClusterConfig(
        String self,
        String group,
        List<Member> members,
        Path dataDir,
        Path tokensFile,
        Duration electionTimeoutMin,
        Duration electionTimeoutMax,
        NodeTls tls,
        Path masterKeyFile,
        boolean joining) {

    /**
     * Checks the configuration.
     *
     * @throws IllegalArgumentException if {@code self} is not a member, ids repeat, the group name
     *     is empty, or the election timeouts are not 50 ms &lt;= min &lt; max
     */
    public ClusterConfig {
        members = List.copyOf(members);
        Set<String> ids = new HashSet<>();
        for (Member m : members) {
            if (!ids.add(m.id())) {
                throw new IllegalArgumentException(
                        "members: expected distinct ids, got '" + m.id() + "' twice");
            }
        }
        if (!ids.contains(self)) {
            throw new IllegalArgumentException(
                    "self: expected one of the members " + ids + ", got '" + self + "'");
        }
        if (group == null || group.isBlank()) {
            throw new IllegalArgumentException("group: expected a name, got none");
        }
        if (electionTimeoutMin.toMillis() < 50
                || electionTimeoutMax.compareTo(electionTimeoutMin) <= 0) {
            throw new IllegalArgumentException(
                    "election timeouts: expected 50 ms <= min < max, got "
                            + electionTimeoutMin.toMillis()
                            + " ms and "
                            + electionTimeoutMax.toMillis()
                            + " ms");
        }
    }

    /**
     * A configuration with the default election timeouts (1 to 2 seconds).
     *
     * @param self this replica's id
     * @param group the group's name
     * @param members every member
     * @param dataDir this replica's folder
     * @param tokensFile the gRPC API's tokens file
     * @return the configuration
     */
    public static ClusterConfig of(
            String self, String group, List<Member> members, Path dataDir, Path tokensFile) {
        return new ClusterConfig(
                self,
                group,
                members,
                dataDir,
                tokensFile,
                Duration.ofSeconds(1),
                Duration.ofSeconds(2),
                null,
                null,
                false);
    }

    /**
     * This replica's member entry.
     *
     * @return the member whose id is {@code self}
     */
    public Member member() {
        return members.stream().filter(m -> m.id().equals(self)).findFirst().orElseThrow();
    }

    /**
     * The same configuration with other election timeouts.
     *
     * @param min the shortest
     * @param max the longest
     * @return the configuration
     */
    public ClusterConfig withElectionTimeouts(Duration min, Duration max) {
        return new ClusterConfig(
                self, group, members, dataDir, tokensFile, min, max, tls, masterKeyFile, joining);
    }

    /**
     * The same configuration with TLS between replicas and on the client API.
     *
     * @param t this replica's certificate, key and trusted certificates
     * @return the configuration
     */
    public ClusterConfig withTls(NodeTls t) {
        return new ClusterConfig(
                self,
                group,
                members,
                dataDir,
                tokensFile,
                electionTimeoutMin,
                electionTimeoutMax,
                t,
                masterKeyFile,
                joining);
    }

    /**
     * The same configuration with the group's master key.
     *
     * @param file the key file every replica is given (see {@link #masterKeyFile()})
     * @return the configuration
     */
    public ClusterConfig withMasterKeyFile(Path file) {
        return new ClusterConfig(
                self,
                group,
                members,
                dataDir,
                tokensFile,
                electionTimeoutMin,
                electionTimeoutMax,
                tls,
                file,
                joining);
    }

    /**
     * The same configuration for a replica that joins a running group (see {@link #joining()}).
     *
     * @return the configuration
     */
    public ClusterConfig asJoining() {
        return new ClusterConfig(
                self,
                group,
                members,
                dataDir,
                tokensFile,
                electionTimeoutMin,
                electionTimeoutMax,
                tls,
                masterKeyFile,
                true);
    }

    /**
     * Refuses plaintext between replicas unless every member is on loopback: replicas send each
     * other every command body (records, forget scopes) and a node authenticates its peers only by
     * their certificates.
     *
     * @throws IllegalArgumentException if a member is beyond loopback and there is no TLS
     */
    public void checkPlaintext() {
        if (tls != null) {
            return;
        }
        for (Member m : members) {
            String host = Member.host(m.raftAddress());
            boolean loopback;
            try {
                loopback = InetAddress.getByName(host).isLoopbackAddress();
            } catch (UnknownHostException e) {
                loopback = false;
            }
            if (!loopback) {
                throw new IllegalArgumentException(
                        "member "
                                + m.id()
                                + ": expected TLS between replicas when one is beyond loopback,"
                                + " got none and raft address "
                                + m.raftAddress()
                                + ". Give each replica a certificate, its key and the certificates"
                                + " it trusts (NodeTls; 'cluster node --tls-cert --tls-key"
                                + " --tls-trust')");
            }
        }
    }
}
