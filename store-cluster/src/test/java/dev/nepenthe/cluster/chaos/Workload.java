package dev.nepenthe.cluster.chaos;

import dev.nepenthe.cluster.chaos.ChaosClients.Outcome;
import dev.nepenthe.cluster.chaos.History.Forget;
import dev.nepenthe.cluster.chaos.History.Write;
import dev.nepenthe.grpc.v1.DeleteRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.StatusRuntimeException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * One workload thread: upserts (each with a vector no other write uses), overwrites and deletes of
 * the records of a few subjects of its own, through random replicas, and now and then a forget of a
 * whole subject, retried with the same idempotency key until a replica answers. A subject is
 * forgotten once and never written again (the fence would refuse it), and a forget is sent only
 * after every write to the subject returned, so each subject's history is sequential.
 *
 * <p>Why the vectors look as they do: the forget's negative-space probe calls a surviving vector at
 * cosine 0.85 or more to a forgotten one a suspect, and the forget would wait for review instead of
 * sealing. So each subject owns one of the 24 directions of a 24-cell (pairwise cosine at most
 * 0.5), plus a small unique perturbation (the payload the checks compare, and random bytes for the
 * scan), and a direction is given to a new subject only once the forget of its last owner sealed.
 */
final class Workload implements Runnable {

    static final String COLLECTION = "chaos";
    static final int DIM = 4;
    private static final float[][] DIRECTIONS = directions();

    private final int worker;
    private final int round;
    private final Random rnd;
    private final ChaosClients clients;
    private final ChaosNodes nodes;
    private final History history;
    private final Chaos chaos;
    private final long deadline;
    private final Set<String> usedVectors;
    private final Deque<Integer> freeDirections = new ArrayDeque<>();
    private final Map<Integer, Forget> sealing = new HashMap<>();
    private final List<Subject> live = new ArrayList<>();
    private int subjects;
    private int ops;
    private volatile Throwable failure;

    /** A subject being written: its direction and the ids it may still write. */
    private static final class Subject {
        final String name;
        final int direction;
        final List<String> ids = new ArrayList<>();
        int records;
        int writes;

        Subject(String name, int direction) {
            this.name = name;
            this.direction = direction;
        }
    }

    /**
     * @param usedVectors every vector sent in the round (shared by the workers, synchronized)
     */
    Workload(
            int worker,
            int round,
            long seed,
            ChaosClients clients,
            ChaosNodes nodes,
            History history,
            Chaos chaos,
            long deadline,
            Set<String> usedVectors) {
        this.worker = worker;
        this.round = round;
        this.rnd = new Random(seed);
        this.clients = clients;
        this.nodes = nodes;
        this.history = history;
        this.chaos = chaos;
        this.deadline = deadline;
        this.usedVectors = usedVectors;
        for (int d = worker; d < DIRECTIONS.length; d += 2) {
            freeDirections.add(d);
        }
    }

    /** The 24 vertices of a 24-cell: the 8 of ±e_i and the 16 of (±1/2, ±1/2, ±1/2, ±1/2). */
    private static float[][] directions() {
        List<float[]> out = new ArrayList<>();
        for (int i = 0; i < DIM; i++) {
            for (float sign : new float[] {1f, -1f}) {
                float[] v = new float[DIM];
                v[i] = sign;
                out.add(v);
            }
        }
        for (int bits = 0; bits < 16; bits++) {
            float[] v = new float[DIM];
            for (int i = 0; i < DIM; i++) {
                v[i] = (bits & (1 << i)) == 0 ? 0.5f : -0.5f;
            }
            out.add(v);
        }
        return out.toArray(new float[0][]);
    }

    Throwable failure() {
        return failure;
    }

    int ops() {
        return ops;
    }

    @Override
    public void run() {
        try {
            loop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | Error e) {
            failure = e;
        }
    }

    private void loop() throws InterruptedException {
        while (System.currentTimeMillis() < deadline) {
            if (live.size() < 3 && !newSubject() && live.isEmpty()) {
                Thread.sleep(300);
                continue;
            }
            Subject s = live.get(rnd.nextInt(live.size()));
            int r = rnd.nextInt(100);
            if (r < 40 || s.ids.isEmpty()) {
                String id = s.name + "-r" + s.records++;
                s.ids.add(id);
                upsert(s, id);
            } else if (r < 72) {
                upsert(s, s.ids.get(rnd.nextInt(s.ids.size())));
            } else if (r < 85) {
                delete(s, s.ids.get(rnd.nextInt(s.ids.size())));
            } else if (r < 88 && s.writes >= 4) {
                forget(s);
            } else {
                String id = s.name + "-r" + s.records++;
                s.ids.add(id);
                upsert(s, id);
            }
            ops++;
            Thread.sleep(rnd.nextInt(30));
        }
    }

