package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.ClusterStatusRequest;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ExcuseReplicaRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.ReplicaStatus;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator excuses a member that is down for good: the forget seals without it, its receipt
 * names it as excused (and still verifies), and the member, once started, applies the excuse, stops
 * and refuses to start again from its old folder. The cluster status shows roles, term and lag.
 */
@Timeout(240)
final class ExcuseAndStatusTest {

    @TempDir Path dir;

    @Test
    void anExcusedMemberIsNamedOnTheReceiptAndMustBeWipedToReturn() throws Exception {
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            ClusterStatus status =
                    c.admin(leader).getClusterStatus(ClusterStatusRequest.getDefaultInstance());
            assertThat(status.getLeader()).isEqualTo(c.members.get(leader).id());
            assertThat(status.getReplicasList())
                    .extracting(ReplicaStatus::getId)
                    .containsExactly("n1", "n2", "n3");
            assertThat(
                            status.getReplicasList().stream()
                                    .filter(r -> r.getRole().equals("LEADER"))
                                    .count())
                    .isEqualTo(1);
            c.collections(leader)
                    .create(
                            CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            CollectionSpec.newBuilder()
                                                    .setName("notes")
                                                    .setDimension(2)
                                                    .setMetric(Metric.COSINE))
                                    .build());
            c.records(leader)
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection("notes")
                                    .addRecords(
                                            Record.newBuilder()
                                                    .setId("a1")
                                                    .setSubject("alice")
                                                    .addVector(1f)
                                                    .addVector(0.1f))
                                    .build());
            for (int t = 0; t < 300 && c.replicas[leader].recordedKeys().get(0).size() < 3; t++) {
                Thread.sleep(100);
            }
            int gone = (leader + 1) % 3;
            String goneId = c.members.get(gone).id();
            c.stop(gone);
            Operation op =
                    c.forget(leader)
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                            .setIdempotencyKey("ticket-x")
                                            .setReasonCode("gdpr-art17")
                                            .build());
            // A reason that is not a code is refused; a good one seals the forget.
            assertThatThrownBy(
                            () ->
                                    c.admin(leader)
                                            .excuseReplica(
                                                    ExcuseReplicaRequest.newBuilder()
                                                            .setOperation(op.getId())
                                                            .setReplica(goneId)
                                                            .setReasonCode("Disk Lost!")
                                                            .build()))
                    .isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("INVALID_ARGUMENT");
            ClusterStatus down =
                    c.admin(leader).getClusterStatus(ClusterStatusRequest.getDefaultInstance());
            assertThat(
                            down.getReplicasList().stream()
                                    .filter(r -> r.getId().equals(goneId))
                                    .findFirst()
                                    .orElseThrow()
                                    .getLag())
                    .isNotZero();
            Operation excused =
                    c.admin(leader)
                            .excuseReplica(
                                    ExcuseReplicaRequest.newBuilder()
                                            .setOperation(op.getId())
                                            .setReplica(goneId)
                                            .setReasonCode("disk-lost")
                                            .build());
            Operation sealed = excused;
            for (int t = 0; t < 600 && !sealed.getSettled(); t++) {
                Thread.sleep(100);
                sealed =
                        c.forget(leader)
                                .getOperation(
                                        GetOperationRequest.newBuilder().setId(op.getId()).build());
            }
            assertThat(sealed.getState()).as(sealed.getNote() + c.describe()).isEqualTo("SEALED");
            assertThat(sealed.getReceipt())
                    .contains("\"excused\":[{\"node\":\"" + goneId + "\",\"reason\":\"disk-lost\"");
            List<Map<String, String>> keys = c.replicas[leader].recordedKeys();
            assertThat(ClusterReceipt.verify(sealed.getReceipt(), keys.get(0), keys.get(1)))
                    .isEmpty();

            // The excused member comes back: it applies the excuse, stops, and will not start.
            Path marker = c.dataDir(gone).resolve("cluster").resolve("excused");
            c.start(gone);
            for (int t = 0; t < 600 && !Files.exists(marker); t++) {
                Thread.sleep(100);
            }
            assertThat(marker).exists();
            c.stop(gone);
            assertThatThrownBy(() -> c.start(gone))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("was excused from a replicated forget")
                    .hasMessageContaining("Wipe the folder");
        }
    }
}
