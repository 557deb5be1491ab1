package dev.nepenthe.server.bench.soak;

import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.GetResponse;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.SearchHit;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.server.bench.soak.SoakClients.Conn;
import dev.nepenthe.server.bench.soak.SoakModel.Entry;
import dev.nepenthe.server.bench.soak.SoakModel.Forgotten;
import dev.nepenthe.server.bench.soak.SoakModel.Verdict;
import dev.nepenthe.server.bench.soak.SoakTally.Kind;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;

/**
 * Checks the server against the model over gRPC, with the workload paused (the gate's write side):
 * every record of a subject still in the workload is read back and must be what the model says (an
 * acknowledged write that reads absent or older is lost; a record that reads present where the
 * model has it deleted or never written is resurrected); every forgotten record must be absent from
 * a get, from a search by each of its vectors, and the subject from a search filtered to it. Any
 * failed call is an error: the server is up during a check.
 */
final class SoakChecker {

    /** What one check found. */
    record Result(
            String when,
            int recordsChecked,
            long lost,
            long resurrected,
            int forgottenChecked,
            long forgottenServed,
            long errors,
            double seconds) {}

    private static final int THREADS = 4;
    private static final float VECTOR_TOLERANCE = 1e-5f;

    private final SoakModel model;
    private final SoakClients clients;
    private final SoakTally tally;
    private final ReadWriteLock gate;

    SoakChecker(SoakModel model, SoakClients clients, SoakTally tally, ReadWriteLock gate) {
        this.model = model;
        this.clients = clients;
        this.tally = tally;
        this.gate = gate;
    }

    Result check(String when) throws InterruptedException {
        gate.writeLock().lock();
        ExecutorService pool =
                Executors.newFixedThreadPool(
                        THREADS, Thread.ofPlatform().name("soak-check-", 0).factory());
        try {
            long t0 = System.nanoTime();
            Conn c = clients.conn();
            AtomicLong lost = new AtomicLong();
            AtomicLong resurrected = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            Set<String> served = ConcurrentHashMap.newKeySet();
            List<Entry> live = model.live();
            List<Forgotten> forgotten = model.forgottenRecords();
            List<SoakModel.Subject> forgottenSubjects = model.forgottenSubjects();
            Set<String> forgottenIds = ConcurrentHashMap.newKeySet();
            forgotten.forEach(f -> forgottenIds.add(f.tenant() + "/" + f.id()));
            Set<String> forgottenNames = ConcurrentHashMap.newKeySet();
            forgottenSubjects.forEach(s -> forgottenNames.add(s.tenant + "/" + s.name));
            List<Future<?>> work = new ArrayList<>();
            for (Entry e : live) {
                work.add(
                        pool.submit(
                                () -> {
                                    Integer observed = read(c, e, errors);
                                    if (observed != null) {
                                        Verdict v = model.observe(e, observed);
                                        if (v == Verdict.LOST) {
                                            lost.incrementAndGet();
                                        } else if (v == Verdict.RESURRECTED) {
                                            resurrected.incrementAndGet();
                                        }
                                    }
                                }));
            }
            for (Forgotten f : forgotten) {
                work.add(
                        pool.submit(
                                () -> {
                                    try {
                                        clients.records(c, f.tenant())
                                                .get(
                                                        GetRequest.newBuilder()
                                                                .setCollection(
                                                                        SoakWorkload.COLLECTION)
                                                                .setId(f.id())
                                                                .build());
                                        served.add(f.tenant() + "/" + f.id());
                                    } catch (StatusRuntimeException x) {
                                        if (x.getStatus().getCode() != Status.Code.NOT_FOUND) {
                                            error(
                                                    errors,
                                                    "check: a get of a forgotten record failed "
                                                            + x.getStatus().getCode());
                                        }
                                    }
                                    for (int version : f.versions()) {
                                        search(
                                                c,
                                                f.tenant(),
                                                model.vector(
                                                        f.tenant(), f.id(), f.subject(), version),
                                                "",
                                                forgottenIds,
                                                forgottenNames,
                                                served,
                                                errors);
                                    }
                                }));
            }
            for (SoakModel.Subject s : forgottenSubjects) {
                work.add(
                        pool.submit(
                                () ->
                                        search(
                                                c,
                                                s.tenant,
                                                model.vector(s.tenant, "probe", s.name, 0),
                                                s.name,
                                                forgottenIds,
                                                forgottenNames,
                                                served,
                                                errors)));
            }
            for (Future<?> f : work) {
                try {
                    f.get();
                } catch (ExecutionException x) {
                    error(errors, "check: " + x.getCause());
                }
            }
            return new Result(
                    when,
                    live.size(),
                    lost.get(),
                    resurrected.get(),
                    forgotten.size(),
                    served.size(),
                    errors.get(),
                    (System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdownNow();
            gate.writeLock().unlock();
        }
    }

    /**
     * The version the server holds for {@code e}, {@link SoakModel#ABSENT}, -2 for a record that is
     * not what was written, null on an error.
     */
    private Integer read(Conn c, Entry e, AtomicLong errors) {
        String tenant = e.subject.tenant;
        GetResponse r;
        try {
            r =
                    clients.records(c, tenant)
                            .get(
                                    GetRequest.newBuilder()
                                            .setCollection(SoakWorkload.COLLECTION)
                                            .setId(e.id)
                                            .build());
        } catch (StatusRuntimeException x) {
            if (x.getStatus().getCode() == Status.Code.NOT_FOUND) {
                return SoakModel.ABSENT;
            }
            error(
                    errors,
                    "check: a get failed "
                            + x.getStatus().getCode()
                            + ": "
                            + x.getStatus().getDescription());
            return null;
        }
        Record rec = r.getRecord();
        if (!rec.containsMetadata("v") || !rec.getSubject().equals(e.subject.name)) {
            return -2;
        }
        int version = (int) rec.getMetadataOrThrow("v").getIntValue();
        float[] want = model.vector(tenant, e.id, e.subject.name, version);
        if (rec.getVectorCount() != want.length) {
            return -2;
        }
        for (int i = 0; i < want.length; i++) {
            if (Math.abs(rec.getVector(i) - want[i]) > VECTOR_TOLERANCE) {
                return -2;
            }
        }
        return version;
    }

    private void search(
            Conn c,
            String tenant,
            float[] vector,
            String subject,
            Set<String> forgottenIds,
            Set<String> forgottenNames,
            Set<String> served,
            AtomicLong errors) {
        SearchRequest.Builder b =
                SearchRequest.newBuilder()
                        .setCollection(SoakWorkload.COLLECTION)
                        .setK(10)
                        .setSubject(subject);
        for (float x : vector) {
            b.addVector(x);
        }
        try {
            for (SearchHit h : clients.records(c, tenant).search(b.build()).getHitsList()) {
                String id = tenant + "/" + h.getRecord().getId();
                if (!subject.isEmpty()
                        || forgottenIds.contains(id)
                        || forgottenNames.contains(tenant + "/" + h.getRecord().getSubject())) {
                    served.add(id);
                }
            }
        } catch (StatusRuntimeException x) {
            error(
                    errors,
                    "check: a search failed "
                            + x.getStatus().getCode()
                            + ": "
                            + x.getStatus().getDescription());
        }
    }

    private void error(AtomicLong errors, String what) {
        errors.incrementAndGet();
        tally.error(Kind.OTHER, what);
    }
}
