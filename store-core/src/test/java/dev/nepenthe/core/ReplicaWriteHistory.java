package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What writer threads did to their own records, and when: the oracle of a copy taken while they
 * ran. Each thread owns its ids, so each id's writes are one sequence; a copy must show each id as
 * it stood after the last write that returned before the copy began, or after a write that began
 * before the copy returned (one running when it began), and no record no thread wrote.
 */
final class ReplicaWriteHistory {

    static final int THREADS = 3;
    static final int IDS = 30;
    static final int OPS = 150;

    /** One write: the record an upsert stored, or null for a delete; when it began and returned. */
    private record Op(VectorRecord stored, long start, long end) {}

    private final Map<String, List<Op>> byId = new HashMap<>();
    private final CountDownLatch progress = new CountDownLatch(THREADS);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private int versions;

    /** A new record for id {@code i} of thread {@code k}. */
    synchronized VectorRecord record(int k, int i, Random r) {
        return VectorRecord.builder("t" + k + "-" + i)
                .subject("s" + r.nextInt(4))
                .vector(ReplicaCopyTest.survivorVector(r))
                .text("note " + k + " " + i + " version " + versions)
                .metadata("version", "v" + versions++)
                .build();
    }

    /** A record stored before the threads start. */
    synchronized void preloaded(VectorRecord rec) {
        byId.computeIfAbsent(rec.id(), x -> new ArrayList<>())
                .add(new Op(rec, Long.MIN_VALUE, Long.MIN_VALUE));
    }

    private synchronized void done(String id, Op op) {
        byId.computeIfAbsent(id, x -> new ArrayList<>()).add(op);
    }

    /** Starts the writers on {@code c}; each counts down the progress latch after 40 writes. */
    List<Thread> start(VectorCollection c, long seed) {
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < THREADS; k++) {
            int thread = k;
            Random r = new Random(seed + 31L * (k + 1));
            threads.add(
                    Thread.ofPlatform()
                            .name("replica-copy-writer-" + k)
                            .start(
                                    () -> {
                                        try {
                                            for (int n = 0; n < OPS; n++) {
                                                write(c, thread, r);
                                                if (n == 40) {
                                                    progress.countDown();
                                                }
                                            }
                                        } catch (Throwable t) {
                                            failure.compareAndSet(null, t);
                                            progress.countDown();
                                        }
                                    }));
        }
        return threads;
    }

    private void write(VectorCollection c, int k, Random r) {
        int i = r.nextInt(IDS);
        String id = "t" + k + "-" + i;
        if (r.nextInt(10) < 7) {
            VectorRecord rec = record(k, i, r);
            long start = System.nanoTime();
            c.upsert(rec);
            done(id, new Op(rec, start, System.nanoTime()));
        } else {
            long start = System.nanoTime();
            c.delete(id);
            done(id, new Op(null, start, System.nanoTime()));
        }
    }

    void awaitProgress() throws InterruptedException {
        if (!progress.await(60, TimeUnit.SECONDS)) {
            fail("the writers made no progress in 60 s");
        }
    }

    void rethrow() {
        Throwable t = failure.get();
        if (t != null) {
            throw new AssertionError("a writer failed", t);
        }
    }

    /**
     * Checks the records a copy held against the writes: the copy began at {@code t0} and returned
     * at {@code t1}.
     */
    synchronized void check(List<VectorRecord> held, long t0, long t1, long seed) {
        Map<String, VectorRecord> copy = new HashMap<>();
        for (VectorRecord rec : held) {
            if (copy.put(rec.id(), rec) != null) {
                fail("seed " + seed + ": id " + rec.id() + " held twice");
            }
            if (!byId.containsKey(rec.id())) {
                fail("seed " + seed + ": the copy holds " + rec.id() + ", which no one wrote");
            }
        }
        int checked = 0;
        for (Map.Entry<String, List<Op>> e : byId.entrySet()) {
            List<Op> ops = e.getValue();
            int last = -1; // the last write that returned before the copy began
            int reach = -1; // the last write that began before the copy returned
            for (int j = 0; j < ops.size(); j++) {
                if (ops.get(j).end() < t0) {
                    last = j;
                }
                if (ops.get(j).start() < t1) {
                    reach = j;
                }
            }
            List<VectorRecord> allowed = new ArrayList<>();
            allowed.add(last < 0 ? null : ops.get(last).stored());
            for (int j = last + 1; j <= reach; j++) {
                allowed.add(ops.get(j).stored());
            }
            VectorRecord got = copy.get(e.getKey());
            if (allowed.stream().noneMatch(a -> Objects.equals(a, got))) {
                fail(
                        "seed "
                                + seed
                                + ": "
                                + e.getKey()
                                + " is "
                                + (got == null ? "absent" : "present")
                                + " in the copy, which matches none of the "
                                + allowed.size()
                                + " states it had while the copy ran (exact vector, text and"
                                + " metadata compared)");
            }
            checked++;
        }
        if (checked < THREADS * IDS / 2) {
            fail("seed " + seed + ": only " + checked + " ids were written");
        }
    }
}
