package dev.nepenthe.cluster.internal;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.server.grpc.NepentheServer;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;

/**
 * One replica, assembled: its store and gRPC API (writes routed through the group), its Raft server
 * with the {@link NodeStateMachine}, its payload journal, cluster state and ledger, its log surface
 * registered with the store, and its attestor. The folder layout under the data folder: {@code
 * store/} and {@code store.keys/} (the engine's), {@code raft/} (Ratis: log segments and metadata,
 * no command bodies), {@code journal/} (command bodies, encrypted), {@code cluster/} (node key,
 * state, ledger, applied index).
 */
public final class Replica implements Closeable {

    private static final System.Logger LOG = System.getLogger(Replica.class.getName());

    private final ClusterConfig config;
    private final RaftGroupId groupId;
    private final AtomicReference<LocalEngine> engine;
    private final RaftServer raft;
    private final RenewingClient client;
    private final PayloadJournal journal;
    private final AppliedIndex applied;
    private final AppliedIndex snapshot;
    private final ClusterState state;
    private final AtomicBoolean closing;
    private boolean closed;

    private static final AtomicLong CALL_IDS = new AtomicLong();

    private Replica(
            ClusterConfig config,
            RaftGroupId groupId,
            AtomicReference<LocalEngine> engine,
            RaftServer raft,
            RenewingClient client,
            PayloadJournal journal,
            AppliedIndex applied,
            AppliedIndex snapshot,
            ClusterState state,
            AtomicBoolean closing) {
        this.config = config;
        this.groupId = groupId;
        this.engine = engine;
        this.raft = raft;
        this.client = client;
        this.journal = journal;
        this.applied = applied;
        this.snapshot = snapshot;
        this.state = state;
        this.closing = closing;
    }

