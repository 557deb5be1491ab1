package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Raft client a replica sends its writes through, closed while writes are in flight. */
@Timeout(60)
final class RenewingClientTest {

    @Test
    void closingWithWritesInFlightEndsAndFailsThem() throws Exception {
        // A peer that takes connections and never answers: the writes stay in flight on an open
        // stream, as they do to a replica that stops mid-call.
        ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        List<Socket> held = Collections.synchronizedList(new ArrayList<>());
        Thread acceptor =
                Thread.ofPlatform()
                        .daemon()
                        .start(
                                () -> {
                                    try {
                                        while (true) {
                                            held.add(silent.accept());
                                        }
                                    } catch (IOException e) {
                                        // closed at the end of the test
                                    }
                                });
        int port = silent.getLocalPort();
        RaftGroup group =
                RaftGroup.valueOf(
                        RaftGroupId.randomId(),
                        RaftPeer.newBuilder()
                                .setId("gone")
                                .setAddress("127.0.0.1:" + port)
                                .build());
        RenewingClient client =
                new RenewingClient(
                        () -> {
                            RaftProperties p = new RaftProperties();
                            RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
                            RaftClientConfigKeys.Rpc.setRequestTimeout(
                                    p, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS));
                            return RaftClient.newBuilder()
                                    .setProperties(p)
                                    .setRaftGroup(group)
                                    .setRetryPolicy(
                                            RetryPolicies.retryForeverWithSleep(
                                                    TimeDuration.valueOf(
                                                            50, TimeUnit.MILLISECONDS)))
                                    .build();
                        });
        List<CompletableFuture<RaftClientReply>> writes = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            writes.add(client.send(Message.valueOf("w" + i)));
        }
        Thread.sleep(400);
        // Closing fails the writes in flight; their callbacks run while close waits for them.
        Thread closer =
                Thread.ofPlatform()
                        .start(
                                () -> {
                                    try {
                                        client.close();
                                    } catch (IOException e) {
                                        throw new UncheckedIOException(e);
                                    }
                                });
        closer.join(20_000);
        assertThat(closer.isAlive()).as("close() returned").isFalse();
        for (CompletableFuture<RaftClientReply> w : writes) {
            assertThat(w).failsWithin(Duration.ofSeconds(10));
        }
        silent.close();
        acceptor.join(5_000);
        for (Socket s : held) {
            s.close();
        }
    }
}