    /** Starts a new subject on a free direction; false when every direction is still sealing. */
    private boolean newSubject() {
        if (freeDirections.isEmpty()) {
            reclaimSealed();
        }
        if (freeDirections.isEmpty()) {
            return false;
        }
        int d = freeDirections.poll();
        live.add(new Subject("w" + worker + "s" + subjects++, d));
        return true;
    }

    private void reclaimSealed() {
        for (Map.Entry<Integer, Forget> e : new ArrayList<>(sealing.entrySet())) {
            try {
                Operation op =
                        clients.forget(rnd.nextInt(ChaosNodes.N))
                                .getOperation(
                                        GetOperationRequest.newBuilder()
                                                .setId(e.getValue().operationId())
                                                .build());
                if (op.getState().equals("SEALED")) {
                    sealing.remove(e.getKey());
                    freeDirections.add(e.getKey());
                }
            } catch (StatusRuntimeException ignored) {
                // That replica is down or behind: ask again later.
            }
        }
    }

    private float[] vector(int direction) {
        while (true) {
            float[] v = DIRECTIONS[direction].clone();
            for (int i = 0; i < DIM; i++) {
                v[i] += (1 + rnd.nextInt(1_000_000)) * 1e-8f;
            }
            if (usedVectors.add(Arrays.toString(v))) {
                return v;
            }
        }
    }

    private void upsert(Subject s, String id) {
        float[] v = vector(s.direction);
        Record.Builder rec = Record.newBuilder().setId(id).setSubject(s.name);
        for (float f : v) {
            rec.addVector(f);
        }
        int via = via();
        Outcome outcome;
        try {
            clients.records(via)
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection(COLLECTION)
                                    .addRecords(rec)
                                    .build());
            outcome = Outcome.ACKED;
        } catch (StatusRuntimeException e) {
            outcome = refusal(e, "upsert " + id);
        }
        record(s, new Write(id, s.name, v, outcome, nodes.id(via)));
    }

    private void delete(Subject s, String id) {
        int via = via();
        Outcome outcome;
        try {
            clients.records(via)
                    .delete(
                            DeleteRequest.newBuilder()
                                    .setCollection(COLLECTION)
                                    .addIds(id)
                                    .build());
            outcome = Outcome.ACKED;
        } catch (StatusRuntimeException e) {
            outcome = refusal(e, "delete " + id);
        }
        record(s, new Write(id, s.name, null, outcome, nodes.id(via)));
    }

    /**
     * A replica whose process runs, most of the time; any replica now and then, so calls to one
     * just killed (or not yet serving) happen too.
     */
    private int via() {
        int any = rnd.nextInt(ChaosNodes.N);
        if (rnd.nextInt(5) == 0) {
            return any;
        }
        for (int k = 0; k < ChaosNodes.N; k++) {
            int i = (any + k) % ChaosNodes.N;
            if (nodes.alive(i)) {
                return i;
            }
        }
        return any;
    }

    private static Outcome refusal(StatusRuntimeException e, String what) {
        Outcome o = ChaosClients.classify(e);
        if (o == Outcome.REFUSED && e.getStatus().getCode() != io.grpc.Status.Code.UNAVAILABLE) {
            // Not expected for a subject never forgotten; the checks hold either way.
            System.out.println("  refused " + what + ": " + e.getStatus());
        }
        return o;
    }

    private void record(Subject s, Write w) {
        history.write(w);
        s.writes++;
        if (w.outcome() == Outcome.UNKNOWN) {
            // It may still be applied later: writing the id again would leave the model unsure
            // which write came last, so the id is left alone from here.
            s.ids.remove(w.id());
        }
    }

    /**
     * Forgets a subject, retrying on no answer with the same key through random replicas until one
     * answers or the workload's time is up (healing retries once more).
     */
    private void forget(Subject s) throws InterruptedException {
        live.remove(s);
        String key = "chaos-r" + round + "-" + s.name;
        Forget f = history.forgetIssued(s.name, key);
        ForgetRequest req =
                ForgetRequest.newBuilder()
                        .setScope(ForgetScope.newBuilder().setSubject(s.name))
                        .setIdempotencyKey(key)
                        .setReasonCode("chaos-test")
                        .build();
        boolean signalled = false;
        while (true) {
            int via = via();
            if (!signalled) {
                chaos.forgetSent(s.name);
                signalled = true;
            }
            try {
                Operation op = clients.forget(via).forget(req);
                history.forgetCall(f, op.getState() + " via " + nodes.id(via), op.getId());
                sealing.put(s.direction, f);
                return;
            } catch (StatusRuntimeException e) {
                history.forgetCall(f, e.getStatus().getCode() + " via " + nodes.id(via), null);
                if (ChaosClients.classify(e) == Outcome.REFUSED
                        && e.getStatus().getCode() != io.grpc.Status.Code.UNAVAILABLE) {
                    System.out.println("  refused forget of " + s.name + ": " + e.getStatus());
                    return;
                }
            }
            if (System.currentTimeMillis() >= deadline) {
                return;
            }
            Thread.sleep(300);
        }
    }
}
