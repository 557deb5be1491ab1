package dev.nepenthe.cluster.chaos;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.nepenthe.cluster.cli.LedgerKeys;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.Metric;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three replicas as child JVMs under a workload of upserts, deletes and forgets, while a chaos
 * thread SIGKILLs one at a time (at random, and right after forgets are sent) and restarts it on
 * its folder, and a partition thread parts their network now and then through the proxies every
 * replica's Raft connections go through ({@link Links}). After the workload the network and every
 * replica are healed and checked against a model of the acknowledged operations: acknowledged
 * writes are on every replica, forgotten records are readable nowhere, every receipt verifies
 * offline with all three members attested, and no file of any replica holds a forgotten vector; and
 * the proxies carried each replica's Raft traffic. Rounds from {@code -Dnepenthe.cluster.rounds}
 * (3; the cluster-long profile runs 200), each with a printed seed; {@code -Dcluster.seed=N} makes
 * round 1 draw the same choices again (the kills land at the same moments of the test's clock, not
 * at the same moments of the replicas' work, so a replay is likely to take the same path, not
 * certain).
 */
final class ClusterChaosTest {

    private static final int WORKLOAD_SECONDS =
            Integer.getInteger("nepenthe.cluster.workload.seconds", 25);
    private static final Duration HEALING = Duration.ofSeconds(180);

    @TempDir Path dir;

    @Test
    void acknowledgedWritesStayAndForgetsSealWhileReplicasAreKilledAndParted() throws Exception {
        // It exercises replication and crashes, not arithmetic: one run, with the default kernels.
        assumeFalse(
                "scalar".equals(System.getProperty("nepenthe.kernels")),
                "runs once, with the default kernels");
        int rounds = Integer.getInteger("nepenthe.cluster.rounds", 3);
        String pinned = System.getProperty("cluster.seed");
        SecureRandom fresh = new SecureRandom();
        for (int round = 1; round <= rounds; round++) {
            long seed =
                    round == 1 && pinned != null && !pinned.isBlank()
                            ? Long.decode(pinned.trim())
                            : fresh.nextLong();
            System.out.printf(
                    "[ClusterChaosTest] round %d of %d seed=%d (replay with -Dcluster.seed=%d)%n",
                    round, rounds, seed, seed);
            round(round, seed);
        }
    }

    private void round(int round, long seed) throws Exception {
        Random rnd = new Random(seed);
        long t0 = System.nanoTime();
        List<String> failures = new ArrayList<>();
        History history = new History();
        // Ports come from their own randomness, so which are free does not change the choices.
        ChaosNodes nodes = ChaosNodes.onFreePorts(dir.resolve("round-" + round), new Random());
        List<Thread> threads = new ArrayList<>();
        Chaos chaos = null;
        try (nodes;
                Links links = Links.between(nodes);
                ChaosClients clients = new ChaosClients(nodes.members(), nodes.token())) {
            for (int i = 0; i < ChaosNodes.N; i++) {
                nodes.start(i);
            }
            for (int i = 0; i < ChaosNodes.N; i++) {
                nodes.awaitServing(clients, i, Duration.ofSeconds(120));
            }
            createCollection(clients);
            awaitJoined(nodes);
            long started = System.nanoTime();

            long deadline = System.currentTimeMillis() + WORKLOAD_SECONDS * 1000L;
            chaos = new Chaos(rnd.nextLong(), nodes, clients, deadline);
            Partitions partitions =
                    new Partitions(rnd.nextLong(), nodes, links, clients, chaos, deadline);
            Set<String> used = ConcurrentHashMap.newKeySet();
            List<Workload> workers = new ArrayList<>();
            for (int w = 0; w < 2; w++) {
                workers.add(
                        new Workload(
                                w,
                                round,
                                rnd.nextLong(),
                                clients,
                                nodes,
                                history,
                                chaos,
                                deadline,
                                used));
            }
            threads.add(new Thread(chaos, "chaos"));
            threads.add(new Thread(partitions, "partitions"));
            for (Workload w : workers) {
                threads.add(new Thread(w, "workload-" + threads.size()));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(Math.max(1, deadline + 120_000 - System.currentTimeMillis()));
                if (t.isAlive()) {
                    failures.add(t.getName() + " did not end within 120 s of the workload's end");
                }
            }
            for (Workload w : workers) {
                if (w.failure() != null) {
                    throw new AssertionError(where(seed, round) + "a worker failed", w.failure());
                }
            }
            if (chaos.failure() != null) {
                throw new AssertionError(
                        where(seed, round) + "the chaos thread failed", chaos.failure());
            }
            if (partitions.failure() != null) {
                throw new AssertionError(
                        where(seed, round) + "the partition thread failed", partitions.failure());
            }
            // The partition thread heals as it ends; once more in case it did not end in time.
            links.healAll();
            long worked = System.nanoTime();

            Map<String, String> receipts =
                    new Healing(
                                    nodes,
                                    clients,
                                    history,
                                    System.nanoTime() + HEALING.toNanos(),
                                    failures)
                            .heal();
            long healed = System.nanoTime();

            ChaosChecks checks = new ChaosChecks(nodes, clients, history, failures);
            int live = checks.acknowledgedWritesEverywhere();
            int refusedStale = checks.forgottenUnreadable();
            checks.receiptsVerify(receipts);
            checks.noForgottenBytes(dir.resolve("round-" + round + "-control"));
            List<String> bypassed = links.bypassed();
            if (!bypassed.isEmpty()) {
                failures.add("Raft traffic went around the link proxies of " + bypassed);
            }
            long checked = System.nanoTime();

            System.out.printf(
                    Locale.ROOT,
                    "[ClusterChaosTest] round %d: %s (%d + %d ops); %d live ids checked on 3"
                            + " replicas, %d forgotten ids (%d stale reads refused), %d receipts;"
                            + " %d partitions; start %.1f s, workload %.1f s, healing %.1f s,"
                            + " checks %.1f s%n    links: %s%n",
                    round,
                    history.counts(),
                    workers.get(0).ops(),
                    workers.get(1).ops(),
                    live,
                    history.forgottenIds().size(),
                    refusedStale,
                    receipts.size(),
                    partitions.count(),
                    (started - t0) / 1e9,
                    (worked - started) / 1e9,
                    (healed - worked) / 1e9,
                    (checked - healed) / 1e9,
                    links.counts());
            chaos.events().forEach(e -> System.out.println("    " + e));
            if (!failures.isEmpty()) {
                diagnose(nodes, clients, chaos, failures);
                keepLogs(nodes, seed, round);
                fail(
                        where(seed, round)
                                + failures.size()
                                + " check(s) failed, first: "
                                + failures.getFirst());
            }
        } catch (RuntimeException | AssertionError e) {
            System.out.println("[ClusterChaosTest] " + where(seed, round) + "failed: " + e);
            if (chaos != null) {
                chaos.events().forEach(ev -> System.out.println("    " + ev));
            }
            throw e;
        } finally {
            threads.forEach(Thread::interrupt);
            nodes.close();
        }
    }

