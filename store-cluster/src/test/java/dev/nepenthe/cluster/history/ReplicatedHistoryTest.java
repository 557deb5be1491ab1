package dev.nepenthe.cluster.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Histories of concurrent upserts, gets, deletes and forgets, sent by several clients to random
 * replicas of a three-replica group, checked against a sequential model of one record per key: the
 * history of each key must be linearizable ({@link KeySearch}), every replica's final reads
 * (linearizable and stale) must show a state the model allows at the end (no acknowledged write
 * lost, nothing deleted or forgotten brought back), and no read invoked after a forget returned may
 * see a record of its subject. Seeded: {@code -Dhistory.seed=N} replays the random choices (not the
 * timing, which decides what overlaps).
 */
@Timeout(300)
final class ReplicatedHistoryTest {

    private static final int THREADS = 4;
    private static final Duration RUN = Duration.ofSeconds(10);
    private static final int SCHEDULED_FORGETS = 2;

    /** Configurations one key's search may visit: far above what a passing history needs. */
    private static final long BUDGET = 1_000_000;

    @TempDir Path dir;

    @Test
    void concurrentHistoryMatchesTheModel() throws Exception {
        check(false);
    }

    @Test
    void historyAcrossAReplicaRestartMatchesTheModel() throws Exception {
        check(true);
    }

    private void check(boolean restart) throws Exception {
        long seed = Long.getLong("history.seed", new SecureRandom().nextLong());
        String replay =
                "seed="
                        + seed
                        + " (replay the choices with -Dhistory.seed="
                        + seed
                        + "; the timing is not replayed)";
        System.out.println("ReplicatedHistoryTest restart=" + restart + " " + replay);
        long began = System.nanoTime();
        List<Op> ops = new ArrayList<>();
        List<Op> finals = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        String replicas;
        List<String> events;
        long origin;
        try (HistoryCluster c = new HistoryCluster(dir, 3)) {
            int leader = c.awaitLeader(Duration.ofSeconds(60));
            c.collections(leader, Duration.ofSeconds(30))
                    .create(
                            CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            CollectionSpec.newBuilder()
                                                    .setName(Client.COLLECTION)
                                                    .setDimension(Client.DIMENSION)
                                                    .setMetric(Metric.COSINE))
                                    .build());
            origin = System.nanoTime();
            AtomicInteger seq = new AtomicInteger();
            Client client = new Client(c, seq, origin);
            Workload w = new Workload(c, client, seed, THREADS, RUN, SCHEDULED_FORGETS, restart);
            ops.addAll(w.run());
            events = w.events();

            // Quiet: every forget that returned settles, the log stops moving, and every replica
            // has applied all of it; then each replica is read, linearizably and stale.
            problems.addAll(awaitForgetsSettled(c, ops, Duration.ofSeconds(120)));
            c.awaitQuiet(Duration.ofSeconds(2), Duration.ofSeconds(90));
            for (int node = 0; node < c.size(); node++) {
                for (int k = 0; k < Client.KEYS; k++) {
                    finals.add(client.get(-1, node, Client.key(k), false));
                }
            }
            for (int node = 0; node < c.size(); node++) {
                for (int k = 0; k < Client.KEYS; k++) {
                    finals.add(client.get(-1, node, Client.key(k), true));
                }
            }
            replicas = c.describe();
        }
        List<Op> all = new ArrayList<>(ops);
        all.addAll(finals);
        System.out.println(summary(ops, finals) + ", events " + events);

