package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nepenthe.cluster.ThreadStacks;
import dev.nepenthe.grpc.v1.AddReplicaRequest;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RemoveReplicaRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas added and removed while clients write and forget through random members: a replica
 * joins, the leader (or another original member) leaves, a second replica joins, a second leaves.
 * Afterwards every member of the final configuration holds every acknowledged write of a subject
 * not forgotten, exactly, and nothing of a forgotten subject; every forget sealed, its receipt
 * verifying offline with each member of its configuration attested or excused as removed; the
 * members' ledgers agree. The seed is printed; {@code -Dchurn.seed=N} replays the choices.
 */
@Timeout(420)
final class MembershipChurnTest {

    private static final int DIM = 16;
    private static final int SUBJECTS = 8;

    @TempDir Path dir;

    private static Record record(String id, int subject, long n) {
        Record.Builder b = Record.newBuilder().setId(id).setSubject("s" + subject);
        for (int i = 0; i < DIM; i++) {
            b.addVector(i == subject ? 1f : 0.05f * (float) Math.sin(n * 7.3 + i * 1.1));
        }
        return b.build();
    }

    /** The members that run and belong to the group now, by index. */
    private static List<Integer> live(LocalCluster c, Set<Integer> removed) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < c.size; i++) {
            if (c.replicas[i] != null && !removed.contains(i)) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void writesAndForgetsGoOnWhileReplicasJoinAndLeave() throws Exception {
        long seed = Long.getLong("churn.seed", new SecureRandom().nextLong());
        System.out.println(
                "MembershipChurnTest seed=" + seed + " (replay with -Dchurn.seed=" + seed + ")");
        SplittableRandom root = new SplittableRandom(seed);
        Map<String, Record> acked = new ConcurrentHashMap<>();
        Set<Integer> forgotten = ConcurrentHashMap.newKeySet();
        List<String> forgets = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        Set<Integer> removed = ConcurrentHashMap.newKeySet();
        List<String> events = new CopyOnWriteArrayList<>();
        try (LocalCluster c = new LocalCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(60));
            c.collections(leader)
                    .create(
                            CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            CollectionSpec.newBuilder()
                                                    .setName("notes")
                                                    .setDimension(DIM)
                                                    .setMetric(Metric.COSINE))
                                    .build());
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            SplittableRandom writeRnd = root.split();
            Thread writer =
                    Thread.ofPlatform()
                            .start(
                                    () -> {
                                        try {
                                            for (long n = 0; System.nanoTime() < end; n++) {
                                                write(c, removed, writeRnd, n, acked, forgotten);
                                            }
                                        } catch (RuntimeException | Error e) {
                                            errors.add(e);
                                        }
                                    });
            SplittableRandom forgetRnd = root.split();
            Thread forgetter =
                    Thread.ofPlatform()
                            .start(
                                    () -> {
                                        try {
                                            for (int f = 0; f < 4; f++) {
                                                Thread.sleep(4_000 + forgetRnd.nextInt(4_000));
                                                forget(
                                                        c, removed, forgetRnd, f, forgotten,
                                                        forgets);
                                            }
                                        } catch (RuntimeException
                                                | Error
                                                | InterruptedException e) {
                                            errors.add(e);
                                        }
                                    });
            SplittableRandom churnRnd = root.split();
            try {
                for (int step = 0; step < 2; step++) {
                    Thread.sleep(2_000 + churnRnd.nextInt(3_000));
                    int added = c.join("j" + (step + 1));
                    int via = live(c, removed).get(churnRnd.nextInt(3));
                    events.add("add " + c.members.get(added).id() + " via n" + (via + 1));
                    c.admin(via)
                            .withDeadlineAfter(180, TimeUnit.SECONDS)
                            .addReplica(
                                    AddReplicaRequest.newBuilder()
                                            .setReplica(c.members.get(added).id())
                                            .setRaftAddress(c.members.get(added).raftAddress())
                                            .build());
                    Thread.sleep(1_000 + churnRnd.nextInt(3_000));
                    // The leader, or another member the seed picks, leaves.
                    List<Integer> members = live(c, removed);
                    int gone =
                            churnRnd.nextBoolean()
                                    ? c.awaitLeader(Duration.ofSeconds(30))
                                    : members.get(churnRnd.nextInt(members.size()));
                    int asker = members.stream().filter(i -> i != gone).findFirst().orElseThrow();
                    events.add("remove " + c.members.get(gone).id() + " via n" + (asker + 1));
                    c.admin(asker)
                            .withDeadlineAfter(60, TimeUnit.SECONDS)
                            .removeReplica(
                                    RemoveReplicaRequest.newBuilder()
                                            .setReplica(c.members.get(gone).id())
                                            .setReasonCode("churn")
                                            .build());
                    removed.add(gone);
                    for (int t = 0; t < 300 && !c.replicas[gone].removedFromGroup(); t++) {
                        Thread.sleep(100);
                    }
                    assertThat(c.replicas[gone].removedFromGroup())
                            .as(
                                    c.members.get(gone).id()
                                            + " learned it was removed"
                                            + c.describe()
                                            + ThreadStacks.all())
                            .isTrue();
                    c.stop(gone);
                }
            } finally {
                writer.join(120_000);
                forgetter.join(120_000);
            }
            assertThat(errors).as("workload errors; events " + events).isEmpty();

            List<Integer> members = live(c, removed);
            assertThat(members).hasSize(3);
            int now = c.awaitLeader(Duration.ofSeconds(60));
            for (String id : forgets) {
                Operation op = MembershipTest.awaitSettled(c, now, id);
                assertThat(op.getState())
                        .as(id + " " + op.getNote() + " events " + events + c.describe())
                        .isEqualTo("SEALED");
                List<Map<String, String>> keys = c.replicas[now].recordedKeys();
                assertThat(ClusterReceipt.verify(op.getReceipt(), keys.get(0), keys.get(1)))
                        .as(id)
                        .isEmpty();
            }
            for (int m : members) {
                for (Record r : acked.values()) {
                    int subject = Integer.parseInt(r.getSubject().substring(1));
                    Optional<Record> got = MembershipTest.get(c, m, r.getId());
                    if (forgotten.contains(subject)) {
                        assertThat(got).as("n%d %s (forgotten)", m + 1, r.getId()).isEmpty();
                    } else {
                        assertThat(got)
                                .as("n%d %s events %s", m + 1, r.getId(), events)
                                .contains(r);
                    }
                }
            }
            String head = c.replicas[members.get(0)].ledgerHead();
            for (int m : members) {
                assertThat(c.replicas[m].ledgerHead()).as("ledger of n%d", m + 1).isEqualTo(head);
            }
            System.out.println(
                    "MembershipChurnTest: "
                            + acked.size()
                            + " acknowledged writes, "
                            + forgets.size()
                            + " forgets, events "
                            + events);
        }
    }

    private static void write(
            LocalCluster c,
            Set<Integer> removed,
            SplittableRandom rnd,
            long n,
            Map<String, Record> acked,
            Set<Integer> forgotten) {
        int subject = rnd.nextInt(SUBJECTS);
        List<Integer> live = live(c, removed);
        int via = live.get(rnd.nextInt(live.size()));
        Record r = record("r" + n, subject, n);
        if (forgotten.contains(subject)) {
            return; // a forgotten subject takes no more writes
        }
        try {
            c.records(via)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection("notes")
                                    .addRecords(r)
                                    .build());
            if (!forgotten.contains(subject)) {
                acked.put(r.getId(), r);
            }
        } catch (StatusRuntimeException | IllegalStateException e) {
            // No answer (a replica leaving, no leader for a moment): maybe applied, not counted.
        }
    }

    private static void forget(
            LocalCluster c,
            Set<Integer> removed,
            SplittableRandom rnd,
            int f,
            Set<Integer> forgotten,
            List<String> forgets) {
        int subject = rnd.nextInt(SUBJECTS);
        if (!forgotten.add(subject)) {
            return;
        }
        for (int attempt = 0; attempt < 10; attempt++) {
            List<Integer> live = live(c, removed);
            int via = live.get(rnd.nextInt(live.size()));
            try {
                Operation op =
                        c.forget(via)
                                .forget(
                                        ForgetRequest.newBuilder()
                                                .setScope(
                                                        ForgetScope.newBuilder()
                                                                .setSubject("s" + subject))
                                                .setIdempotencyKey("churn-" + f)
                                                .setReasonCode("gdpr-art17")
                                                .build());
                forgets.add(op.getId());
                return;
            } catch (StatusRuntimeException | IllegalStateException e) {
                // Asked again, of another member, with the same key: the same operation.
            }
        }
        throw new AssertionError("forget " + f + " got no answer in ten tries");
    }
}
