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
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three replicas in one JVM, reached through their gRPC APIs: writes through any replica reach
 * every replica, a forget blocks reads everywhere when it returns, and it seals only with an
 * attestation of every member; its receipt verifies offline against the ledger's keys, and no
 * replica's Raft or journal files hold the forgotten vector or can still decrypt its entry.
 */
@Timeout(180)
final class ReplicatedForgetTest {

    private static final int DIM = 8;

    @TempDir Path dir;

    /** A record whose vector points mostly along one axis: records of other axes are unlike it. */
    private static Record record(String id, String subject, int axis, float seed) {
        Record.Builder b = Record.newBuilder().setId(id).setSubject(subject);
        for (int i = 0; i < DIM; i++) {
            b.addVector(i == axis ? 1f : seed * (i + 1) / DIM);
        }
        return b.build();
    }

    private static byte[] bytes(Record r) {
        ByteBuffer b = ByteBuffer.allocate(DIM * 4).order(ByteOrder.LITTLE_ENDIAN);
        r.getVectorList().forEach(b::putFloat);
        return b.array();
    }

    private static void create(LocalCluster c, int via) {
        c.collections(via)
                .create(
                        CreateCollectionRequest.newBuilder()
                                .setSpec(
                                        CollectionSpec.newBuilder()
                                                .setName("notes")
                                                .setDimension(DIM)
                                                .setMetric(Metric.COSINE))
                                .build());
    }

