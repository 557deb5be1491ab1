package dev.nepenthe.cluster.internal;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.FreePorts;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.NodeTls;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.server.grpc.NepentheServer;
import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.apache.ratis.util.ExitUtils;

/**
 * Replicas of one group in this JVM, each with its own folder, Raft port and gRPC port on loopback,
 * and one operator token for all. Replicas can be stopped and started again on their folders.
 */
final class LocalCluster implements AutoCloseable {

    static {
        // Ratis ends the process when a server fails for good; in a test, a failure is an
        // exception.
        ExitUtils.disableSystemExit();
    }

    final Path root;
    final List<Member> members = new ArrayList<>();
    final Replica[] replicas;
    final ManagedChannel[] channels;

    /** How many replicas the group started with; those after them joined it. */
    final int initial;

    /** How many replicas there are: started with the group, or added with {@link #join}. */
    int size;

    /** Replicas that may join beyond the first ones. */
    private static final int SPARE = 2;

    final String token;
    final Path tokensFile;

    /** Per replica TLS, or null for plaintext; and the client side's context to reach the API. */
    private final IntFunction<NodeTls> tls;

    private final SslContext clientTls;

    LocalCluster(Path root, int n) throws IOException {
        this(root, n, null, null);
    }

    LocalCluster(Path root, int n, IntFunction<NodeTls> tls, SslContext clientTls)
            throws IOException {
        this.tls = tls;
        this.clientTls = clientTls;
        this.root = root;
        this.replicas = new Replica[n + SPARE];
        this.channels = new ManagedChannel[n + SPARE];
        this.initial = n;
        this.size = n;
        tokensFile = root.resolve("tokens");
        Path tokenFile = root.resolve("token");
        NepentheServer.bootstrapTokens(tokensFile, tokenFile);
        token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        for (int i = 0; i < n; i++) {
            members.add(
                    new Member(
                            "n" + (i + 1), "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort()));
        }
        for (int i = 0; i < n; i++) {
            start(i);
        }
    }

    ClusterConfig config(int i) {
        ClusterConfig c =
                ClusterConfig.of(
                                members.get(i).id(),
                                "test-group",
                                i < initial ? members.subList(0, initial) : members,
                                root.resolve(members.get(i).id()),
                                tokensFile)
                        .withElectionTimeouts(Duration.ofMillis(300), Duration.ofMillis(600))
                        .withTls(tls == null ? null : tls.apply(i))
                        .withMasterKeyFile(groupKey());
        return i < initial ? c : c.asJoining();
    }

    /** The group's master key, made by the first replica that opens. */
    Path groupKey() {
        return root.resolve("group.key");
    }

    /**
     * Starts a new replica that joins the group once a member adds it; returns its index.
     *
     * @param id its id
     */
    int join(String id) throws IOException {
        int i = size;
        members.add(new Member(id, "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort()));
        size++;
        start(i);
        return i;
    }

    void start(int i) throws IOException {
        Replica r = Replica.start(config(i));
        NettyChannelBuilder b = NettyChannelBuilder.forAddress("127.0.0.1", r.clientPort());
        // The channel first: a client thread that sees the replica finds its channel too.
        channels[i] =
                clientTls == null
                        ? b.usePlaintext().build()
                        : b.overrideAuthority("localhost").sslContext(clientTls).build();
        replicas[i] = r;
    }

    void stop(int i) throws IOException {
        channels[i].shutdownNow();
        replicas[i].close();
        replicas[i] = null;
    }

    Path dataDir(int i) {
        return root.resolve(members.get(i).id());
    }

    CallCredentials bearer() {
        return new CallCredentials() {
            @Override
            public void applyRequestMetadata(
                    RequestInfo info, Executor executor, MetadataApplier applier) {
                Metadata m = new Metadata();
                m.put(
                        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                        "Bearer " + token);
                applier.apply(m);
            }
        };
    }

    CollectionsGrpc.CollectionsBlockingStub collections(int i) {
        return CollectionsGrpc.newBlockingStub(channels[i])
                .withCallCredentials(bearer())
                .withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    RecordsGrpc.RecordsBlockingStub records(int i) {
        return RecordsGrpc.newBlockingStub(channels[i])
                .withCallCredentials(bearer())
                .withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    AdminGrpc.AdminBlockingStub admin(int i) {
        return AdminGrpc.newBlockingStub(channels[i])
                .withCallCredentials(bearer())
                .withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    ForgetGrpc.ForgetBlockingStub forget(int i) {
        return ForgetGrpc.newBlockingStub(channels[i])
                .withCallCredentials(bearer())
                .withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    /** The index of the leader, once one is ready. */
    int awaitLeader(Duration max) throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < size; i++) {
                if (replicas[i] != null && replicas[i].division().getInfo().isLeaderReady()) {
                    return i;
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no leader within " + max);
    }

    /** Each replica's role, indexes and local forget operations, for a failure's message. */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < size; i++) {
            b.append("\n  ").append(members.get(i).id()).append(": ");
            if (replicas[i] == null) {
                b.append("stopped");
                continue;
            }
            try {
                var info = replicas[i].division().getInfo();
                b.append(info.getCurrentRole())
                        .append(" applied=")
                        .append(info.getLastAppliedIndex())
                        .append(" commits=")
                        .append(replicas[i].commitIndexes());
            } catch (IOException e) {
                b.append("no division");
            }
            replicas[i]
                    .store()
                    .operations(o -> true)
                    .forEach(
                            o ->
                                    b.append("\n    ")
                                            .append(o.id())
                                            .append(' ')
                                            .append(o.state())
                                            .append(' ')
                                            .append(o.note())
                                            .append(' ')
                                            .append(o.surfaces()));
        }
        return b.toString();
    }

    private static int freePort() throws IOException {
        return FreePorts.pick();
    }

    @Override
    public void close() throws IOException {
        for (int i = 0; i < size; i++) {
            if (replicas[i] != null) {
                stop(i);
            }
        }
    }
}
