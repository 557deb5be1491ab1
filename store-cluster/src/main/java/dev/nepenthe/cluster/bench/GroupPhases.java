package dev.nepenthe.cluster.bench;

import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.SurfaceOutcome;
import dev.nepenthe.grpc.v1.Suspect;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * The measures only a group of several replicas has: a forget's time to BLOCKED and to SEALED on
 * every member, the time a failover takes from the leader's stop, and the time a replica that
 * missed writes takes to catch up. Each waits with a deadline and fails with the group's state.
 */
final class GroupPhases {

    private GroupPhases() {}

    /**
     * Forget results: forget() returning, and reaching SEALED, both from the call.
     *
     * @param returned milliseconds until forget() returned
     * @param sealed milliseconds until GetOperation showed SEALED
     * @param returnedStates how often each state was the one forget() returned
     * @param endStates how often each state was the settled one
     * @param unsealed for each forget that settled other than SEALED: why (its note, suspects and
     *     surfaces with problems)
     */
    record Forgets(
            List<Double> returned,
            List<Double> sealed,
            TreeMap<String, Integer> returnedStates,
            TreeMap<String, Integer> endStates,
            List<String> unsealed) {}

    /**
     * Forgets the subjects {@code <prefix>-s0} onward, one at a time, each through the next member
     * in turn; polls GetOperation through the same member every 20 ms until it settles.
     */
    static Forgets forgets(BenchGroup g, String prefix, int rounds, Duration max) throws Exception {
        Forgets out =
                new Forgets(
                        new ArrayList<>(),
                        new ArrayList<>(),
                        new TreeMap<>(),
                        new TreeMap<>(),
                        new ArrayList<>());
        for (int r = 0; r < rounds; r++) {
            int via = r % g.size();
            long start = System.nanoTime();
            Operation op =
                    g.forget(via)
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(
                                                    ForgetScope.newBuilder()
                                                            .setSubject(Load.subject(prefix, r)))
                                            .setIdempotencyKey("bench-forget-" + prefix + "-" + r)
                                            .setReasonCode("benchmark")
                                            .build());
            long returned = System.nanoTime();
            out.returned().add((returned - start) / 1e6);
            out.returnedStates().merge(op.getState(), 1, Integer::sum);
            long deadline = start + max.toNanos();
            Operation now = op;
            while (!now.getSettled()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "forget "
                                    + op.getId()
                                    + " not settled within "
                                    + max
                                    + ": "
                                    + now.getState()
                                    + " "
                                    + now.getNote()
                                    + g.describe());
                }
                Thread.sleep(20);
                now =
                        g.forget(via)
                                .getOperation(
                                        GetOperationRequest.newBuilder().setId(op.getId()).build());
            }
            out.sealed().add((System.nanoTime() - start) / 1e6);
            out.endStates().merge(now.getState(), 1, Integer::sum);
            if (!now.getState().equals("SEALED")) {
                out.unsealed().add(why(now));
            }
        }
        return out;
    }

    private static String why(Operation op) {
        StringBuilder b =
                new StringBuilder(op.getId())
                        .append(' ')
                        .append(op.getState())
                        .append(": ")
                        .append(op.getNote())
                        .append("; suspects ")
                        .append(op.getSuspectsCount());
        op.getSuspectsList().stream()
                .mapToDouble(Suspect::getScore)
                .max()
                .ifPresent(top -> b.append(String.format(" (highest score %.3f)", top)));
        for (SurfaceOutcome s : op.getSurfacesList()) {
            if (!s.getClean()) {
                b.append("; surface ")
                        .append(s.getSurface())
                        .append(" not clean: ")
                        .append(s.getProblemsList());
            }
        }
        return b.toString();
    }

    /**
     * Failover results, from the moment the leader is told to stop.
     *
     * @param stop milliseconds the leader's Replica.close() took
     * @param ready milliseconds until another member was leader and ready
     * @param write milliseconds until a write through a surviving member, sent once the old leader
     *     was closed and retried until it succeeded, was acknowledged
     */
    record Failovers(List<Double> stop, List<Double> ready, List<Double> write) {}

    /**
     * Stops the leader; once it is closed, a client writes one record through a surviving member
     * (retrying what fails) while the others elect. The stopped member is started again and caught
     * up before the next round.
     */
    static Failovers failovers(BenchGroup g, String collection, int dim, int rounds, Duration max)
            throws Exception {
        Failovers out = new Failovers(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (int r = 0; r < rounds; r++) {
            int leader = g.awaitLeader(max);
            int through = (leader + 1) % g.size();
            Record.Builder rec = Record.newBuilder().setId("failover-" + r).setSubject("failover");
            for (float x : Load.vector(r, 0, dim)) {
                rec.addVector(x);
            }
            UpsertRequest write =
                    UpsertRequest.newBuilder().setCollection(collection).addRecords(rec).build();
            var stub = g.records(through);
            long start = System.nanoTime();
            long deadline = start + max.toNanos();
            g.stop(leader);
            long stopped = System.nanoTime();
            out.stop().add((stopped - start) / 1e6);
            // The client starts once the old leader is closed, so that it cannot answer it.
            CompletableFuture<Long> written =
                    CompletableFuture.supplyAsync(
                            () -> {
                                StatusRuntimeException last = null;
                                while (System.nanoTime() < deadline) {
                                    try {
                                        stub.withDeadlineAfter(
                                                        Math.max(1, deadline - System.nanoTime()),
                                                        TimeUnit.NANOSECONDS)
                                                .upsert(write);
                                        return System.nanoTime();
                                    } catch (StatusRuntimeException e) {
                                        last = e;
                                        sleep(20);
                                    }
                                }
                                throw new IllegalStateException(
                                        "failover: no write acknowledged within " + max, last);
                            });
            int next = -1;
            while (next < 0) {
                for (int i = 0; i < g.size() && next < 0; i++) {
                    if (i != leader && g.leaderReady(i)) {
                        next = i;
                    }
                }
                if (next < 0 && System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "failover: no new leader ready within " + max + g.describe());
                }
                if (next < 0) {
                    Thread.sleep(5);
                }
            }
            out.ready().add((System.nanoTime() - start) / 1e6);
            try {
                long acked = written.get(max.toMillis(), TimeUnit.MILLISECONDS);
                out.write().add((acked - start) / 1e6);
            } catch (ExecutionException | TimeoutException e) {
                throw new IllegalStateException(
                        "failover: the write through "
                                + g.memberId(through)
                                + " failed"
                                + g.describe(),
                        e);
            }
            g.start(leader);
            g.awaitApplied(leader, g.committed(next), max);
        }
        return out;
    }

    /**
     * A catch-up, timed from the moment the stopped member is started again.
     *
     * @param records records written while it was down
     * @param startMillis milliseconds Replica.start took
     * @param firstMillis milliseconds until it applied its first entry written while it was down
     * @param catchUpMillis milliseconds until its applied index reached the leader's commit index
     *     at the restart
     * @param entries log entries it had to apply
     */
    record CatchUp(
            int records,
            double startMillis,
            double firstMillis,
            double catchUpMillis,
            long entries) {
        double recordsPerSecond() {
            return records / (catchUpMillis / 1000);
        }
    }

    /** Stops a follower, writes {@code records} through the leader, and starts it again. */
    static CatchUp catchUp(
            BenchGroup g,
            String collection,
            int dim,
            int records,
            int batch,
            int clients,
            long seed,
            Duration max)
            throws Exception {
        int leader = g.awaitLeader(max);
        int down = (leader + 1) % g.size();
        g.awaitApplied(down, g.committed(leader), max);
        long before = g.applied(down);
        g.stop(down);
        List<UpsertRequest> batches =
                Load.batches(collection, "catchup", records, dim, batch, seed + 0xC47C);
        Load.ingest(g, leader, batches, clients, max);
        long target = g.committed(leader);
        long start = System.nanoTime();
        g.start(down);
        long started = System.nanoTime();
        g.awaitApplied(down, before + 1, max);
        long first = System.nanoTime();
        g.awaitApplied(down, target, max);
        long done = System.nanoTime();
        return new CatchUp(
                records,
                (started - start) / 1e6,
                (first - start) / 1e6,
                (done - start) / 1e6,
                target - before);
    }

    /**
     * A replica joining a group that holds a store, timed from its start.
     *
     * @param startMillis milliseconds Replica.start took (it then waits to be added)
     * @param addMillis milliseconds until AddReplica returned: the copy fetched and installed, and
     *     the configuration that holds it committed
     * @param caughtUpMillis milliseconds until its applied index reached the leader's commit index
     *     at that moment
     * @param copyIndex the log index the copy it installed holds
     * @param folderBytes bytes in its folder once caught up
     */
    record Join(
            double startMillis,
            double addMillis,
            double caughtUpMillis,
            long copyIndex,
            long folderBytes) {}

    /**
     * Starts a fourth replica, adds it through the leader, waits until it caught up, removes it.
     */
    static Join join(BenchGroup g, Duration max) throws Exception {
        int leader = g.awaitLeader(max);
        long start = System.nanoTime();
        g.startJoiner("n" + (g.size() + 1));
        long started = System.nanoTime();
        g.addJoiner(leader, max);
        long added = System.nanoTime();
        long target = g.committed(leader);
        long deadline = System.nanoTime() + max.toNanos();
        while (g.joinerApplied() < target) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "the new replica did not apply up to " + target + " within " + max);
            }
            Thread.sleep(20);
        }
        long done = System.nanoTime();
        long copyIndex = g.joinerCopyIndex();
        long bytes = folderBytes(g.joinerDir());
        g.removeJoiner(g.awaitLeader(max));
        return new Join(
                (started - start) / 1e6,
                (added - start) / 1e6,
                (done - start) / 1e6,
                copyIndex,
                bytes);
    }

    private static long folderBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            long total = 0;
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                total += Files.size(f);
            }
            return total;
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