    private static boolean found(LocalCluster c, int via, String id) {
        try {
            c.records(via).get(GetRequest.newBuilder().setCollection("notes").setId(id).build());
            return true;
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return false;
            }
            throw e;
        }
    }

    private static Operation awaitSettled(LocalCluster c, int via, String id, Duration max)
            throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        Operation op;
        do {
            op = c.forget(via).getOperation(GetOperationRequest.newBuilder().setId(id).build());
            if (op.getSettled()) {
                return op;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        throw new AssertionError(
                "not settled within "
                        + max
                        + ": "
                        + op.getState()
                        + " "
                        + op.getNote()
                        + c.describe());
    }

    /** Files under the replica's Raft and journal folders that hold {@code needle}. */
    private static List<Path> holding(Path data, byte[] needle) throws Exception {
        List<Path> out = new ArrayList<>();
        for (Path root : List.of(data.resolve("raft"), data.resolve("journal"))) {
            try (Stream<Path> s = Files.walk(root)) {
                for (Path f : s.filter(Files::isRegularFile).toList()) {
                    if (ByteScan.holds(f, List.of(needle)).isPresent()) {
                        out.add(f);
                    }
                }
            }
        }
        return out;
    }

    @Test
    void aForgetThroughAFollowerSealsWithEveryMembersAttestation() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            int follower = (leader + 1) % 3;
            create(c, follower);
            Record alice = record("a1", "alice", 0, 0.011f);
            Record bob = record("b1", "bob", 3, 0.052f);
            c.records(follower)
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection("notes")
                                    .addRecords(alice)
                                    .addRecords(bob)
                                    .build());
            for (int i = 0; i < 3; i++) {
                assertThat(found(c, i, "a1")).as("a1 on n%d before the forget", i + 1).isTrue();
            }
            // Control: the payload reached every replica's journal (it decrypts there and holds
            // the vector), and no file holds it in clear.
            for (int i = 0; i < 3; i++) {
                assertThat(journalHolds(c, i, bytes(alice))).as("journal of n%d", i + 1).isTrue();
                assertThat(holding(c.dataDir(i), bytes(alice))).isEmpty();
            }

            int via = (leader + 2) % 3;
            Operation op =
                    c.forget(via)
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                            .setIdempotencyKey("ticket-1")
                                            .setReasonCode("gdpr-art17")
                                            .build());
            assertThat(op.getId()).startsWith("cfop-");
            for (int i = 0; i < 3; i++) {
                assertThat(found(c, i, "a1"))
                        .as("a1 on n%d after forget() returned", i + 1)
                        .isFalse();
                assertThat(found(c, i, "b1")).as("b1 on n%d", i + 1).isTrue();
            }

            Operation sealed = awaitSettled(c, leader, op.getId(), Duration.ofSeconds(90));
            assertThat(sealed.getState()).as(sealed.getNote()).isEqualTo("SEALED");
            String receipt = sealed.getReceipt();
            List<Map<String, String>> keys = c.replicas[follower].recordedKeys();
            assertThat(ClusterReceipt.verify(receipt, keys.get(0), keys.get(1))).isEmpty();
            assertThat(receipt).contains("\"members\":[\"n1\",\"n2\",\"n3\"]");
            assertThat(receipt).doesNotContain("alice");
            // The envelope is not signed, but what it states is checked against what is: an
            // outcome changed is caught like a signed field.
            assertThat(
                            ClusterReceipt.verify(
                                    receipt.replace("\"ERASED\"", "\"NOTHING_FOUND\""),
                                    keys.get(0),
                                    keys.get(1)))
                    .isNotEmpty();
            // Tampering is caught: one attestation's state changed.
            assertThat(
                            ClusterReceipt.verify(
                                    receipt.replaceFirst(
                                            "\"state\":\"SEALED\"", "\"state\":\"SEALED \""),
                                    keys.get(0),
                                    keys.get(1)))
                    .isNotEmpty();
            // The same op under its id on every replica, and the same idempotency key returns it.
            Operation again =
                    c.forget(follower)
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                            .setIdempotencyKey("ticket-1")
                                            .setReasonCode("gdpr-art17")
                                            .build());
            assertThat(again.getId()).isEqualTo(op.getId());
            for (int i = 0; i < 3; i++) {
                assertThat(journalHolds(c, i, bytes(alice))).as("journal of n%d", i + 1).isFalse();
                assertThat(holding(c.dataDir(i), bytes(alice))).isEmpty();
                assertThat(c.replicas[i].receipt(op.getId())).isEqualTo(receipt);
                assertThat(Files.readString(c.replicas[i].ledgerFile()))
                        .isEqualTo(Files.readString(c.replicas[leader].ledgerFile()));
            }
        }
    }

    @Test
    void aMemberDownKeepsTheForgetWaitingUntilItReturns() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            create(c, leader);
            Record alice = record("a1", "alice", 0, 0.021f);
            c.records(leader)
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection("notes")
                                    .addRecords(alice)
                                    .build());
            // Every member has joined (its keys in the ledger) before one goes down.
            awaitJoined(c, 3);
            int down = (leader + 1) % 3;
            c.stop(down);
            Operation op =
                    c.forget(leader)
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                            .setIdempotencyKey("ticket-2")
                                            .setReasonCode("gdpr-art17")
                                            .build());
            Thread.sleep(3_000);
            Operation waiting =
                    c.forget(leader)
                            .getOperation(
                                    GetOperationRequest.newBuilder().setId(op.getId()).build());
            assertThat(waiting.getSettled()).isFalse();
            assertThat(waiting.getState()).isNotEqualTo("SEALED");
            assertThat(waiting.getNote())
                    .contains("WAITING_FOR_REPLICAS")
                    .contains(c.members.get(down).id() + " has not received log index");
            assertThat(c.replicas[leader].receipt(op.getId())).isNull();
            // The live replicas keep the body until the member that lacks it has it.
            assertThat(journalHolds(c, leader, bytes(alice))).isTrue();

            c.start(down);
            Operation sealed = awaitSettled(c, down, op.getId(), Duration.ofSeconds(90));
            assertThat(sealed.getState()).as(sealed.getNote()).isEqualTo("SEALED");
            assertThat(found(c, down, "a1")).isFalse();
            for (int i = 0; i < 3; i++) {
                assertThat(journalHolds(c, i, bytes(alice))).as("journal of n%d", i + 1).isFalse();
            }
        }
    }

    private static void awaitJoined(LocalCluster c, int n) throws InterruptedException {
        for (int t = 0; t < 300; t++) {
            if (c.replicas[0] != null && c.replicas[0].recordedKeys().get(0).size() == n) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not every member joined");
    }

    /** Whether some entry of the replica's journal decrypts to bytes that hold {@code needle}. */
    private static boolean journalHolds(LocalCluster c, int i, byte[] needle) throws Exception {
        PayloadJournal j = c.replicas[i].journal();
        for (long x = Math.max(1, j.firstIndex()); x <= j.lastIndex(); x++) {
            Optional<byte[]> body = j.read(x);
            if (body.isPresent() && ByteScan.indexOf(body.get(), needle) >= 0) {
                return true;
            }
        }
        return false;
    }

    @Test
    void anEmptyLogEntryIsRefusedWithWhatWasExpected() {
        assertThatThrownBy(() -> Command.decode(new byte[0]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got no bytes");
    }
}
