package dev.nepenthe.server.bench.soak;

import dev.nepenthe.grpc.v1.DeleteRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.ReadmitRequest;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.SearchHit;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.SearchResponse;
import dev.nepenthe.grpc.v1.SnapshotRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.Value;
import dev.nepenthe.server.bench.soak.SoakClients.Conn;
import dev.nepenthe.server.bench.soak.SoakTally.Kind;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The soak's clients, each a thread at a bounded rate: two writers, two searchers, a deleter, a
 * forgetter (one subject at a time, awaited to SEALED) and a snapshotter. Every call holds the
 * gate's read side, so a check (the write side) sees the model and the server at rest. A search
 * checks its own hits as it goes: a hit of a subject whose forget was acknowledged before the
 * search started counts as a forgotten record served.
 */
final class SoakWorkload {

    static final String COLLECTION = "soak";

    /** Snapshots kept on disk; older ones are deleted as new ones are taken. */
    private static final int SNAPSHOTS_KEPT = 2;

    /** How long a forget may take to reach SEALED before it counts as an error. */
    private static final long SEAL_TIMEOUT_NANOS = 180_000_000_000L;

    private final SoakOptions o;
    private final SoakModel model;
    private final SoakClients clients;
    private final SoakTally tally;
    private final ReadWriteLock gate;
    private final Path snapshots;
    private final AtomicBoolean stop = new AtomicBoolean();

    /** The run is being abandoned (the server did not come back): nothing waits for it any more. */
    private final AtomicBoolean abort = new AtomicBoolean();

    private final AtomicLong servedInSearches = new AtomicLong();
    private final AtomicLong snapshotsTaken = new AtomicLong();
    private final AtomicLong snapshotAttempts = new AtomicLong();
    private final AtomicLong sealed = new AtomicLong();
    private final AtomicBoolean replayed = new AtomicBoolean();
    private final Deque<Path> kept = new ArrayDeque<>();
    private final List<Thread> threads = new ArrayList<>();

    SoakWorkload(
            SoakOptions o,
            SoakModel model,
            SoakClients clients,
            SoakTally tally,
            ReadWriteLock gate,
            Path snapshots) {
        this.o = o;
        this.model = model;
        this.clients = clients;
        this.tally = tally;
        this.gate = gate;
        this.snapshots = snapshots;
    }

    void start() {
        for (int i = 0; i < 2; i++) {
            long s = o.seed() * 31 + i;
            spawn("soak-writer-" + i, o.writesPerSecond() / 2, s, this::write);
            spawn("soak-searcher-" + i, o.searchesPerSecond() / 2, s + 7, this::search);
        }
        spawn("soak-deleter", o.deletesPerSecond(), o.seed() * 31 + 11, this::delete);
        spawn("soak-snapshotter", 1 / o.snapshotEverySeconds(), o.seed(), r -> snapshot());
        spawn("soak-forgetter", 1 / o.forgetEverySeconds(), o.seed() * 31 + 13, this::forget);
        threads.forEach(Thread::start);
    }

