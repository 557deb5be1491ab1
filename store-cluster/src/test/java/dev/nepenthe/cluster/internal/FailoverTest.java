package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader dies with a forget in flight: a new leader serves, the client's retry with the same
 * idempotency key gets the same operation, and the forget seals once the old leader is back. Stale
 * reads are served only by a replica in touch with the group. A replica whose Raft client ran out
 * of retries while the group had no majority routes writes again once it has one.
 */
@Timeout(240)
final class FailoverTest {

    private static final int DIM = 4;

    @TempDir Path dir;

    private static Record record(String id, String subject, int axis) {
        Record.Builder b = Record.newBuilder().setId(id).setSubject(subject);
        for (int i = 0; i < DIM; i++) {
            b.addVector(i == axis ? 1f : 0.01f * (i + 1));
        }
        return b.build();
    }

    private static ForgetRequest forgetAlice() {
        return ForgetRequest.newBuilder()
                .setScope(ForgetScope.newBuilder().setSubject("alice"))
                .setIdempotencyKey("ticket-failover")
                .setReasonCode("gdpr-art17")
                .build();
    }

    private static void setUp(LocalCluster c, int via) throws InterruptedException {
        c.collections(via)
                .create(
                        CreateCollectionRequest.newBuilder()
                                .setSpec(
                                        CollectionSpec.newBuilder()
                                                .setName("notes")
                                                .setDimension(DIM)
                                                .setMetric(Metric.COSINE))
                                .build());
        c.records(via)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(record("a1", "alice", 0))
                                .addRecords(record("b1", "bob", 2))
                                .build());
        for (int t = 0; t < 300 && c.replicas[via].recordedKeys().get(0).size() < 3; t++) {
            Thread.sleep(100);
        }
    }

    @Test
    void theLeaderDiesWithAForgetInFlightAndARetryGetsTheSameOperation() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            int via = (leader + 1) % 3;
            setUp(c, via);
            // The forget is sent; the leader is stopped while it is on its way or being applied.
            CompletableFuture<Operation> first =
                    CompletableFuture.supplyAsync(() -> c.forget(via).forget(forgetAlice()));
            Thread.sleep(5);
            long stopped = System.nanoTime();
            c.stop(leader);
            int next = c.awaitLeader(Duration.ofSeconds(30));
            long elected = System.nanoTime();
            assertThat(next).isNotEqualTo(leader);
            Operation retried = null;
            for (int attempt = 0; retried == null && attempt < 20; attempt++) {
                try {
                    retried = c.forget(via).forget(forgetAlice());
                } catch (StatusRuntimeException e) {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                    Thread.sleep(250);
                }
            }
            assertThat(retried).as("a retry through %s", via).isNotNull();
            try {
                Operation original = first.get(30, TimeUnit.SECONDS);
                assertThat(original.getId()).isEqualTo(retried.getId());
            } catch (java.util.concurrent.ExecutionException e) {
                // The first call may have failed with the leader; its retry stands for it.
                assertThat(e.getCause()).isInstanceOf(StatusRuntimeException.class);
            }
            System.out.printf(
                    "leader stopped -> new leader ready in %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(elected - stopped));
            for (int i = 0; i < 3; i++) {
                if (i != leader) {
                    int n = i;
                    assertThatThrownBy(
                                    () ->
                                            c.records(n)
                                                    .get(
                                                            GetRequest.newBuilder()
                                                                    .setCollection("notes")
                                                                    .setId("a1")
                                                                    .build()))
                            .isInstanceOf(StatusRuntimeException.class)
                            .hasMessageContaining("NOT_FOUND");
                }
            }
            Operation waiting =
                    c.forget(next)
                            .getOperation(
                                    GetOperationRequest.newBuilder()
                                            .setId(retried.getId())
                                            .build());
            assertThat(waiting.getState()).isNotEqualTo("SEALED");
            c.start(leader);
            Operation sealed = null;
            for (int t = 0; t < 900; t++) {
                sealed =
                        c.forget(leader)
                                .getOperation(
                                        GetOperationRequest.newBuilder()
                                                .setId(retried.getId())
                                                .build());
                if (sealed.getSettled()) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(sealed.getState()).as(sealed.getNote() + c.describe()).isEqualTo("SEALED");
            assertThat(c.replicas[leader].store().collection("notes").get("a1")).isEmpty();
            assertThat(c.replicas[leader].store().collection("notes").get("b1")).isPresent();
        }
    }

    @Test
    void aReplicaRoutesWritesAgainAfterItsRaftClientRanOutOfRetries() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            // A follower left alone: each try of its client is refused at once (peers down, no
            // leader), so its retries run out in about ten seconds.
            int alone = (leader + 1) % 3;
            setUp(c, alone);
            c.stop((alone + 1) % 3);
            c.stop((alone + 2) % 3);
            UpsertRequest write =
                    UpsertRequest.newBuilder()
                            .setCollection("notes")
                            .addRecords(record("c1", "carol", 1))
                            .build();
            // No majority for longer than the replica's Raft client retries: Ratis fails that
            // client for good, and the write with it.
            assertThatThrownBy(() -> c.records(alone).upsert(write))
                    .isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("UNAVAILABLE");
            c.start((alone + 1) % 3);
            c.start((alone + 2) % 3);
            c.awaitLeader(Duration.ofSeconds(30));
            // The same replica takes writes again: a new client took the failed one's place.
            StatusRuntimeException last = null;
            boolean written = false;
            for (int attempt = 0; !written && attempt < 120; attempt++) {
                try {
                    c.records(alone).upsert(write);
                    written = true;
                } catch (StatusRuntimeException e) {
                    last = e;
                    Thread.sleep(250);
                }
            }
            assertThat(written).as("a write through the replica after healing: %s", last).isTrue();
            // A linearizable read through it (its own store may not have applied the write yet
            // when the leader acknowledged it).
            assertThat(
                            c.records(alone)
                                    .get(
                                            GetRequest.newBuilder()
                                                    .setCollection("notes")
                                                    .setId("c1")
                                                    .build())
                                    .getRecord()
                                    .getId())
                    .isEqualTo("c1");
        }
    }

    @Test
    void aStaleReadIsServedOnlyInTouchWithTheGroup() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            int follower = (leader + 1) % 3;
            setUp(c, leader);
            Metadata stale = new Metadata();
            stale.put(
                    Metadata.Key.of("nepenthe-consistency", Metadata.ASCII_STRING_MARSHALLER),
                    "stale");
            RecordsGrpc.RecordsBlockingStub staleReads =
                    c.records(follower)
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(stale));
            assertThat(
                            staleReads
                                    .get(
                                            GetRequest.newBuilder()
                                                    .setCollection("notes")
                                                    .setId("b1")
                                                    .build())
                                    .getRecord()
                                    .getId())
                    .isEqualTo("b1");
            // Alone, the follower soon counts as out of touch and refuses.
            c.stop(leader);
            c.stop((leader + 2) % 3);
            Thread.sleep(StaleReads.LEASE_MILLIS + 500);
            assertThatThrownBy(
                            () ->
                                    staleReads.get(
                                            GetRequest.newBuilder()
                                                    .setCollection("notes")
                                                    .setId("b1")
                                                    .build()))
                    .isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("cannot answer a stale read");
        }
    }

    @Test
    void aForgetByMetadataFilterIsRefusedWithWhatWasExpected() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            setUp(c, leader);
            assertThatThrownBy(
                            () ->
                                    c.forget(leader)
                                            .forget(
                                                    ForgetRequest.newBuilder()
                                                            .setScope(
                                                                    ForgetScope.newBuilder()
                                                                            .setMetadata(
                                                                                    dev.nepenthe
                                                                                            .grpc.v1
                                                                                            .Filter
                                                                                            .getDefaultInstance()))
                                                            .setIdempotencyKey("m1")
                                                            .setReasonCode("gdpr-art17")
                                                            .build()))
                    .isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("FAILED_PRECONDITION")
                    .hasMessageContaining("got one by metadata filter");
            assertThat(
                            c.records(leader)
                                    .get(
                                            GetRequest.newBuilder()
                                                    .setCollection("notes")
                                                    .setId("a1")
                                                    .build())
                                    .getRecord()
                                    .getId())
                    .isEqualTo("a1");
        }
    }
}