    /**
     * Starts a replica: a new one (its folder empty) or one restarting on its folder. One that
     * joins a running group ({@link ClusterConfig#joining()}) starts with no configuration and
     * waits for a member to add it.
     *
     * @param config which member, which group, where
     * @return the running replica
     * @throws IOException if a file cannot be read or written, or a port cannot be bound
     * @throws IllegalStateException if the replica was excused from a forget or removed from the
     *     group: its folder must be wiped first
     */
    public static Replica start(ClusterConfig config) throws IOException {
        config.checkPlaintext();
        Path data = config.dataDir();
        Files.createDirectories(data);
        RaftGroupId groupId = RaftSetup.groupId(config.group());
        List<RaftPeer> peers = new ArrayList<>();
        for (Member m : config.members()) {
            peers.add(RaftSetup.peer(m));
        }
        RaftGroup group = RaftGroup.valueOf(groupId, peers);
        RaftPeerId self = RaftPeerId.valueOf(config.self());
        Path clusterDir = data.resolve("cluster");
        refuseIfMarked(
                config, clusterDir.resolve("excused"), "was excused from a replicated forget");
        refuseIfMarked(config, clusterDir.resolve("removed"), "was removed from the group");
        Path raftDir = data.resolve("raft");
        boolean fresh = !Files.isDirectory(raftDir.resolve(groupId.getUuid().toString()));
        if (fresh && config.joining() && !groupKey(config)) {
            throw new IllegalArgumentException(
                    "replica "
                            + config.self()
                            + ": expected the group's master key to join a running group ('cluster"
                            + " node --master-key' or NEPENTHE_MASTER_KEY), got none; it catches up"
                            + " by a copy of another replica's store, which only the group's key"
                            + " reads");
        }
        Files.createDirectories(clusterDir);
        // A copy whose swap a crash interrupted is put in place before anything opens on it.
        TermIndex pendingInstall = CopyInstall.pendingIndex(data);
        if (pendingInstall != null) {
            CopyInstall.swap(data);
        } else {
            Shred.tree(data.resolve("incoming")); // a copy that never finished arriving
        }
        NodeKey key = NodeKey.loadOrCreate(clusterDir.resolve("node.key"));
        // One that joins is a member of no configuration until it is added (the copy it installs
        // brings the group's state); the others start as the group's first configuration.
        ClusterState state =
                ClusterState.open(
                        clusterDir,
                        groupId.getUuid().toString(),
                        config.joining()
                                ? List.of()
                                : config.members().stream().map(Member::id).sorted().toList());
        PayloadJournal journal = PayloadJournal.open(data.resolve("journal"));
        AppliedIndex applied = AppliedIndex.open(clusterDir.resolve("applied"));
        AppliedIndex snapshot = AppliedIndex.open(clusterDir.resolve("snapshot"));
        DestroyedThrough destroyed =
                DestroyedThrough.open(clusterDir.resolve("journal-destroyed-through"));
        if (pendingInstall != null) {
            CopyInstall.record(pendingInstall, journal, destroyed, applied, snapshot);
            CopyInstall.finish(data);
        }
        AtomicReference<RaftServer> raftRef = new AtomicReference<>();
        AtomicReference<NodeStateMachine> machineRef = new AtomicReference<>();
        AtomicReference<LocalEngine> engineRef = new AtomicReference<>();
        AtomicBoolean closing = new AtomicBoolean();
        Supplier<Map<String, Long>> commits = () -> RaftSetup.commitIndexes(raftRef.get(), groupId);
        // Registered as the store opens, before its unfinished forgets resume: a forget resumed
        // after a crash must purge the journal like any other.
        RaftSurface surface =
                new RaftSurface(
                        state,
                        journal,
                        destroyed,
                        commits,
                        List.of(raftDir, data.resolve("journal")),
                        closing::get);
        Parameters tls = RaftSetup.tls(config.tls());
        RenewingClient client = new RenewingClient(() -> RaftSetup.client(group, tls));
        ForgetView view = new ForgetView(state, () -> engineRef.get().api().applier(), commits);
        ClusterReplication replication =
                new ClusterReplication(
                        client,
                        self,
                        view,
                        new StaleReads(StaleReads.of(raftRef::get, groupId)),
                        new StatusView(config, StaleReads.of(raftRef::get, groupId)),
                        new Membership(
                                () -> RaftSetup.adminClient(group, tls),
                                StaleReads.of(raftRef::get, groupId),
                                state,
                                c -> ClusterReplication.send(client, c)));
        Member me = config.member();
        StoreOptions storeOptions = NepentheServer.withBundledEmbedders(StoreOptions.defaults());
        if (config.masterKeyFile() != null) {
            // The first replica of a new group may make the key; one that joins must be given it.
            storeOptions =
                    storeOptions.withMasterKeyFile(config.masterKeyFile(), !config.joining());
        }
        LocalEngine.Recipe recipe =
                new LocalEngine.Recipe(
                        data.resolve("store"),
                        storeOptions,
                        List.of(surface),
                        () -> {
                            NepentheServer.Options options =
                                    new NepentheServer.Options()
                                            .listen(
                                                    Member.host(me.clientAddress()),
                                                    Member.port(
                                                            me.clientAddress(), "client address"))
                                            .tokens(config.tokensFile())
                                            .replication(replication);
                            if (config.tls() != null) {
                                options.tls(config.tls().certChain(), config.tls().privateKey());
                            }
                            return options;
                        },
                        store ->
                                new Attestor(
                                        config.self(),
                                        key,
                                        state,
                                        store,
                                        replication,
                                        // One that joins speaks once it holds the group's copy:
                                        // the store key it records is the copy's.
                                        () -> !config.joining() || snapshot.index() > 0));
        engineRef.set(LocalEngine.open(recipe));
        CopyInstall install =
                new CopyInstall(
                        data,
                        leader -> RaftSetup.client(RaftGroup.valueOf(groupId, leader), tls),
                        groupKey(config),
                        machineRef::get,
                        new CopyInstall.Engine() {
                            @Override
                            public void close() throws IOException {
                                engineRef.get().close();
                            }

                            @Override
                            public void open() throws IOException {
                                engineRef.set(LocalEngine.open(recipe));
                            }
                        },
                        state,
                        journal,
                        destroyed,
                        applied,
                        snapshot);
        Replica[] made = new Replica[1];
        NodeStateMachine sm =
                new NodeStateMachine(
                        config.self(),
                        clusterDir,
                        () -> engineRef.get().store(),
                        state,
                        journal,
                        applied,
                        snapshot,
                        destroyed,
                        () -> engineRef.get().api().applier(),
                        install,
                        () -> removed(made, clusterDir, closing));
        machineRef.set(sm);
        RaftServer raft =
                RaftServer.newBuilder()
                        .setServerId(self)
                        .setGroup(fresh && config.joining() ? RaftGroup.valueOf(groupId) : group)
                        .setProperties(RaftSetup.properties(config, raftDir))
                        .setParameters(tls)
                        .setStateMachine(sm)
                        .setOption(
                                fresh
                                        ? RaftStorage.StartupOption.FORMAT
                                        : RaftStorage.StartupOption.RECOVER)
                        .build();
        raftRef.set(raft);
        raft.start();
        Replica r =
                new Replica(
                        config, groupId, engineRef, raft, client, journal, applied, snapshot, state,
                        closing);
        made[0] = r;
        return r;
    }

    /** Whether this replica is given the group's master key (a file, or the variable). */
    private static boolean groupKey(ClusterConfig config) {
        String env = System.getenv("NEPENTHE_MASTER_KEY");
        return config.masterKeyFile() != null || (env != null && !env.isBlank());
    }

