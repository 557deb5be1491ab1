package dev.nepenthe.cluster.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The chaos thread: SIGKILLs a random replica at a random moment, or shortly after a forget was
 * sent (so the kill lands while the replicas block, clean up or verify it), and starts it again on
 * its folder after a random pause. At most one replica is down at a time, and the next kill waits
 * until the restarted one answers a linearizable read, so a majority always stays.
 */
final class Chaos implements Runnable {

    private final Random rnd;
    private final ChaosNodes nodes;
    private final ChaosClients clients;
    private final long deadline;
    private final long start = System.nanoTime();
    private final BlockingQueue<String> forgetsSent = new LinkedBlockingQueue<>();
    private final List<String> events = new ArrayList<>();
    private volatile Throwable failure;

    Chaos(long seed, ChaosNodes nodes, ChaosClients clients, long deadline) {
        this.rnd = new Random(seed);
        this.nodes = nodes;
        this.clients = clients;
        this.deadline = deadline;
    }

    /** Called by a worker as it sends a forget. */
    void forgetSent(String subject) {
        forgetsSent.offer(subject);
    }

    Throwable failure() {
        return failure;
    }

    synchronized List<String> events() {
        return List.copyOf(events);
    }

    /** Adds a line to the round's timeline (kills and partitions, on one clock). */
    synchronized void event(String what) {
        events.add(
                String.format(Locale.ROOT, "t+%.1fs %s", (System.nanoTime() - start) / 1e9, what));
    }

    @Override
    public void run() {
        try {
            loop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception | Error e) {
            failure = e;
        }
    }

    private void loop() throws Exception {
        while (System.currentTimeMillis() < deadline) {
            forgetsSent.clear();
            String after = forgetsSent.poll(500 + rnd.nextInt(3000), TimeUnit.MILLISECONDS);
            String why = "at random";
            if (after != null) {
                Thread.sleep(rnd.nextInt(300));
                why = "right after the forget of " + after + " was sent";
            }
            if (System.currentTimeMillis() >= deadline) {
                return;
            }
            int victim = rnd.nextInt(ChaosNodes.N);
            long pid = nodes.kill(victim);
            long pause = 300 + rnd.nextInt(2500);
            event("SIGKILL " + nodes.id(victim) + " (pid " + pid + ") " + why);
            Thread.sleep(pause);
            nodes.start(victim);
            long restarted = System.nanoTime();
            nodes.awaitServing(clients, victim, Duration.ofSeconds(90));
            event(
                    String.format(
                            Locale.ROOT,
                            "%s restarted after %d ms, serving %.1f s later",
                            nodes.id(victim),
                            pause,
                            (System.nanoTime() - restarted) / 1e9));
        }
    }
}
