package dev.nepenthe.cluster.history;

import dev.nepenthe.cluster.ThreadStacks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * A bounded random workload: client threads, each choosing per operation a replica, a kind and a
 * key, for a bounded time and number of operations; one more thread forgets subjects at chosen
 * moments; optionally one stops a replica and starts it again. Every choice comes from the seed
 * (each thread has its own stream), so a seed replays the choices; which operations overlap depends
 * on timing, which no seed replays.
 */
final class Workload {

    /** Per mille of a client's operations that forget a subject (the forget thread adds more). */
    private static final int FORGET_PER_MILLE = 1;

    private static final int UPSERT_PER_MILLE = 420;
    private static final int DELETE_PER_MILLE = 150;

    /** Operations per client thread at most: its write numbers stay apart from other threads'. */
    static final int MAX_OPS_PER_THREAD = 9_000;

    private final HistoryCluster cluster;
    private final Client client;
    private final long seed;
    private final int threads;
    private final Duration duration;
    private final int forgets;
    private final boolean restart;
    private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> events = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

    /**
     * @param forgets how many forgets the forget thread makes, at random moments of the run
     * @param restart whether a replica is stopped and started again during the run
     */
    Workload(
            HistoryCluster cluster,
            Client client,
            long seed,
            int threads,
            Duration duration,
            int forgets,
            boolean restart) {
        this.cluster = cluster;
        this.client = client;
        this.seed = seed;
        this.threads = threads;
        this.duration = duration;
        this.forgets = forgets;
        this.restart = restart;
    }

    /** Runs the workload; returns every operation, in invocation order. */
    List<Op> run() throws InterruptedException {
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        SplittableRandom root = new SplittableRandom(seed);
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            SplittableRandom rnd = root.split();
            all.add(
                    Thread.ofPlatform()
                            .name("history-client-" + t)
                            .unstarted(() -> client(thread, rnd, end)));
        }
        SplittableRandom forgetRnd = root.split();
        all.add(
                Thread.ofPlatform()
                        .name("history-forgets")
                        .unstarted(() -> forgets(forgetRnd, start)));
        if (restart) {
            SplittableRandom chaosRnd = root.split();
            all.add(
                    Thread.ofPlatform()
                            .name("history-restart")
                            .unstarted(() -> restart(chaosRnd, start)));
        }
        all.forEach(Thread::start);
        for (Thread t : all) {
            // A call is bounded by its deadline, a restart by the replica's start.
            t.join(duration.plusSeconds(60).toMillis());
            if (t.isAlive()) {
                throw new AssertionError(
                        t.getName()
                                + " did not end; events "
                                + events
                                + cluster.describe()
                                + ThreadStacks.all());
            }
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("a workload thread failed");
            errors.forEach(e::addSuppressed);
            throw e;
        }
        List<Op> out = new ArrayList<>(ops);
        out.sort((a, b) -> Long.compare(a.invoked(), b.invoked()));
        return Collections.unmodifiableList(out);
    }

    /** What happened beside the operations (a replica stopped, started), for messages. */
    List<String> events() {
        return List.copyOf(events);
    }

    private void client(int thread, SplittableRandom rnd, long end) {
        try {
            for (int n = 0; n < MAX_OPS_PER_THREAD && System.nanoTime() < end; n++) {
                // Every choice is drawn for every operation, so the streams stay in step.
                int node = rnd.nextInt(cluster.size());
                int kind = rnd.nextInt(1000);
                String key = Client.key(rnd.nextInt(Client.KEYS));
                int subject = rnd.nextInt(Client.SUBJECTS);
                long w = (long) thread * (Client.MAX_WRITE / 4) + n;
                Op op;
                if (kind < FORGET_PER_MILLE) {
                    op =
                            client.forget(
                                    thread,
                                    node,
                                    subject,
                                    "hist-" + seed + "-t" + thread + "-" + n);
                } else if (kind < FORGET_PER_MILLE + UPSERT_PER_MILLE) {
                    op = client.upsert(thread, node, key, w);
                } else if (kind < FORGET_PER_MILLE + UPSERT_PER_MILLE + DELETE_PER_MILLE) {
                    op = client.delete(thread, node, key);
                } else {
                    op = client.get(thread, node, key, false);
                }
                ops.add(op);
            }
        } catch (RuntimeException | Error e) {
            errors.add(e);
        }
    }

    private void forgets(SplittableRandom rnd, long start) {
        try {
            long[] at = new long[forgets];
            for (int i = 0; i < forgets; i++) {
                // Late enough that the keys have had a life; a forgotten subject's keys take no
                // more writes.
                at[i] = (long) (duration.toNanos() * (0.35 + 0.55 * rnd.nextDouble()));
            }
            java.util.Arrays.sort(at);
            for (int i = 0; i < forgets; i++) {
                int node = rnd.nextInt(cluster.size());
                int subject = rnd.nextInt(Client.SUBJECTS);
                sleepUntil(start + at[i]);
                // An answerless forget is asked again, of another replica, with the same
                // idempotency key: the key makes the retry the same operation.
                for (int attempt = 0; attempt < 3; attempt++) {
                    Op op =
                            client.forget(
                                    threads,
                                    (node + attempt) % cluster.size(),
                                    subject,
                                    "hist-" + seed + "-f" + i);
                    ops.add(op);
                    if (op.outcome() != Op.Outcome.UNKNOWN) {
                        break;
                    }
                }
            }
        } catch (RuntimeException | Error | InterruptedException e) {
            errors.add(e);
        }
    }

    private void restart(SplittableRandom rnd, long start) {
        try {
            // The seed chooses whether the leader goes down (a failover) or a follower (which
            // must catch up), not which node leads then.
            boolean leader = rnd.nextBoolean();
            int other = 1 + rnd.nextInt(cluster.size() - 1);
            long stopAt = (long) (duration.toNanos() * (0.2 + 0.3 * rnd.nextDouble()));
            long downFor = TimeUnit.MILLISECONDS.toNanos(2_000 + rnd.nextInt(2_000));
            sleepUntil(start + stopAt);
            int l = cluster.awaitLeader(Duration.ofSeconds(30));
            int node = leader ? l : (l + other) % cluster.size();
            events.add(
                    String.format(
                            "n%d (%s) stopped at %.1f ms",
                            node + 1,
                            leader ? "the leader" : "a follower",
                            (System.nanoTime() - client.origin()) / 1e6));
            cluster.stop(node);
            sleepUntil(System.nanoTime() + downFor);
            cluster.start(node);
            events.add(
                    String.format(
                            "n%d started at %.1f ms",
                            node + 1, (System.nanoTime() - client.origin()) / 1e6));
        } catch (Exception | Error e) {
            errors.add(e);
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long wait = nanoTime - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }
}