    private static void refuseIfMarked(ClusterConfig config, Path marker, String why)
            throws IOException {
        if (Files.exists(marker)) {
            throw new IllegalStateException(
                    "replica "
                            + config.self()
                            + " "
                            + why
                            + " ("
                            + Files.readString(marker, StandardCharsets.UTF_8).strip()
                            + "): its folder "
                            + config.dataDir()
                            + " may hold what the group forgot without it. Wipe the folder and"
                            + " add the replica anew, under a new id");
        }
    }

    /**
     * Ratis closed this replica's division: a member removed it from the group. The replica marks
     * its folder (it must be wiped before it serves again: the group's later forgets will not reach
     * it) and stops.
     */
    private static void removed(Replica[] made, Path clusterDir, AtomicBoolean closing) {
        if (closing.get()) {
            return;
        }
        try {
            Durable.write(clusterDir.resolve("removed"), "removed from the group\n");
        } catch (IOException e) {
            LOG.log(System.Logger.Level.ERROR, "could not mark this replica removed", e);
        }
        Thread.ofPlatform()
                .daemon()
                .name("nepenthe-removed")
                .start(
                        () -> {
                            Replica r = made[0];
                            if (r == null) {
                                return;
                            }
                            try {
                                r.close();
                            } catch (IOException e) {
                                LOG.log(
                                        System.Logger.Level.WARNING,
                                        "closing a removed replica failed",
                                        e);
                            }
                        });
    }

    /** This replica's store (for tests and the CLI's local checks). */
    public Nepenthe store() {
        return engine.get().store();
    }

    /** The port of this replica's gRPC API. */
    public int clientPort() {
        return engine.get().api().port();
    }

    /** The replica's configuration. */
    public ClusterConfig config() {
        return config;
    }

    /** This replica's Raft division (role, term, indexes). */
    public RaftServer.Division division() throws IOException {
        return raft.getDivision(groupId);
    }

    /** The commit index each member is known to have reached. */
    public Map<String, Long> commitIndexes() {
        return RaftSetup.commitIndexes(raft, groupId);
    }

    /** This replica's payload journal (tests look into it). */
    PayloadJournal journal() {
        return journal;
    }

    /** The hash of the cluster ledger's last line (replicas that agree hold the same ledger). */
    public String ledgerHead() {
        return state.ledger().head();
    }

    /** The cluster ledger's file. */
    public Path ledgerFile() {
        return state.ledger().file();
    }

    /**
     * The receipt of a sealed replicated forget.
     *
     * @param operation the replicated forget's id
     * @return its receipt, or null while it is open (or unknown)
     */
    public String receipt(String operation) {
        return state.forget(operation).map(f -> f.receipt).orElse(null);
    }

    /** Node keys (base64) and store keys (PEM) the ledger recorded, by member. */
    public List<Map<String, String>> recordedKeys() {
        Map<String, String> node = new HashMap<>();
        Map<String, String> storeKeys = new HashMap<>();
        for (var e : state.ledger().entries()) {
            if (e.get("kind").getAsString().equals("NODE_JOINED")) {
                node.put(e.get("node").getAsString(), e.get("nodeKey").getAsString());
                storeKeys.put(e.get("node").getAsString(), e.get("storeKey").getAsString());
            }
        }
        return List.of(node, storeKeys);
    }

    /** Whether this replica was removed from the group (it stopped, its folder marked). */
    public boolean removedFromGroup() {
        return Files.exists(config.dataDir().resolve("cluster").resolve("removed"));
    }

    /** The last entry a Raft snapshot marker (or an installed copy) says the store holds. */
    public long snapshotIndex() {
        return snapshot.index();
    }

    /**
     * Takes a Raft snapshot now (a marker: the store is durable already), so Ratis may purge its
     * log up to it.
     *
     * @return the snapshot's index
     * @throws IOException if Ratis refuses or fails
     */
    public long takeSnapshot() throws IOException {
        var reply =
                raft.snapshotManagement(
                        SnapshotManagementRequest.newCreate(
                                ClientId.randomId(),
                                RaftPeerId.valueOf(config.self()),
                                groupId,
                                CALL_IDS.incrementAndGet(),
                                30_000,
                                1));
        if (!reply.isSuccess()) {
            throw new IOException(
                    "snapshot: expected success, got "
                            + (reply.getException() == null
                                    ? "a refusal"
                                    : reply.getException().getMessage()));
        }
        return reply.getLogIndex();
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        closing.set(true);
        IOException first = null;
        Closeable engineCloser = () -> engine.get().close();
        for (Closeable c :
                new Closeable[] {client, raft, engineCloser, journal, applied, snapshot}) {
            try {
                c.close();
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
