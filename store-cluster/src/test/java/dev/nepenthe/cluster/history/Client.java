package dev.nepenthe.cluster.history;

import dev.nepenthe.grpc.v1.DeleteRequest;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs one operation against one replica and records it as an {@link Op}: the key space (record
 * ids, each owned by one subject), how a write number is carried in a record's vector, and which
 * statuses mean what. A write that fails without an answer (UNAVAILABLE, a deadline) has an unknown
 * outcome; a read that fails says nothing; any other status is unexpected and fails the test.
 */
final class Client {

    static final String COLLECTION = "history";
    static final int DIMENSION = 4;
    static final int KEYS = 12;
    static final int SUBJECTS = 4;

    /** Write numbers stay below this: two vector components carry 200 values each. */
    static final long MAX_WRITE = 200L * 200L;

    private static final Duration DEADLINE = Duration.ofSeconds(10);

    private final HistoryCluster cluster;
    private final AtomicInteger seq;
    private final long origin;

    Client(HistoryCluster cluster, AtomicInteger seq, long origin) {
        this.cluster = cluster;
        this.seq = seq;
        this.origin = origin;
    }

    static String key(int k) {
        return String.format("k%02d", k);
    }

    static int owner(String key) {
        return Integer.parseInt(key.substring(1)) % SUBJECTS;
    }

    static String subject(int s) {
        return "subject-" + s;
    }

    /**
     * The vector of write {@code w} of a record of subject {@code s}: mostly along the subject's
     * axis, so records of different subjects are far apart (a forget's probe finds no look-alike of
     * another subject), and the write number in two other components, read back as ratios (a cosine
     * collection may normalise what it stores).
     */
    static Record record(String key, long w) {
        if (w < 0 || w >= MAX_WRITE) {
            throw new IllegalArgumentException("expected a write number below " + MAX_WRITE);
        }
        int s = owner(key);
        float[] v = new float[DIMENSION];
        v[s] = 1f;
        int[] others = others(s);
        v[others[0]] = (1 + w % 200) / 1000f;
        v[others[1]] = (1 + w / 200) / 1000f;
        v[others[2]] = 0.05f;
        Record.Builder b = Record.newBuilder().setId(key).setSubject(subject(s));
        for (float f : v) {
            b.addVector(f);
        }
        return b.build();
    }

    /** The write number a record carries, or -2 when it does not look like one of ours. */
    static long writeOf(Record r, String key) {
        int s = owner(key);
        List<Float> v = r.getVectorList();
        if (!r.getId().equals(key) || !r.getSubject().equals(subject(s)) || v.size() != DIMENSION) {
            return -2;
        }
        int[] others = others(s);
        double axis = v.get(s);
        long low = Math.round(v.get(others[0]) / axis * 1000) - 1;
        long high = Math.round(v.get(others[1]) / axis * 1000) - 1;
        double third = v.get(others[2]) / axis;
        if (low < 0 || low >= 200 || high < 0 || high >= 200 || Math.abs(third - 0.05) > 1e-3) {
            return -2;
        }
        return high * 200 + low;
    }

    private static int[] others(int s) {
        int[] out = new int[DIMENSION - 1];
        int j = 0;
        for (int i = 0; i < DIMENSION; i++) {
            if (i != s) {
                out[j++] = i;
            }
        }
        return out;
    }