    private static String where(long seed, int round) {
        return "seed=" + seed + " round " + round + ": ";
    }

    private static void createCollection(ChaosClients clients) throws InterruptedException {
        CreateCollectionRequest req =
                CreateCollectionRequest.newBuilder()
                        .setSpec(
                                CollectionSpec.newBuilder()
                                        .setName(Workload.COLLECTION)
                                        .setDimension(Workload.DIM)
                                        .setMetric(Metric.COSINE))
                        .build();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                clients.collections(0).create(req);
                return;
            } catch (StatusRuntimeException e) {
                // A retried create that the log took the first time.
                if (e.getStatus().getCode() == Status.Code.ALREADY_EXISTS) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(300);
        }
    }

    /** Every member's keys in the ledger before the first kill, so receipts can be checked. */
    private static void awaitJoined(ChaosNodes nodes) throws Exception {
        Path ledger = LedgerKeys.ledgerOf(nodes.dataDir(0));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        int joined = 0;
        while (System.nanoTime() < deadline) {
            joined = Files.exists(ledger) ? LedgerKeys.read(ledger).nodeKeys().size() : 0;
            if (joined == ChaosNodes.N) {
                return;
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(
                "only " + joined + " of 3 members joined the ledger " + ledger + " within 60 s");
    }

    /**
     * Copies the replicas' logs of a failed round to target/cluster-chaos-failures/ (the round's
     * folder is a temporary one, deleted after the test).
     */
    private static void keepLogs(ChaosNodes nodes, long seed, int round) {
        Path to = Path.of("target", "cluster-chaos-failures", "seed-" + seed + "-round-" + round);
        try {
            Files.createDirectories(to);
            for (int i = 0; i < ChaosNodes.N; i++) {
                if (Files.exists(nodes.log(i))) {
                    Files.copy(
                            nodes.log(i),
                            to.resolve(nodes.log(i).getFileName()),
                            StandardCopyOption.REPLACE_EXISTING);
                }
            }
            System.out.println("  the replicas' logs are kept in " + to.toAbsolutePath());
        } catch (IOException e) {
            System.out.println("  the replicas' logs could not be kept in " + to + ": " + e);
        }
    }

    /** Each replica's state, the failures and the kills, for whoever reads a failed round. */
    private static void diagnose(
            ChaosNodes nodes, ChaosClients clients, Chaos chaos, List<String> failures) {
        System.out.println("[ClusterChaosTest] " + failures.size() + " failure(s):");
        failures.stream().limit(40).forEach(f -> System.out.println("  - " + f));
        for (int i = 0; i < ChaosNodes.N; i++) {
            String status;
            try {
                status = clients.status(i).toString().replace('\n', ' ');
            } catch (StatusRuntimeException e) {
                status = "no status: " + e.getStatus();
            }
            System.out.println("  " + nodes.describe(i) + "; " + status);
            System.out.println("    last lines of " + nodes.log(i) + ":");
            System.out.println(ChaosNodes.tail(nodes.log(i), 8).indent(6));
        }
    }
}
