package dev.nepenthe.cluster;

import dev.nepenthe.cluster.internal.Replica;
import java.io.Closeable;
import java.io.IOException;

/**
 * One replica of a group, started in this process: its store, its gRPC API on the member's client
 * address (the same API a single server has, its writes ordered by the group's replicated log), its
 * Raft server and its part in every forget. What {@code nepenthe cluster node} runs; see
 * docs/CLUSTER.md.
 */
public final class ClusterReplica implements Closeable {

    private final Replica replica;

    private ClusterReplica(Replica replica) {
        this.replica = replica;
    }

    /**
     * Starts a replica: a new one on an empty folder, or one restarting on its folder.
     *
     * @param config which member, which group, where its data lives
     * @return the running replica
     * @throws IOException if a file cannot be read or written, or a port cannot be bound
     * @throws IllegalArgumentException if a member is beyond loopback and the configuration has no
     *     TLS
     * @throws IllegalStateException if the replica was excused from a forget and its folder was not
     *     wiped since
     */
    public static ClusterReplica start(ClusterConfig config) throws IOException {
        return new ClusterReplica(Replica.start(config));
    }

    /**
     * The port of this replica's gRPC API (the one configured, or the one the system chose).
     *
     * @return the port
     */
    public int clientPort() {
        return replica.clientPort();
    }

    /**
     * The configuration it was started with.
     *
     * @return the configuration
     */
    public ClusterConfig config() {
        return replica.config();
    }

    /**
     * Stops the replica: its attestor, Raft server, API and store.
     *
     * @throws IOException if closing a file failed
     */
    @Override
    public void close() throws IOException {
        replica.close();
    }
}
