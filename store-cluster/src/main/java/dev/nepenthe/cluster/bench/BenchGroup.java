package dev.nepenthe.cluster.bench;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.internal.Replica;
import dev.nepenthe.core.MasterKeyFiles;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.grpc.v1.AddReplicaRequest;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.RemoveReplicaRequest;
import dev.nepenthe.server.grpc.NepentheServer;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What a measurement talks to: a plain single-node server, or a group of replicas in this JVM, each
 * with its own folder and its Raft and gRPC ports on loopback, all accepting one operator token.
 * Replicas can be stopped and started again on their folders. Every call it makes has a deadline.
 */
final class BenchGroup implements AutoCloseable {

    /** Deadline of one gRPC call: a stuck call fails the step rather than hanging it. */
    static final long CALL_SECONDS = 60;

    private static final String CONSISTENCY_HEADER = "nepenthe-consistency";

    /** Ports handed out in this JVM, never twice. */
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

    private final Path root;
    private final String token;
    private final Path tokensFile;
    private final List<Member> members = new ArrayList<>();
    private final Duration electionMin;
    private final Duration electionMax;
    private final Replica[] replicas;
    private final ManagedChannel[] channels;
    private final Nepenthe plainStore;
    private final NepentheServer plainServer;
    private Replica joiner;
    private Member joinerMember;

    private BenchGroup(Path root, int n, Duration electionMin, Duration electionMax, boolean plain)
            throws IOException {
        this.root = root;
        this.electionMin = electionMin;
        this.electionMax = electionMax;
        Files.createDirectories(root);
        tokensFile = root.resolve("tokens");
        Path tokenFile = root.resolve("token");
        NepentheServer.bootstrapTokens(tokensFile, tokenFile);
        token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        replicas = new Replica[n];
        channels = new ManagedChannel[n];
        if (plain) {
            plainStore = Nepenthe.open(root.resolve("store"));
            plainServer =
                    NepentheServer.start(
                            plainStore,
                            new NepentheServer.Options().listen("127.0.0.1", 0).tokens(tokensFile));
            channels[0] = channel(plainServer.port());
            return;
        }
        plainStore = null;
        plainServer = null;
        for (int i = 0; i < n; i++) {
            members.add(
                    new Member(
                            "n" + (i + 1), "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort()));
        }
        // One master key for the group, so that a replica can join it by a copy.
        MasterKeyFiles.ensure(groupKey());
        for (int i = 0; i < n; i++) {
            start(i);
        }
    }

    /** A single-node server (no Raft), for reference. */
    static BenchGroup plainServer(Path root) throws IOException {
        return new BenchGroup(root, 1, Duration.ofSeconds(1), Duration.ofSeconds(2), true);
    }

    /** {@code n} replicas of one group, started. */
    static BenchGroup replicas(Path root, int n, Duration electionMin, Duration electionMax)
            throws IOException {
        return new BenchGroup(root, n, electionMin, electionMax, false);
    }

    int size() {
        return replicas.length;
    }

    boolean plain() {
        return plainServer != null;
    }

    boolean running(int i) {
        return plain() || replicas[i] != null;
    }

    Replica replica(int i) {
        return replicas[i];
    }

    String memberId(int i) {
        return members.get(i).id();
    }

    /** The gRPC port of member {@code i}. */
    int port(int i) {
        return plain() ? plainServer.port() : replicas[i].clientPort();
    }

    void start(int i) throws IOException {
        ClusterConfig config =
                ClusterConfig.of(
                                members.get(i).id(),
                                "bench-group",
                                members,
                                root.resolve(members.get(i).id()),
                                tokensFile)
                        .withElectionTimeouts(electionMin, electionMax)
                        .withMasterKeyFile(groupKey());
        replicas[i] = Replica.start(config);
        channels[i] = channel(replicas[i].clientPort());
    }

    void stop(int i) throws IOException {
        channels[i].shutdownNow();
        Replica r = replicas[i];
        replicas[i] = null;
        r.close();
    }

    /**
     * A new channel of its own to member {@code i} (a client's connection); the caller closes it.
     */
    ManagedChannel open(int i) {
        return channel(port(i));
    }

    private static ManagedChannel channel(int port) {
        return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    }

    private Metadata headers(boolean stale) {
        Metadata m = new Metadata();
        m.put(
                Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + token);
        if (stale) {
            m.put(Metadata.Key.of(CONSISTENCY_HEADER, Metadata.ASCII_STRING_MARSHALLER), "stale");
        }
        return m;
    }

    /** Records calls over {@code ch}, stale reads when asked; set a deadline per call. */
    RecordsGrpc.RecordsBlockingStub records(ManagedChannel ch, boolean stale) {
        return RecordsGrpc.newBlockingStub(ch)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers(stale)));
    }

    RecordsGrpc.RecordsBlockingStub records(int i) {
        return records(channels[i], false).withDeadlineAfter(CALL_SECONDS, TimeUnit.SECONDS);
    }

