package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.grpc.v1.AddReplicaRequest;
import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RemoveReplicaRequest;
import dev.nepenthe.grpc.v1.ReplicaStatus;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Adding and removing replicas. A replica added after a forget sealed catches up by a copy of the
 * leader's store: it serves every other record exactly, none of the forgotten ones, holds neither
 * their keys nor their bytes, and attests the forgets that follow. A replica removed is excused
 * from the forgets it had not attested, stops, and will not start again on its folder.
 */
@Timeout(240)
final class MembershipTest {

    private static final int DIM = 16;

    @TempDir Path dir;

    /**
     * A record of a subject points along that subject's own axis, with a little noise: records of
     * other subjects are unlike it, so a forget's probe has nothing near to suspect.
     */
    private static Record record(String id, String subject, int n) {
        int axis = Math.floorMod(subject.hashCode(), DIM);
        Record.Builder b = Record.newBuilder().setId(id).setSubject(subject);
        for (int i = 0; i < DIM; i++) {
            b.addVector(i == axis ? 1f : 0.05f * (float) Math.sin(n * 7.3 + i * 1.1));
        }
        return b.build();
    }

    private static byte[] bytes(Record r) {
        ByteBuffer b = ByteBuffer.allocate(DIM * 4).order(ByteOrder.LITTLE_ENDIAN);
        r.getVectorList().forEach(b::putFloat);
        return b.array();
    }

    private static List<Record> upsert(LocalCluster c, int via, String subject, int from, int n) {
        List<Record> out = new ArrayList<>();
        UpsertRequest.Builder u = UpsertRequest.newBuilder().setCollection("notes");
        for (int i = from; i < from + n; i++) {
            Record r = record(subject + "-" + i, subject, i);
            out.add(r);
            u.addRecords(r);
        }
        c.records(via).upsert(u.build());
        return out;
    }

    private static Operation forget(LocalCluster c, int via, String subject) {
        return c.forget(via)
                .forget(
                        ForgetRequest.newBuilder()
                                .setScope(ForgetScope.newBuilder().setSubject(subject))
                                .setIdempotencyKey("ticket-" + subject)
                                .setReasonCode("gdpr-art17")
                                .build());
    }

