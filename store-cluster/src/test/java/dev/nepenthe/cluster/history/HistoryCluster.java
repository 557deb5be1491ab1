package dev.nepenthe.cluster.history;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.FreePorts;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.internal.Replica;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.server.grpc.NepentheServer;
import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.util.ExitUtils;

/**
 * Three replicas of one group in this JVM on loopback, for histories: clients pick a replica per
 * call while another thread stops and restarts one, so the replicas and their channels are
 * published for other threads and a stopped replica's channel is shut down (its calls fail
 * UNAVAILABLE). A copy of the internal package's fixture, narrowed to what histories use.
 */
final class HistoryCluster implements AutoCloseable {

    static {
        // Ratis ends the process when a server fails for good; in a test, a failure is an
        // exception.
        ExitUtils.disableSystemExit();
    }

    private static final Metadata.Key<String> CONSISTENCY =
            Metadata.Key.of("nepenthe-consistency", Metadata.ASCII_STRING_MARSHALLER);

    private final Path root;
    private final List<Member> members = new ArrayList<>();
    private final Replica[] replicas;
    private final ManagedChannel[] channels;
    private final String token;
    private final Path tokensFile;

    HistoryCluster(Path root, int n) throws IOException {
        this.root = root;
        this.replicas = new Replica[n];
        this.channels = new ManagedChannel[n];
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

    int size() {
        return replicas.length;
    }

    private ClusterConfig config(int i) {
        return ClusterConfig.of(
                        members.get(i).id(),
                        "history-group",
                        members,
                        root.resolve(members.get(i).id()),
                        tokensFile)
                .withElectionTimeouts(Duration.ofMillis(300), Duration.ofMillis(600));
    }

    void start(int i) throws IOException {
        Replica r = Replica.start(config(i));
        ManagedChannel ch =
                NettyChannelBuilder.forAddress("127.0.0.1", r.clientPort()).usePlaintext().build();
        synchronized (this) {
            replicas[i] = r;
            channels[i] = ch;
        }
    }

    /** Stops a replica; from now on its channel refuses calls (UNAVAILABLE). */
    void stop(int i) throws IOException {
        Replica r;
        synchronized (this) {
            r = replicas[i];
            replicas[i] = null;
            channels[i].shutdownNow();
        }
        r.close();
    }

    synchronized Replica replica(int i) {
        return replicas[i];
    }

    private synchronized ManagedChannel channel(int i) {
        return channels[i];
    }

    private CallCredentials bearer() {
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

    RecordsGrpc.RecordsBlockingStub records(int i, Duration deadline) {
        return RecordsGrpc.newBlockingStub(channel(i))
                .withCallCredentials(bearer())
                .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Reads that this replica answers from what it has applied, without a read barrier. */
    RecordsGrpc.RecordsBlockingStub staleRecords(int i, Duration deadline) {
        Metadata stale = new Metadata();
        stale.put(CONSISTENCY, "stale");
        return records(i, deadline)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(stale));
    }

    ForgetGrpc.ForgetBlockingStub forget(int i, Duration deadline) {
        return ForgetGrpc.newBlockingStub(channel(i))
                .withCallCredentials(bearer())
                .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
    }

    CollectionsGrpc.CollectionsBlockingStub collections(int i, Duration deadline) {
        return CollectionsGrpc.newBlockingStub(channel(i))
                .withCallCredentials(bearer())
                .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The index of the leader, once one is ready. */
    int awaitLeader(Duration max) throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            for (int i = 0; i < replicas.length; i++) {
                Replica r = replica(i);
                if (r != null && r.division().getInfo().isLeaderReady()) {
                    return i;
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no leader within " + max + describe());
    }

    /**
     * Waits until the leader's commit index stays put for {@code still} and every replica has
     * applied up to it; returns that index, or throws naming the indexes after {@code max}.
     */
    long awaitQuiet(Duration still, Duration max) throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        long last = -1;
        long since = System.nanoTime();
        while (System.nanoTime() < deadline) {
            int leader = awaitLeader(max);
            long commit = replica(leader).division().getRaftLog().getLastCommittedIndex();
            boolean applied = true;
            for (int i = 0; i < replicas.length; i++) {
                Replica r = replica(i);
                applied &= r != null && r.division().getInfo().getLastAppliedIndex() >= commit;
            }
            if (commit != last || !applied) {
                last = commit;
                since = System.nanoTime();
            } else if (System.nanoTime() - since >= still.toNanos()) {
                return commit;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the group did not go quiet within " + max + describe());
    }

    /** Each replica's role and indexes, for a failure's message. */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < replicas.length; i++) {
            b.append("\n  ").append(members.get(i).id()).append(": ");
            Replica r = replica(i);
            if (r == null) {
                b.append("stopped");
                continue;
            }
            try {
                var info = r.division().getInfo();
                b.append(info.getCurrentRole())
                        .append(" term=")
                        .append(info.getCurrentTerm())
                        .append(" applied=")
                        .append(info.getLastAppliedIndex())
                        .append(" commits=")
                        .append(r.commitIndexes());
            } catch (IOException e) {
                b.append("no division");
            }
        }
        return b.toString();
    }

    private static int freePort() throws IOException {
        return FreePorts.pick();
    }

    @Override
    public void close() throws IOException {
        for (int i = 0; i < replicas.length; i++) {
            if (replica(i) != null) {
                stop(i);
            }
        }
    }
}