        for (Op o : all) {
            if (o.outcome() == Op.Outcome.UNEXPECTED) {
                problems.add("unexpected answer: " + o.describe(origin));
            }
            if (o.thread() < 0 && o.outcome() != Op.Outcome.OK) {
                problems.add("a final read failed: " + o.describe(origin));
            }
        }
        problems.addAll(readsAfterForgets(all, origin));
        long visited = 0;
        for (int k = 0; k < Client.KEYS; k++) {
            String key = Client.key(k);
            List<Op> history = historyOf(key, all, false);
            KeySearch search = new KeySearch(key, history, history, BUDGET);
            boolean ok;
            try {
                ok = search.linearizable();
            } catch (KeySearch.Exploded e) {
                problems.add(e.getMessage() + "\n" + search.history(origin));
                continue;
            }
            visited += search.visited();
            if (!ok) {
                problems.add(
                        search.explain(origin)
                                + "\n  the key's history:\n"
                                + search.history(origin)
                                + "\n  the replicas' final reads of "
                                + key
                                + ":"
                                + finalReads(finals, key, origin));
            }
            if (!ok) {
                continue; // no final state is allowed either: the reads would repeat it
            }
            KeySearch before = new KeySearch(key, historyOf(key, ops, false), history, BUDGET);
            Set<Long> allowed;
            try {
                allowed = before.finalStates();
            } catch (KeySearch.Exploded e) {
                problems.add(e.getMessage() + "\n" + before.history(origin));
                continue;
            }
            for (Op f : finals) {
                if (key.equals(f.key())
                        && f.outcome() == Op.Outcome.OK
                        && allowed.stream()
                                .noneMatch(s -> KeyModel.step(f, -1, s) != KeyModel.INVALID)) {
                    problems.add(
                            "final read "
                                    + f.describe(origin)
                                    + " shows a state the model does not allow at the end; it"
                                    + " allows: "
                                    + allowed.stream().map(KeyModel::describe).toList()
                                    + "\n  the key's history:\n"
                                    + before.history(origin));
                }
            }
        }
        System.out.printf(
                "ReplicatedHistoryTest restart=%s checked %d operations, %d configurations, in"
                        + " %.1f s%n",
                restart, all.size(), visited, (System.nanoTime() - began) / 1e9);
        if (!problems.isEmpty()) {
            throw new AssertionError(
                    String.format(
                            "%d problems; %s%nreplicas at the end:%s%nevents: %s%nproblems:%n%s",
                            problems.size(),
                            replay,
                            replicas,
                            events,
                            String.join("\n\n", problems)));
        }
        // A history where nothing happened proves nothing.
        assertThat(
                        ops.stream()
                                .filter(
                                        o ->
                                                o.kind() == Op.Kind.UPSERT
                                                        && o.outcome() == Op.Outcome.OK)
                                .count())
                .as("acknowledged upserts; %s", replay)
                .isGreaterThan(20);
        assertThat(
                        ops.stream()
                                .filter(
                                        o ->
                                                o.kind() == Op.Kind.GET
                                                        && o.outcome() == Op.Outcome.OK
                                                        && o.seen() >= 0)
                                .count())
                .as("gets that saw a write; %s", replay)
                .isGreaterThan(10);
        assertThat(
                        ops.stream()
                                .filter(
                                        o ->
                                                o.kind() == Op.Kind.FORGET
                                                        && o.outcome() == Op.Outcome.OK)
                                .count())
                .as("acknowledged forgets; %s", replay)
                .isGreaterThan(0);
    }

    /** A key's operations with the forgets of its subject; stale reads only when asked. */
    private static List<Op> historyOf(String key, List<Op> ops, boolean stale) {
        int owner = Client.owner(key);
        List<Op> out = new ArrayList<>();
        for (Op o : ops) {
            if (o.kind() == Op.Kind.STALE_GET && !stale) {
                continue;
            }
            if (key.equals(o.key()) || (o.kind() == Op.Kind.FORGET && o.subject() == owner)) {
                out.add(o);
            }
        }
        return out;
    }

    /**
     * Checked directly (the search checks it too): once a forget of a subject returned, no read
     * invoked later saw a record of it and no upsert invoked later was acknowledged. (A delete
     * invoked later may count a record the forget blocked and has not yet removed: see {@link
     * KeyModel}.)
     */
    private static List<String> readsAfterForgets(List<Op> all, long origin) {
        List<String> out = new ArrayList<>();
        for (Op f : all) {
            if (f.kind() != Op.Kind.FORGET || f.outcome() != Op.Outcome.OK) {
                continue;
            }
            for (Op o : all) {
                if (o.key() == null
                        || Client.owner(o.key()) != f.subject()
                        || o.invoked() <= f.completed()
                        || o.outcome() != Op.Outcome.OK) {
                    continue;
                }
                boolean read = o.kind() == Op.Kind.GET || o.kind() == Op.Kind.STALE_GET;
                String what =
                        read && o.seen() != Op.NOT_FOUND
                                ? " saw a record of the subject"
                                : o.kind() == Op.Kind.UPSERT ? " was acknowledged" : null;
                if (what != null) {
                    out.add(
                            "after "
                                    + f.describe(origin)
                                    + " returned, "
                                    + o.describe(origin)
                                    + what);
                }
            }
        }
        return out;
    }

    /** Waits for every acknowledged forget to settle; returns those that did not, and why. */
    private static List<String> awaitForgetsSettled(HistoryCluster c, List<Op> ops, Duration max)
            throws Exception {
        long deadline = System.nanoTime() + max.toNanos();
        List<String> out = new ArrayList<>();
        for (Op f : ops) {
            if (f.kind() != Op.Kind.FORGET || f.outcome() != Op.Outcome.OK) {
                continue;
            }
            Operation op = null;
            while (System.nanoTime() < deadline) {
                int leader = c.awaitLeader(max);
                try {
                    op =
                            c.forget(leader, Duration.ofSeconds(10))
                                    .getOperation(
                                            GetOperationRequest.newBuilder()
                                                    .setId(f.note())
                                                    .build());
                    if (op.getSettled()) {
                        break;
                    }
                } catch (StatusRuntimeException e) {
                    // a leader change: ask again
                }
                Thread.sleep(200);
            }
            if (op == null || !op.getSettled()) {
                out.add(
                        "forget "
                                + f.note()
                                + " did not settle within "
                                + max
                                + (op == null ? "" : ": " + op.getState() + " " + op.getNote()));
            } else if (!op.getState().equals("SEALED")) {
                out.add("forget " + f.note() + " settled " + op.getState() + ": " + op.getNote());
            }
        }
        return out;
    }

    private static String finalReads(List<Op> finals, String key, long origin) {
        StringBuilder b = new StringBuilder();
        for (Op f : finals) {
            if (key.equals(f.key())) {
                b.append("\n    ").append(f.describe(origin));
            }
        }
        return b.toString();
    }

    private static String summary(List<Op> ops, List<Op> finals) {
        Map<Op.Kind, Map<Op.Outcome, Integer>> counts = new EnumMap<>(Op.Kind.class);
        for (Op o : ops) {
            counts.computeIfAbsent(o.kind(), k -> new TreeMap<>())
                    .merge(o.outcome(), 1, Integer::sum);
        }
        return "history: "
                + ops.size()
                + " operations "
                + counts
                + ", "
                + finals.size()
                + " final reads";
    }
}