    ForgetGrpc.ForgetBlockingStub forget(int i) {
        return ForgetGrpc.newBlockingStub(channels[i])
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers(false)))
                .withDeadlineAfter(CALL_SECONDS, TimeUnit.SECONDS);
    }

    /** Creates a collection through member {@code via}. */
    void create(int via, String name, int dim, String index) {
        CollectionsGrpc.newBlockingStub(channels[via])
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers(false)))
                .withDeadlineAfter(CALL_SECONDS, TimeUnit.SECONDS)
                .create(
                        CreateCollectionRequest.newBuilder()
                                .setSpec(
                                        CollectionSpec.newBuilder()
                                                .setName(name)
                                                .setDimension(dim)
                                                .setMetric(Metric.COSINE)
                                                .setIndexKind(index))
                                .build());
    }

    /** Whether member {@code i} runs and leads with its leadership ready to serve. */
    boolean leaderReady(int i) throws IOException {
        return plain() || (replicas[i] != null && replicas[i].division().getInfo().isLeaderReady());
    }

    /** The index of the leader, once one is ready. */
    int awaitLeader(Duration max) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        do {
            for (int i = 0; i < size(); i++) {
                if (leaderReady(i)) {
                    return i;
                }
            }
            Thread.sleep(10);
        } while (System.nanoTime() < deadline);
        throw new IllegalStateException("no leader ready within " + max + ":" + describe());
    }

    /** Member {@code i}'s last applied log index. */
    long applied(int i) throws IOException {
        return replicas[i].division().getInfo().getLastAppliedIndex();
    }

    /** Member {@code i}'s commit index (the leader's is the group's). */
    long committed(int i) throws IOException {
        return replicas[i].division().getRaftLog().getLastCommittedIndex();
    }

    /** Waits until member {@code i} has applied up to {@code index}. */
    void awaitApplied(int i, long index, Duration max) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (applied(i) < index) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        memberId(i)
                                + " did not apply up to index "
                                + index
                                + " within "
                                + max
                                + ":"
                                + describe());
            }
            Thread.sleep(20);
        }
    }

    /** Each member's role and indexes, for a failure's message. */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < replicas.length && !plain(); i++) {
            b.append("\n  ").append(members.get(i).id()).append(": ");
            if (replicas[i] == null) {
                b.append("stopped");
                continue;
            }
            try {
                var info = replicas[i].division().getInfo();
                b.append(info.getCurrentRole())
                        .append(" term=")
                        .append(info.getCurrentTerm())
                        .append(" applied=")
                        .append(info.getLastAppliedIndex())
                        .append(" commits=")
                        .append(replicas[i].commitIndexes());
            } catch (IOException e) {
                b.append("no division (").append(e.getMessage()).append(')');
            }
        }
        return b.toString();
    }

    /** The group's master key: every replica opens with it, so that one can join by a copy. */
    Path groupKey() {
        return root.resolve("group.key");
    }

    /** Starts a replica that waits until a member adds it (see {@link #addJoiner}). */
    void startJoiner(String id) throws IOException {
        joinerMember = new Member(id, "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort());
        List<Member> all = new ArrayList<>(members);
        all.add(joinerMember);
        joiner =
                Replica.start(
                        ClusterConfig.of(id, "bench-group", all, root.resolve(id), tokensFile)
                                .withElectionTimeouts(electionMin, electionMax)
                                .withMasterKeyFile(groupKey())
                                .asJoining());
    }

    /** Asks member {@code via} to add the joiner; returns once the configuration holds it. */
    void addJoiner(int via, Duration max) {
        AdminGrpc.newBlockingStub(channels[via])
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers(false)))
                .withDeadlineAfter(max.toMillis(), TimeUnit.MILLISECONDS)
                .addReplica(
                        AddReplicaRequest.newBuilder()
                                .setReplica(joinerMember.id())
                                .setRaftAddress(joinerMember.raftAddress())
                                .build());
    }

    /** The joiner's last applied log index. */
    long joinerApplied() throws IOException {
        return joiner.division().getInfo().getLastAppliedIndex();
    }

    /** The log index of the copy the joiner installed (0 before it has one). */
    long joinerCopyIndex() {
        return joiner.snapshotIndex();
    }

    /** The joiner's folder. */
    Path joinerDir() {
        return root.resolve(joinerMember.id());
    }

    /** Asks member {@code via} to remove the joiner again, and closes it. */
    void removeJoiner(int via) throws IOException {
        AdminGrpc.newBlockingStub(channels[via])
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers(false)))
                .withDeadlineAfter(CALL_SECONDS, TimeUnit.SECONDS)
                .removeReplica(
                        RemoveReplicaRequest.newBuilder()
                                .setReplica(joinerMember.id())
                                .setReasonCode("bench-done")
                                .build());
        joiner.close();
        joiner = null;
    }

    /**
     * A free loopback port below the kernel's ephemeral range (32768 up), where an outgoing
     * connection could take the port between this check and the replica's bind.
     */
    private static int freePort() throws IOException {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = 10_000 + ThreadLocalRandom.current().nextInt(22_000);
            if (!GIVEN.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // another program's: try another
            }
        }
        throw new IOException("no free loopback port between 10000 and 32000");
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        if (joiner != null) {
            joiner.close();
            joiner = null;
        }
        for (int i = 0; i < replicas.length; i++) {
            try {
                if (plain()) {
                    channels[i].shutdownNow();
                } else if (replicas[i] != null) {
                    stop(i);
                }
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (plain()) {
            try {
                plainServer.close();
            } finally {
                plainStore.close();
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