    /** Stops every client; each finishes the call it is in (a forgetter, its forget to SEALED). */
    void stop() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
    }

    /** Stops every client without waiting for a server that may not come back. */
    void abort() throws InterruptedException {
        abort.set(true);
        stop();
    }

    long servedInSearches() {
        return servedInSearches.get();
    }

    long snapshotsTaken() {
        return snapshotsTaken.get();
    }

    long sealed() {
        return sealed.get();
    }

    boolean replayed() {
        return replayed.get();
    }

    /** The newest snapshot taken, or null. */
    synchronized Path newestSnapshot() {
        return kept.peekLast();
    }

    private interface Step {
        void run(SplittableRandom rnd) throws InterruptedException;
    }

    /**
     * A thread that runs {@code step} at most {@code perSecond} times a second, and never in a
     * burst to catch up.
     */
    private void spawn(String name, double perSecond, long seed, Step step) {
        long interval = (long) (1e9 / perSecond);
        threads.add(
                Thread.ofPlatform()
                        .name(name)
                        .daemon()
                        .unstarted(
                                () -> {
                                    SplittableRandom rnd = new SplittableRandom(seed);
                                    long next = System.nanoTime();
                                    try {
                                        while (!stop.get()) {
                                            step.run(rnd);
                                            next = Math.max(next + interval, System.nanoTime());
                                            long wait = next - System.nanoTime();
                                            if (wait > 0) {
                                                Thread.sleep(
                                                        wait / 1_000_000, (int) (wait % 1_000_000));
                                            }
                                        }
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                    } catch (RuntimeException e) {
                                        tally.error(Kind.OTHER, name + " stopped: " + e);
                                    }
                                }));
    }

    /**
     * One call under the gate: the outcome is OK (returned), EXPECTED (UNAVAILABLE in a restart
     * window) or ERROR.
     */
    private enum Outcome {
        OK,
        EXPECTED,
        ERROR
    }

    private <T> Outcome call(Kind kind, Function<Conn, T> rpc, Consumer<T> onOk) {
        gate.readLock().lock();
        try {
            Conn c = clients.conn();
            long t0 = System.nanoTime();
            T result;
            try {
                result = rpc.apply(c);
            } catch (StatusRuntimeException e) {
                if (clients.expected(c, e)) {
                    tally.expected(kind);
                    return Outcome.EXPECTED;
                }
                tally.error(kind, e.getStatus().getCode() + ": " + e.getStatus().getDescription());
                return Outcome.ERROR;
            }
            tally.ok(kind, t0, System.nanoTime() - t0);
            onOk.accept(result);
            return Outcome.OK;
        } finally {
            gate.readLock().unlock();
        }
    }

    private void write(SplittableRandom rnd) {
        SoakModel.Call c = model.planWrite(rnd);
        if (c == null) {
            return;
        }
        String tenant = c.subject().tenant;
        UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection(COLLECTION);
        for (int i = 0; i < c.entries().size(); i++) {
            b.addRecords(
                    record(tenant, c.entries().get(i).id, c.subject().name, c.versions().get(i)));
        }
        UpsertRequest req = b.build();
        settle(c, call(Kind.UPSERT, conn -> clients.records(conn, tenant).upsert(req), r -> {}));
    }

    private Record record(String tenant, String id, String subject, int version) {
        Record.Builder r =
                Record.newBuilder()
                        .setId(id)
                        .setSubject(subject)
                        .putMetadata("v", Value.newBuilder().setIntValue(version).build());
        for (float x : model.vector(tenant, id, subject, version)) {
            r.addVector(x);
        }
        return r.build();
    }

    private void delete(SplittableRandom rnd) {
        SoakModel.Call c = model.planDelete(rnd);
        if (c == null) {
            return;
        }
        DeleteRequest req =
                DeleteRequest.newBuilder()
                        .setCollection(COLLECTION)
                        .addAllIds(c.entries().stream().map(e -> e.id).toList())
                        .build();
        settle(
                c,
                call(
                        Kind.DELETE,
                        conn -> clients.records(conn, c.subject().tenant).delete(req),
                        r -> {}));
    }

    /**
     * An acknowledged call is what it asked; an expected failure leaves it open; an error too (the
     * checks settle it).
     */
    private void settle(SoakModel.Call c, Outcome outcome) {
        if (outcome == Outcome.OK) {
            model.acknowledged(c);
        } else {
            model.unsettled(c);
        }
    }

    private void search(SplittableRandom rnd) {
        String tenant = model.tenants().get(rnd.nextInt(model.tenants().size()));
        // Near some subject's records: a subject drawn from the ones this tenant has had.
        String subject = "s" + rnd.nextInt(Math.max(1, 40));
        float[] q = model.vector(tenant, "q" + rnd.nextInt(1_000_000), subject, 0);
        SearchRequest.Builder b = SearchRequest.newBuilder().setCollection(COLLECTION).setK(10);
        for (float x : q) {
            b.addVector(x);
        }
        SearchRequest req = b.build();
        long startedAt = model.now();
        call(
                Kind.SEARCH,
                conn -> clients.records(conn, tenant).search(req),
                (SearchResponse r) -> {
                    for (SearchHit h : r.getHitsList()) {
                        if (model.forgottenBefore(tenant, h.getRecord().getSubject(), startedAt)) {
                            servedInSearches.incrementAndGet();
                        }
                    }
                });
    }

    private void snapshot() {
        // Named by attempt, not by success: a snapshot the server wrote before a restart cut its
        // answer off is there, and a retry under its name would be refused as existing.
        long n = snapshotAttempts.incrementAndGet();
        String target = snapshots.resolve("snap-" + n).toString();
        call(
                Kind.SNAPSHOT,
                conn ->
                        clients.admin(conn)
                                .snapshot(SnapshotRequest.newBuilder().setTarget(target).build()),
                r -> {
                    snapshotsTaken.incrementAndGet();
                    keep(Path.of(r.getTarget()));
                });
    }

    private synchronized void keep(Path snapshot) {
        kept.addLast(snapshot);
        while (kept.size() > SNAPSHOTS_KEPT) {
            deleteTree(kept.removeFirst());
        }
    }

    /**
     * Forgets one subject of each tenant in turn: retire it, wait for its calls, forget it
     * (retrying the same idempotency key through a restart until the server answers), then wait for
     * SEALED.
     */
    private void forget(SplittableRandom rnd) throws InterruptedException {
        String tenant = model.tenants().get((int) (sealed.get() % model.tenants().size()));
        SoakModel.Subject s = model.retire(tenant, rnd);
        if (s == null) {
            return;
        }
        model.awaitIdle(s);
        ForgetRequest req =
                ForgetRequest.newBuilder()
                        .setScope(ForgetScope.newBuilder().setSubject(s.name))
                        .setIdempotencyKey("soak-" + tenant + "-" + s.name)
                        .setReasonCode("soak")
                        .build();
        long t0 = System.nanoTime();
        Operation[] op = new Operation[1];
        Outcome out;
        while ((out =
                        call(
                                Kind.FORGET,
                                conn -> clients.forget(conn, tenant).forget(req),
                                r -> op[0] = r))
                == Outcome.EXPECTED) {
            if (abort.get()) {
                return;
            }
            Thread.sleep(200);
        }
        if (out == Outcome.ERROR) {
            model.abandoned(s);
            return;
        }
        model.forgotten(s);
        GetOperationRequest get = GetOperationRequest.newBuilder().setId(op[0].getId()).build();
        while (!op[0].getSettled()) {
            if (abort.get()) {
                return;
            }
            if (System.nanoTime() - t0 > SEAL_TIMEOUT_NANOS) {
                tally.error(
                        Kind.SEALED,
                        "a forget did not settle within "
                                + SEAL_TIMEOUT_NANOS / 1_000_000_000
                                + " s");
                return;
            }
            Thread.sleep(100);
            if (call(
                            Kind.OTHER,
                            conn -> clients.forget(conn, tenant).getOperation(get),
                            r -> op[0] = r)
                    == Outcome.ERROR) {
                return;
            }
        }
        if (!op[0].getState().equals("SEALED")) {
            tally.error(
                    Kind.SEALED,
                    "a forget settled " + op[0].getState() + ", not SEALED: " + op[0].getNote());
            return;
        }
        tally.ok(Kind.SEALED, t0, System.nanoTime() - t0);
        sealed.incrementAndGet();
        if (o.replay() && replayed.compareAndSet(false, true)) {
            replay(s);
        }
    }

    /**
     * The replay fault: the subject is re-admitted and its forgotten records written back as a
     * stale queue would, behind the model's back. The checks must find them served.
     */
    private void replay(SoakModel.Subject s) {
        ReadmitRequest readmit =
                ReadmitRequest.newBuilder()
                        .setScope(ForgetScope.newBuilder().setSubject(s.name))
                        .setReasonCode("soak-fault")
                        .build();
        call(Kind.OTHER, conn -> clients.forget(conn, s.tenant).readmit(readmit), r -> {});
        UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection(COLLECTION);
        for (SoakModel.Forgotten f : model.forgottenRecords()) {
            if (f.tenant().equals(s.tenant)
                    && f.subject().equals(s.name)
                    && !f.versions().isEmpty()) {
                b.addRecords(record(f.tenant(), f.id(), f.subject(), f.versions().get(0)));
            }
        }
        UpsertRequest req = b.build();
        call(Kind.OTHER, conn -> clients.records(conn, s.tenant).upsert(req), r -> {});
    }

    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("soak: could not delete " + dir + ": " + e.getMessage());
        }
    }
}
