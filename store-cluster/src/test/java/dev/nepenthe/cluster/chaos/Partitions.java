package dev.nepenthe.cluster.chaos;

import dev.nepenthe.cluster.chaos.LinkProxy.Cut;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The partition thread: now and then parts the replicas' network for a while, then heals it. A
 * partition isolates one replica (often the leader, so an old leader keeps taking writes it cannot
 * commit), splits the link between two replicas both ways, or cuts one direction only (one replica
 * cannot open connections to another, which still reaches it); its links either reset or hold their
 * bytes ({@link LinkProxy.Cut}). Each lasts up to two of the longest election timeouts, one at a
 * time; kills go on meanwhile (a kill during a partition can leave no majority for a while, which
 * the workload sees as writes without an answer). Everything is healed by the workload's end.
 */
final class Partitions implements Runnable {

    private static final int LONGEST_MILLIS = 4_000;

    private final Random rnd;
    private final ChaosNodes nodes;
    private final Links links;
    private final ChaosClients clients;
    private final Chaos timeline;
    private final long deadline;
    private final AtomicInteger count = new AtomicInteger();
    private volatile Throwable failure;

    /**
     * @param timeline where each partition is noted, on the kills' clock
     * @param deadline System.currentTimeMillis() by which the network is healed for good
     */
    Partitions(
            long seed,
            ChaosNodes nodes,
            Links links,
            ChaosClients clients,
            Chaos timeline,
            long deadline) {
        this.rnd = new Random(seed);
        this.nodes = nodes;
        this.links = links;
        this.clients = clients;
        this.timeline = timeline;
        this.deadline = deadline;
    }

    Throwable failure() {
        return failure;
    }

    /** Partitions made so far. */
    int count() {
        return count.get();
    }

    @Override
    public void run() {
        try {
            loop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure = e;
        } finally {
            links.healAll();
        }
    }

    private void loop() throws InterruptedException {
        while (sleepUntilDeadline(1_000 + rnd.nextInt(3_000))) {
            // Every draw is made whatever the leader turns out to be, so a seed replays the same
            // choices.
            int kind = rnd.nextInt(10);
            boolean atLeader = rnd.nextBoolean();
            int a = rnd.nextInt(ChaosNodes.N);
            int b = (a + 1 + rnd.nextInt(ChaosNodes.N - 1)) % ChaosNodes.N;
            Cut how = rnd.nextBoolean() ? Cut.RESET : Cut.STALL;
            int hold = 500 + rnd.nextInt(LONGEST_MILLIS - 500);
            List<int[]> pairs = new ArrayList<>();
            String what;
            if (kind < 5) {
                int leader = atLeader ? leader(a) : -1;
                int victim = leader >= 0 ? leader : a;
                for (int j = 0; j < ChaosNodes.N; j++) {
                    if (j != victim) {
                        pairs.add(new int[] {victim, j});
                        pairs.add(new int[] {j, victim});
                    }
                }
                what = "isolate " + nodes.id(victim) + (leader >= 0 ? " (the leader then)" : "");
            } else if (kind < 8) {
                pairs.add(new int[] {a, b});
                pairs.add(new int[] {b, a});
                what = "split " + nodes.id(a) + " from " + nodes.id(b);
            } else {
                pairs.add(new int[] {a, b});
                what = nodes.id(a) + " cannot reach " + nodes.id(b);
            }
            links.cut(pairs, how);
            count.incrementAndGet();
            timeline.event(
                    String.format(
                            Locale.ROOT,
                            "partition: %s, links %s, for %d ms",
                            what,
                            how.name().toLowerCase(Locale.ROOT),
                            hold));
            boolean inTime = sleepUntilDeadline(hold);
            links.healAll();
            timeline.event("healed: " + what + (inTime ? "" : " (at the workload's end)"));
        }
    }

    /**
     * Sleeps for {@code millis} or until the deadline, whichever comes first; false if the deadline
     * came.
     */
    private boolean sleepUntilDeadline(long millis) throws InterruptedException {
        long left = deadline - System.currentTimeMillis();
        Thread.sleep(Math.max(0, Math.min(millis, left)));
        return millis < left;
    }

    /**
     * The leader as the first replica from {@code first} on that names one sees it, or -1 if none
     * does (an election, or no majority).
     */
    private int leader(int first) {
        for (int k = 0; k < ChaosNodes.N; k++) {
            String leader;
            try {
                leader = clients.status((first + k) % ChaosNodes.N).getLeader();
            } catch (StatusRuntimeException e) {
                continue; // down: ask the next
            }
            for (int i = 0; i < ChaosNodes.N; i++) {
                if (nodes.id(i).equals(leader)) {
                    return i;
                }
            }
        }
        return -1;
    }
}
