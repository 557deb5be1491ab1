package dev.nepenthe.cluster.bench;

import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.SearchResponse;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Drives the gRPC API from concurrent clients, each a thread with channels of its own: upserts of
 * prepared batches, and searches spread over the members given. The data are seeded random vectors
 * (uniform in [-1, 1) per coordinate), made before the clock starts. Every run is bounded: a client
 * that has not finished by the step's deadline fails the step.
 */
final class Load {

    private Load() {}

    /** A seeded random vector: the same seed and index give the same vector. */
    static float[] vector(long seed, long index, int dim) {
        SplittableRandom r = new SplittableRandom(seed * 1_000_003L + index);
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) (r.nextDouble() * 2 - 1);
        }
        return v;
    }

    /**
     * Upserts of {@code n} records in batches: ids {@code <prefix>-<i>}, subjects {@code
     * <prefix>-s<i / 20>} (twenty records a subject), vectors from {@code seed}.
     */
    static List<UpsertRequest> batches(
            String collection, String prefix, int n, int dim, int batch, long seed) {
        List<UpsertRequest> out = new ArrayList<>();
        UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection(collection);
        for (int i = 0; i < n; i++) {
            Record.Builder r =
                    Record.newBuilder().setId(prefix + "-" + i).setSubject(subject(prefix, i / 20));
            for (float x : vector(seed, i, dim)) {
                r.addVector(x);
            }
            b.addRecords(r);
            if (b.getRecordsCount() == batch || i == n - 1) {
                out.add(b.build());
                b = UpsertRequest.newBuilder().setCollection(collection);
            }
        }
        return out;
    }

    /** The subject of the {@code k}-th group of twenty records written under {@code prefix}. */
    static String subject(String prefix, int k) {
        return prefix + "-s" + k;
    }

    /**
     * Sends every batch once, {@code clients} at a time, each client on a channel of its own to
     * member {@code via}.
     *
     * @return records acknowledged per second, from the first send to the last acknowledgement
     */
    static double ingest(
            BenchGroup g, int via, List<UpsertRequest> batches, int clients, Duration max)
            throws Exception {
        AtomicInteger next = new AtomicInteger();
        long records = batches.stream().mapToLong(UpsertRequest::getRecordsCount).sum();
        List<ManagedChannel> channels = new ArrayList<>();
        List<Callable<Long>> work = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            ManagedChannel ch = g.open(via);
            channels.add(ch);
            RecordsGrpc.RecordsBlockingStub stub = g.records(ch, false);
            work.add(
                    () -> {
                        long acknowledged = 0;
                        for (int i = next.getAndIncrement();
                                i < batches.size();
                                i = next.getAndIncrement()) {
                            acknowledged +=
                                    stub.withDeadlineAfter(
                                                    BenchGroup.CALL_SECONDS, TimeUnit.SECONDS)
                                            .upsert(batches.get(i))
                                            .getUpserted();
                        }
                        return acknowledged;
                    });
        }
        long start = System.nanoTime();
        long acknowledged = sum(run("ingest", work, max));
        double seconds = (System.nanoTime() - start) / 1e9;
        channels.forEach(ManagedChannel::shutdownNow);
        if (acknowledged != records) {
            throw new IllegalStateException(
                    "ingest: expected "
                            + records
                            + " records acknowledged, the server acknowledged "
                            + acknowledged);
        }
        return records / seconds;
    }

    /**
     * Runs {@code warmup} searches, then {@code queries} timed ones, {@code clients} at a time;
     * each client sends its queries to the members {@code targets} in turn, starting at a member of
     * its own. Query vectors come from {@code seed} and never repeat, so no query cache answers.
     *
     * @return searches answered per second in the timed part
     */
    static double search(
            BenchGroup g,
            List<Integer> targets,
            boolean stale,
            String collection,
            int dim,
            int k,
            int warmup,
            int queries,
            int clients,
            long seed,
            Duration max)
            throws Exception {
        List<ManagedChannel> channels = new ArrayList<>();
        List<List<RecordsGrpc.RecordsBlockingStub>> stubs = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            List<RecordsGrpc.RecordsBlockingStub> mine = new ArrayList<>();
            for (int t : targets) {
                ManagedChannel ch = g.open(t);
                channels.add(ch);
                mine.add(g.records(ch, stale));
            }
            stubs.add(mine);
        }
        try {
            run("search warm-up", searches(stubs, collection, dim, k, warmup, seed), max);
            List<Callable<Long>> timed =
                    searches(stubs, collection, dim, k, queries, seed + 0x5eed);
            long start = System.nanoTime();
            long answered = sum(run("search", timed, max));
            double seconds = (System.nanoTime() - start) / 1e9;
            return answered / seconds;
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
        }
    }

    private static List<Callable<Long>> searches(
            List<List<RecordsGrpc.RecordsBlockingStub>> stubs,
            String collection,
            int dim,
            int k,
            int queries,
            long seed) {
        List<SearchRequest> requests = new ArrayList<>();
        for (int q = 0; q < queries; q++) {
            SearchRequest.Builder b = SearchRequest.newBuilder().setCollection(collection).setK(k);
            for (float x : vector(seed, q, dim)) {
                b.addVector(x);
            }
            requests.add(b.build());
        }
        AtomicInteger next = new AtomicInteger();
        List<Callable<Long>> work = new ArrayList<>();
        for (int c = 0; c < stubs.size(); c++) {
            List<RecordsGrpc.RecordsBlockingStub> mine = stubs.get(c);
            int first = c;
            work.add(
                    () -> {
                        long answered = 0;
                        for (int q = next.getAndIncrement();
                                q < requests.size();
                                q = next.getAndIncrement()) {
                            SearchResponse r =
                                    mine.get((first + q) % mine.size())
                                            .withDeadlineAfter(
                                                    BenchGroup.CALL_SECONDS, TimeUnit.SECONDS)
                                            .search(requests.get(q));
                            if (r.getHitsCount() == 0) {
                                throw new IllegalStateException(
                                        "search: expected hits from a loaded collection, got none");
                            }
                            answered++;
                        }
                        return answered;
                    });
        }
        return work;
    }

    /** Runs every task on a thread of its own; a task's failure or the deadline fails the step. */
    private static List<Long> run(String what, List<Callable<Long>> work, Duration max)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(work.size());
        try {
            List<Future<Long>> futures = new ArrayList<>();
            for (Callable<Long> w : work) {
                futures.add(pool.submit(w));
            }
            long deadline = System.nanoTime() + max.toNanos();
            List<Long> out = new ArrayList<>();
            for (Future<Long> f : futures) {
                try {
                    out.add(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                } catch (TimeoutException e) {
                    throw new IllegalStateException(what + ": not done within " + max, e);
                } catch (ExecutionException e) {
                    throw new IllegalStateException(
                            what + ": a client failed: " + e.getCause(), e.getCause());
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
            if (!pool.awaitTermination(BenchGroup.CALL_SECONDS, TimeUnit.SECONDS)) {
                System.err.println(what + ": a client thread did not stop");
            }
        }
    }

    private static long sum(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).sum();
    }
}