    /** The operation once settled; fails naming its state after 90 seconds. */
    static Operation awaitSettled(LocalCluster c, int via, String id) throws Exception {
        Operation op = null;
        for (int t = 0; t < 900; t++) {
            op = c.forget(via).getOperation(GetOperationRequest.newBuilder().setId(id).build());
            if (op.getSettled()) {
                return op;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("forget " + id + " did not settle: " + op + c.describe());
    }

    /** A record through member {@code via}, or empty when it answers NOT_FOUND. */
    static Optional<Record> get(LocalCluster c, int via, String id) {
        try {
            return Optional.of(
                    c.records(via)
                            .get(GetRequest.newBuilder().setCollection("notes").setId(id).build())
                            .getRecord());
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return Optional.empty();
            }
            throw e;
        }
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

    private static void awaitKeys(LocalCluster c, int via, int members) throws Exception {
        for (int t = 0; t < 300 && c.replicas[via].recordedKeys().get(0).size() < members; t++) {
            Thread.sleep(100);
        }
        assertThat(c.replicas[via].recordedKeys().get(0)).hasSize(members);
    }

    @Test
    void aReplicaAddedAfterASealedForgetHoldsNothingOfItAndAttestsWhatFollows() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(60));
            create(c, leader);
            List<Record> alice = upsert(c, leader, "alice", 0, 12);
            List<Record> bob = upsert(c, leader, "bob", 100, 12);
            List<Record> carol = upsert(c, leader, "carol", 200, 12);
            awaitKeys(c, leader, 3);
            Operation first = awaitSettled(c, leader, forget(c, leader, "alice").getId());
            assertThat(first.getState()).as(first.getNote() + c.describe()).isEqualTo("SEALED");
            // Snapshot markers on every replica: Ratis may purge its log, so the new replica
            // cannot be caught up from it.
            for (int i = 0; i < 3; i++) {
                assertThat(c.replicas[i].takeSnapshot()).isPositive();
            }

            int added = c.join("n4");
            String addedId = c.members.get(added).id();
            // Not a member yet: it waits, serving nothing of the group.
            assertThat(c.replicas[added].snapshotIndex()).isZero();
            ClusterStatus status =
                    c.admin(leader)
                            .withDeadlineAfter(120, TimeUnit.SECONDS)
                            .addReplica(
                                    AddReplicaRequest.newBuilder()
                                            .setReplica(addedId)
                                            .setRaftAddress(c.members.get(added).raftAddress())
                                            .build());
            assertThat(status.getReplicasList().stream().map(ReplicaStatus::getId))
                    .contains(addedId);
            assertThat(c.replicas[added].snapshotIndex())
                    .as("the new replica caught up by a copy")
                    .isPositive();

            // It serves what the group holds, exactly, and nothing it forgot.
            for (Record r : bob) {
                assertThat(get(c, added, r.getId())).as(r.getId()).contains(r);
            }
            for (Record r : alice) {
                assertThat(get(c, added, r.getId())).as(r.getId()).isEmpty();
            }
            VectorCollection local = c.replicas[added].store().collection("notes");
            for (Record r : alice) {
                float[] q = new float[DIM];
                for (int i = 0; i < DIM; i++) {
                    q[i] = r.getVector(i);
                }
                List<SearchHit> hits = local.search(SearchRequest.of(q, 36));
                assertThat(hits).extracting(SearchHit::id).noneMatch(id -> id.startsWith("alice"));
                assertThat(hits).hasSize(24); // bob's and carol's, every one
            }
            Optional<VectorRecord> none = local.get(alice.get(0).getId());
            assertThat(none).isEmpty();

            // Its files: no byte of a forgotten vector anywhere in its folder, and none in what
            // its journal decrypts to, which holds the writes made since it joined (the control).
            List<byte[]> forgotten = alice.stream().map(MembershipTest::bytes).toList();
            assertThat(ByteScan.holding(c.dataDir(added), forgotten)).isEmpty();
            List<Record> erin = upsert(c, leader, "erin", 400, 3);
            for (Record r : erin) {
                assertThat(get(c, added, r.getId())).as(r.getId()).contains(r);
                assertThat(journalHolds(c, added, bytes(r))).as("control " + r.getId()).isTrue();
            }
            for (Record r : alice) {
                assertThat(journalHolds(c, added, bytes(r))).as(r.getId()).isFalse();
            }

            // A forget after it joined waits for its attestation too, and seals with it.
            awaitKeys(c, leader, 4);
            Operation second = awaitSettled(c, leader, forget(c, leader, "bob").getId());
            assertThat(second.getState()).as(second.getNote()).isEqualTo("SEALED");
            assertThat(second.getReceipt()).contains("\"node\":\"" + addedId + "\"");
            List<Map<String, String>> keys = c.replicas[leader].recordedKeys();
            assertThat(ClusterReceipt.verify(second.getReceipt(), keys.get(0), keys.get(1)))
                    .isEmpty();
            for (Record r : bob) {
                assertThat(get(c, added, r.getId())).as(r.getId()).isEmpty();
            }
            for (Record r : carol) {
                assertThat(get(c, added, r.getId())).as(r.getId()).contains(r);
            }
        }
    }

    @Test
    void aRemovedReplicaIsExcusedStopsAndMayNotReturnUnderItsId() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(60));
            create(c, leader);
            upsert(c, leader, "alice", 0, 6);
            List<Record> bob = upsert(c, leader, "bob", 100, 6);
            awaitKeys(c, leader, 3);
            int gone = (leader + 1) % 3;
            String goneId = c.members.get(gone).id();
            Path goneDir = c.dataDir(gone);
            c.stop(gone);
            Operation op = forget(c, leader, "alice");
            Thread.sleep(1_500);
            Operation waiting =
                    c.forget(leader)
                            .getOperation(
                                    GetOperationRequest.newBuilder().setId(op.getId()).build());
            assertThat(waiting.getSettled()).as(waiting.getNote()).isFalse();

            assertThatThrownBy(
                            () ->
                                    c.admin(leader)
                                            .removeReplica(
                                                    RemoveReplicaRequest.newBuilder()
                                                            .setReplica(goneId)
                                                            .setReasonCode("Not A Code")
                                                            .build()))
                    .isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("INVALID_ARGUMENT");
            ClusterStatus status =
                    c.admin(leader)
                            .removeReplica(
                                    RemoveReplicaRequest.newBuilder()
                                            .setReplica(goneId)
                                            .setReasonCode("decommissioned")
                                            .build());
            assertThat(status.getReplicasList().stream().map(ReplicaStatus::getId))
                    .doesNotContain(goneId);
            Operation sealed = awaitSettled(c, leader, op.getId());
            assertThat(sealed.getState()).as(sealed.getNote()).isEqualTo("SEALED");
            assertThat(sealed.getReceipt())
                    .contains(
                            "\"excused\":[{\"node\":\""
                                    + goneId
                                    + "\",\"reason\":\"removed:decommissioned\"");
            List<Map<String, String>> keys = c.replicas[leader].recordedKeys();
            assertThat(ClusterReceipt.verify(sealed.getReceipt(), keys.get(0), keys.get(1)))
                    .isEmpty();

            // Two members go on: writes are taken, and a forget seals with both.
            List<Record> dave = upsert(c, leader, "dave", 300, 4);
            for (Record r : dave) {
                assertThat(get(c, leader, r.getId())).contains(r);
            }
            Operation next = awaitSettled(c, leader, forget(c, leader, "bob").getId());
            assertThat(next.getState()).as(next.getNote()).isEqualTo("SEALED");
            for (Record r : bob) {
                assertThat(get(c, leader, r.getId())).isEmpty();
            }

            // The id is spent: adding it again is refused, whatever its folder holds.
            assertThatThrownBy(
                            () ->
                                    c.admin(leader)
                                            .addReplica(
                                                    AddReplicaRequest.newBuilder()
                                                            .setReplica(goneId)
                                                            .setRaftAddress(
                                                                    c.members
                                                                            .get(gone)
                                                                            .raftAddress())
                                                            .build()))
                    .isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("FAILED_PRECONDITION")
                    .hasMessageContaining("new replica id");
            assertThat(Files.exists(goneDir)).isTrue();
        }
    }

    @Test
    void theRemovedReplicaLearnsItAndRefusesToStartOnItsFolder() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(60));
            create(c, leader);
            upsert(c, leader, "alice", 0, 4);
            int gone = (leader + 2) % 3;
            String goneId = c.members.get(gone).id();
            c.admin(leader)
                    .removeReplica(
                            RemoveReplicaRequest.newBuilder()
                                    .setReplica(goneId)
                                    .setReasonCode("decommissioned")
                                    .build());
            for (int t = 0; t < 300 && !c.replicas[gone].removedFromGroup(); t++) {
                Thread.sleep(100);
            }
            assertThat(c.replicas[gone].removedFromGroup()).as(c.describe()).isTrue();
            c.stop(gone);
            assertThatThrownBy(() -> c.start(gone))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("was removed from the group")
                    .hasMessageContaining("Wipe the folder");
        }
    }
}