    Op upsert(int thread, int node, String key, long w) {
        long inv = System.nanoTime();
        try {
            cluster.records(node, DEADLINE)
                    .upsert(
                            UpsertRequest.newBuilder()
                                    .setCollection(COLLECTION)
                                    .addRecords(record(key, w))
                                    .build());
            return done(thread, node, Op.Kind.UPSERT, key, owner(key), w, -1, inv, "");
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.FAILED_PRECONDITION) {
                return op(
                        thread,
                        node,
                        Op.Kind.UPSERT,
                        key,
                        owner(key),
                        w,
                        Op.Outcome.REFUSED,
                        -1,
                        inv,
                        System.nanoTime(),
                        "");
            }
            return failed(thread, node, Op.Kind.UPSERT, key, owner(key), w, inv, e);
        }
    }

    Op get(int thread, int node, String key, boolean stale) {
        Op.Kind kind = stale ? Op.Kind.STALE_GET : Op.Kind.GET;
        long inv = System.nanoTime();
        try {
            GetRequest req = GetRequest.newBuilder().setCollection(COLLECTION).setId(key).build();
            Record r =
                    (stale
                                    ? cluster.staleRecords(node, DEADLINE).get(req)
                                    : cluster.records(node, DEADLINE).get(req))
                            .getRecord();
            long w = writeOf(r, key);
            if (w < 0) {
                return op(
                        thread,
                        node,
                        kind,
                        key,
                        owner(key),
                        -1,
                        Op.Outcome.UNEXPECTED,
                        -1,
                        inv,
                        System.nanoTime(),
                        "a record that is none of this test's writes");
            }
            return done(thread, node, kind, key, owner(key), -1, w, inv, "");
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return done(thread, node, kind, key, owner(key), -1, Op.NOT_FOUND, inv, "");
            }
            return failed(thread, node, kind, key, owner(key), -1, inv, e);
        }
    }

    Op delete(int thread, int node, String key) {
        long inv = System.nanoTime();
        try {
            long n =
                    cluster.records(node, DEADLINE)
                            .delete(
                                    DeleteRequest.newBuilder()
                                            .setCollection(COLLECTION)
                                            .addIds(key)
                                            .build())
                            .getDeleted();
            return done(thread, node, Op.Kind.DELETE, key, owner(key), -1, n, inv, "");
        } catch (StatusRuntimeException e) {
            return failed(thread, node, Op.Kind.DELETE, key, owner(key), -1, inv, e);
        }
    }

    Op forget(int thread, int node, int subject, String idempotencyKey) {
        long inv = System.nanoTime();
        try {
            Operation o =
                    cluster.forget(node, DEADLINE)
                            .forget(
                                    ForgetRequest.newBuilder()
                                            .setScope(
                                                    ForgetScope.newBuilder()
                                                            .setSubject(subject(subject)))
                                            .setIdempotencyKey(idempotencyKey)
                                            .setReasonCode("gdpr-art17")
                                            .build());
            return done(thread, node, Op.Kind.FORGET, null, subject, -1, -1, inv, o.getId());
        } catch (StatusRuntimeException e) {
            return failed(thread, node, Op.Kind.FORGET, null, subject, -1, inv, e);
        }
    }

    private Op done(
            int thread,
            int node,
            Op.Kind kind,
            String key,
            int subject,
            long write,
            long seen,
            long inv,
            String note) {
        return op(
                thread,
                node,
                kind,
                key,
                subject,
                write,
                Op.Outcome.OK,
                seen,
                inv,
                System.nanoTime(),
                note);
    }

    private Op failed(
            int thread,
            int node,
            Op.Kind kind,
            String key,
            int subject,
            long write,
            long inv,
            StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        boolean noAnswer =
                code == Status.Code.UNAVAILABLE
                        || code == Status.Code.DEADLINE_EXCEEDED
                        || code == Status.Code.CANCELLED;
        String note = code + ": " + e.getStatus().getDescription();
        if (!noAnswer) {
            return op(
                    thread,
                    node,
                    kind,
                    key,
                    subject,
                    write,
                    Op.Outcome.UNEXPECTED,
                    -1,
                    inv,
                    System.nanoTime(),
                    note);
        }
        boolean write0 = kind == Op.Kind.UPSERT || kind == Op.Kind.DELETE || kind == Op.Kind.FORGET;
        return write0
                ? op(
                        thread,
                        node,
                        kind,
                        key,
                        subject,
                        write,
                        Op.Outcome.UNKNOWN,
                        -1,
                        inv,
                        Op.NEVER,
                        note)
                : op(
                        thread,
                        node,
                        kind,
                        key,
                        subject,
                        write,
                        Op.Outcome.FAILED,
                        -1,
                        inv,
                        System.nanoTime(),
                        note);
    }

    private Op op(
            int thread,
            int node,
            Op.Kind kind,
            String key,
            int subject,
            long write,
            Op.Outcome outcome,
            long seen,
            long inv,
            long ret,
            String note) {
        return new Op(
                seq.getAndIncrement(),
                thread,
                node,
                kind,
                key,
                subject,
                write,
                outcome,
                seen,
                inv,
                ret,
                note);
    }

    long origin() {
        return origin;
    }
}
