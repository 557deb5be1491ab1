package dev.nepenthe.cluster.internal;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.NodeTls;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.server.grpc.NepentheServer;
import dev.nepenthe.server.grpc.WriteApplier;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
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
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.TimeDuration;

/**
 * One replica, assembled: its store and gRPC API (writes routed through the group), its Raft server
 * with the {@link NodeStateMachine}, its payload journal, cluster state and ledger, its log surface
 * registered with the store, and its attestor. The folder layout under the data folder: {@code
 * store/} and {@code store.keys/} (the engine's), {@code raft/} (Ratis: log segments and metadata,
 * no command bodies), {@code journal/} (command bodies, encrypted), {@code cluster/} (node key,
 * state, ledger, applied index).
 */
public final class Replica implements Closeable {

    private final ClusterConfig config;
    private final RaftGroupId groupId;
    private final Nepenthe store;
    private final NepentheServer api;
    private final RaftServer raft;
    private final RenewingClient client;
    private final PayloadJournal journal;
    private final AppliedIndex applied;
    private final ClusterState state;
    private final Attestor attestor;
    private final AtomicBoolean closing;

    private Replica(
            ClusterConfig config,
            RaftGroupId groupId,
            Nepenthe store,
            NepentheServer api,
            RaftServer raft,
            RenewingClient client,
            PayloadJournal journal,
            AppliedIndex applied,
            ClusterState state,
            Attestor attestor,
            AtomicBoolean closing) {
        this.config = config;
        this.groupId = groupId;
        this.store = store;
        this.api = api;
        this.raft = raft;
        this.client = client;
        this.journal = journal;
        this.applied = applied;
        this.state = state;
        this.attestor = attestor;
        this.closing = closing;
    }

    /**
     * Starts a replica: a new one (its folder empty) or one restarting on its folder.
     *
     * @param config which member, which group, where
     * @return the running replica
     * @throws IOException if a file cannot be read or written, or a port cannot be bound
     */
    public static Replica start(ClusterConfig config) throws IOException {
        config.checkPlaintext();
        Path data = config.dataDir();
        Files.createDirectories(data);
        RaftGroupId groupId =
                RaftGroupId.valueOf(
                        UUID.nameUUIDFromBytes(config.group().getBytes(StandardCharsets.UTF_8)));
        List<RaftPeer> peers = new ArrayList<>();
        for (Member m : config.members()) {
            peers.add(
                    RaftPeer.newBuilder()
                            .setId(m.id())
                            .setAddress(m.raftAddress())
                            .setClientAddress(m.raftAddress())
                            .build());
        }
        RaftGroup group = RaftGroup.valueOf(groupId, peers);
        RaftPeerId self = RaftPeerId.valueOf(config.self());
        Path excused = data.resolve("cluster").resolve("excused");
        if (Files.exists(excused)) {
            throw new IllegalStateException(
                    "replica "
                            + config.self()
                            + " was excused from a replicated forget ("
                            + Files.readString(excused, StandardCharsets.UTF_8).strip()
                            + "): its folder "
                            + data
                            + " may hold what the group forgot without it. Wipe the folder and"
                            + " add the replica anew");
        }
        Path raftDir = data.resolve("raft");
        boolean fresh = !Files.isDirectory(raftDir.resolve(groupId.getUuid().toString()));
        NodeKey key = NodeKey.loadOrCreate(data.resolve("cluster").resolve("node.key"));
        ClusterState state =
                ClusterState.open(
                        data.resolve("cluster"),
                        groupId.getUuid().toString(),
                        config.members().stream().map(Member::id).sorted().toList());
        PayloadJournal journal = PayloadJournal.open(data.resolve("journal"));
        AppliedIndex applied = AppliedIndex.open(data.resolve("cluster").resolve("applied"));
        DestroyedThrough destroyed =
                DestroyedThrough.open(data.resolve("cluster").resolve("journal-destroyed-through"));
        AtomicReference<RaftServer> raftRef = new AtomicReference<>();
        AtomicReference<WriteApplier> applierRef = new AtomicReference<>();
        AtomicBoolean closing = new AtomicBoolean();
        Supplier<Map<String, Long>> commits = () -> commitIndexes(raftRef.get(), groupId);
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
        Nepenthe store =
                Nepenthe.open(
                        data.resolve("store"),
                        NepentheServer.withBundledEmbedders(StoreOptions.defaults()),
                        List.of(surface));
        Parameters tls = tls(config.tls());
        RenewingClient client = new RenewingClient(() -> client(group, tls));
        ForgetView view = new ForgetView(state, applierRef::get, commits);
        ClusterReplication replication =
                new ClusterReplication(
                        client,
                        self,
                        view,
                        new StaleReads(StaleReads.of(raftRef::get, groupId)),
                        new StatusView(config, StaleReads.of(raftRef::get, groupId)));
        Member me = config.member();
        NepentheServer.Options options =
                new NepentheServer.Options()
                        .listen(
                                Member.host(me.clientAddress()),
                                Member.port(me.clientAddress(), "client address"))
                        .tokens(config.tokensFile())
                        .replication(replication);
        if (config.tls() != null) {
            options.tls(config.tls().certChain(), config.tls().privateKey());
        }
        NepentheServer api = NepentheServer.start(store, options);
        applierRef.set(api.applier());
        NodeStateMachine sm =
                new NodeStateMachine(
                        config.self(),
                        excused,
                        store,
                        state,
                        journal,
                        applied,
                        destroyed,
                        applierRef::get);
        RaftServer raft =
                RaftServer.newBuilder()
                        .setServerId(self)
                        .setGroup(group)
                        .setProperties(properties(config, raftDir))
                        .setParameters(tls)
                        .setStateMachine(sm)
                        .setOption(
                                fresh
                                        ? RaftStorage.StartupOption.FORMAT
                                        : RaftStorage.StartupOption.RECOVER)
                        .build();
        raftRef.set(raft);
        raft.start();
        Attestor attestor = new Attestor(config.self(), key, state, store, replication);
        Replica r =
                new Replica(
                        config, groupId, store, api, raft, client, journal, applied, state,
                        attestor, closing);
        attestor.start();
        return r;
    }

    private static RaftProperties properties(ClusterConfig config, Path raftDir) {
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
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, false);
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
    private static Parameters tls(NodeTls t) {
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

    private static RaftClient client(RaftGroup group, Parameters tls) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        return RaftClient.newBuilder()
                .setProperties(p)
                .setParameters(tls)
                .setRaftGroup(group)
                .setRetryPolicy(
                        RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                                50, TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
                .build();
    }

    private static Map<String, Long> commitIndexes(RaftServer raft, RaftGroupId groupId) {
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

    /** This replica's store (for tests and the CLI's local checks). */
    public Nepenthe store() {
        return store;
    }

    /** The port of this replica's gRPC API. */
    public int clientPort() {
        return api.port();
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
        return commitIndexes(raft, groupId);
    }

    /** This replica's payload journal (tests look into it). */
    PayloadJournal journal() {
        return journal;
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

    @Override
    public void close() throws IOException {
        closing.set(true);
        attestor.close();
        IOException first = null;
        for (Closeable c : new Closeable[] {client, raft, api, journal, applied}) {
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
