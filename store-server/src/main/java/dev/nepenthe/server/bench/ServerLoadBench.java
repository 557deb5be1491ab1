package dev.nepenthe.server.bench;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Durability;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.server.grpc.NepentheServer;
import dev.nepenthe.testing.Datasets;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The server under load on loopback: search throughput and latency percentiles with 1, 8 and 32
 * concurrent clients (each its own channel), the same while forgets run, and the embedded call at
 * one client for the server's overhead. Every run is bounded in time and in count; clients and
 * server share this machine's cores, so the figures are the whole system's.
 *
 * <pre>
 * ./nepenthe bench server-load [n=100000] [dim=384] [clients=1,8,32] [seconds=15] [k=10] [ef=64]
 *     [index=hnsw] [forgets-per-second=1] [max-requests=2000000] [seed=7]
 * </pre>
 *
 * The query cache is off (the queries repeat from a pool of 1,000, so it would measure the cache);
 * a forget removes the ten records of one subject through the server's Forget service.
 */
public final class ServerLoadBench {

    private ServerLoadBench() {}

    /** One measured phase. */
    record Result(
            String what,
            int clients,
            long requests,
            double seconds,
            double qps,
            double p50ms,
            double p99ms,
            int forgets) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> o =
                new LinkedHashMap<>(
                        Map.of(
                                "n",
                                "100000",
                                "dim",
                                "384",
                                "clients",
                                "1,8,32",
                                "seconds",
                                "15",
                                "k",
                                "10",
                                "ef",
                                "64",
                                "index",
                                "hnsw",
                                "forgets-per-second",
                                "1",
                                "max-requests",
                                "2000000",
                                "seed",
                                "7"));
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq < 0 || !o.containsKey(a.substring(0, eq))) {
                System.err.println(
                        "server-load: expected key=value with a key among "
                                + o.keySet()
                                + ", got '"
                                + a
                                + "'");
                System.exit(2);
            }
            o.put(a.substring(0, eq), a.substring(eq + 1));
        }
        int n = Integer.parseInt(o.get("n"));
        int dim = Integer.parseInt(o.get("dim"));
        int seconds = Integer.parseInt(o.get("seconds"));
        int k = Integer.parseInt(o.get("k"));
        long maxRequests = Long.parseLong(o.get("max-requests"));
        double forgetsPerSecond = Double.parseDouble(o.get("forgets-per-second"));
        int[] clients =
                Arrays.stream(o.get("clients").split(",")).mapToInt(Integer::parseInt).toArray();
        Path dir = Files.createTempDirectory("nepenthe-server-load");
        float[][] data = Datasets.clustered(Long.parseLong(o.get("seed")), n + 1000, dim, 100, 0.3);
        float[][] queries = Arrays.copyOfRange(data, n, n + 1000);

        System.out.printf(
                "### Server load: n=%d, d=%d, %s (ef %s), k=%d, %d s per phase, loopback,"
                        + " plaintext%n%n",
                n, dim, o.get("index"), o.get("ef"), k, seconds);
        System.out.printf(
                "Machine: %d cores (shared), %s %s; load average at start %.2f%n%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.name"),
                System.getProperty("java.version"),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());

        StoreOptions options =
                StoreOptions.defaults()
                        .withKeystore(dir.resolve("keys"))
                        .withDurability(Durability.ASYNC);
        Nepenthe store = Nepenthe.open(dir.resolve("data"), options);
        IndexSpec index =
                o.get("index").equals("exact")
                        ? IndexSpec.exact()
                        : IndexSpec.of(o.get("index"), Map.of());
        VectorCollection c =
                store.createCollection(
                        CollectionSpec.of("load", dim, Metric.COSINE).withIndex(index));
        long t0 = System.nanoTime();
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(
                    VectorRecord.builder("r" + i).subject("s" + (i / 10)).vector(data[i]).build());
            if (batch.size() == 5000) {
                c.upsertAll(batch);
                batch.clear();
            }
        }
        c.upsertAll(batch);
        System.out.printf("Loaded %d records in %.1f s.%n%n", n, (System.nanoTime() - t0) / 1e9);

        Path tokens = dir.resolve("server").resolve("tokens.conf");
        Path tokenFile = dir.resolve("server").resolve("operator.token");
        NepentheServer.bootstrapTokens(tokens, tokenFile);
        String token = Files.readString(tokenFile).strip();
        // Every client here is the one token: its calls in flight may reach the most clients (and
        // the forgetter), where the defaults would refuse a token's seventeenth.
        int calls = Math.max(64, Arrays.stream(clients).max().orElse(1) + 8);
        NepentheServer server =
                NepentheServer.start(
                        store,
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(tokens)
                                .queryCache(0, 0)
                                .callsInFlight(calls, calls, calls));
        List<Result> results = new ArrayList<>();
        AtomicInteger nextSubject = new AtomicInteger();
        try {
            // Warm the JIT on both paths first; these runs are not reported.
            embedded(c, queries, k, o.get("ef"), Math.max(2, seconds / 3), maxRequests);
            overServer(
                    server.port(),
                    token,
                    queries,
                    k,
                    o.get("ef"),
                    2,
                    Math.max(2, seconds / 3),
                    maxRequests,
                    0,
                    nextSubject);
            results.add(embedded(c, queries, k, o.get("ef"), seconds, maxRequests));
            // Every client count without forgets, then every one with them.
            for (double forgets : new double[] {0, forgetsPerSecond}) {
                for (int clientCount : clients) {
                    results.add(
                            overServer(
                                    server.port(),
                                    token,
                                    queries,
                                    k,
                                    o.get("ef"),
                                    clientCount,
                                    seconds,
                                    maxRequests,
                                    forgets,
                                    nextSubject));
                }
            }
        } finally {
            server.close();
            store.close();
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        System.out.println("| phase | clients | requests | QPS | p50 (ms) | p99 (ms) | forgets |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|");
        for (Result r : results) {
            System.out.printf(
                    "| %s | %d | %d | %.0f | %.2f | %.2f | %d |%n",
                    r.what(),
                    r.clients(),
                    r.requests(),
                    r.qps(),
                    r.p50ms(),
                    r.p99ms(),
                    r.forgets());
        }
        Result emb = results.get(0);
        results.stream()
                .filter(r -> r.what().equals("server") && r.clients() == 1)
                .findFirst()
                .ifPresent(
                        s ->
                                System.out.printf(
                                        "%nServer against embedded at 1 client: %.2fx the QPS, p50"
                                                + " %.2f ms against %.2f ms.%n",
                                        s.qps() / emb.qps(), s.p50ms(), emb.p50ms()));
        System.out.printf(
                "Load average at the end %.2f.%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    private static Result embedded(
            VectorCollection c, float[][] queries, int k, String ef, int seconds, long max) {
        long[] lat = new long[(int) Math.min(max, 5_000_000)];
        int count = 0;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long start = System.nanoTime();
        while (System.nanoTime() < end && count < lat.length) {
            dev.nepenthe.core.SearchRequest q =
                    dev.nepenthe.core.SearchRequest.of(queries[count % queries.length], k)
                            .param("efSearch", Integer.parseInt(ef));
            long s = System.nanoTime();
            c.search(q);
            lat[count++] = System.nanoTime() - s;
        }
        double secs = (System.nanoTime() - start) / 1e9;
        return summarize("embedded", 1, Arrays.copyOf(lat, count), secs, 0);
    }

    private static Result overServer(
            int port,
            String token,
            float[][] queries,
            int k,
            String ef,
            int clients,
            int seconds,
            long max,
            double forgetsPerSecond,
            AtomicInteger nextSubject)
            throws Exception {
        Metadata auth = new Metadata();
        auth.put(
                Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + token);
        List<ManagedChannel> channels = new ArrayList<>();
        List<long[]> perClient = new ArrayList<>();
        int[] counts = new int[clients];
        AtomicBoolean stop = new AtomicBoolean();
        long perClientMax = Math.max(1, max / clients);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < clients; t++) {
            ManagedChannel ch =
                    NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            channels.add(ch);
            var stub =
                    RecordsGrpc.newBlockingStub(ch)
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth));
            long[] lat = new long[(int) Math.min(perClientMax, 2_000_000)];
            perClient.add(lat);
            int id = t;
            threads.add(
                    Thread.ofPlatform()
                            .name("load-client-" + t)
                            .unstarted(
                                    () -> {
                                        int i = 0;
                                        while (!stop.get() && i < lat.length) {
                                            float[] v = queries[(i * 31 + id * 7) % queries.length];
                                            SearchRequest.Builder b =
                                                    SearchRequest.newBuilder()
                                                            .setCollection("load")
                                                            .setK(k)
                                                            .putParams("efSearch", ef);
                                            for (float x : v) {
                                                b.addVector(x);
                                            }
                                            long s = System.nanoTime();
                                            stub.search(b.build());
                                            lat[i++] = System.nanoTime() - s;
                                        }
                                        counts[id] = i;
                                    }));
        }
        // Warm the connections and the JIT on the server path before measuring.
        for (ManagedChannel ch : channels) {
            ch.getState(true);
        }
        AtomicInteger forgets = new AtomicInteger();
        Thread forgetter = null;
        if (forgetsPerSecond > 0) {
            ManagedChannel ch =
                    NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            channels.add(ch);
            var forget =
                    ForgetGrpc.newBlockingStub(ch)
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth));
            long pause = (long) (1000 / forgetsPerSecond);
            forgetter =
                    Thread.ofPlatform()
                            .name("load-forgetter")
                            .unstarted(
                                    () -> {
                                        while (!stop.get()) {
                                            int s = nextSubject.getAndIncrement();
                                            try {
                                                forget.forget(
                                                        ForgetRequest.newBuilder()
                                                                .setScope(
                                                                        ForgetScope.newBuilder()
                                                                                .setSubject(
                                                                                        "s" + s))
                                                                .setIdempotencyKey("load-" + s)
                                                                .setReasonCode("load-test")
                                                                .build());
                                            } catch (StatusRuntimeException e) {
                                                if (stop.get()) {
                                                    return; // the phase ended while this forget was
                                                    // in flight
                                                }
                                                throw e;
                                            }
                                            forgets.incrementAndGet();
                                            try {
                                                Thread.sleep(pause);
                                            } catch (InterruptedException e) {
                                                return;
                                            }
                                        }
                                    });
        }
        long start = System.nanoTime();
        threads.forEach(Thread::start);
        if (forgetter != null) {
            forgetter.start();
        }
        Thread.sleep(seconds * 1000L);
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        double secs = (System.nanoTime() - start) / 1e9;
        if (forgetter != null) {
            forgetter.interrupt();
            forgetter.join();
        }
        for (ManagedChannel ch : channels) {
            ch.shutdownNow();
        }
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int at = 0;
        for (int t = 0; t < clients; t++) {
            System.arraycopy(perClient.get(t), 0, all, at, counts[t]);
            at += counts[t];
        }
        return summarize(
                forgetsPerSecond > 0 ? "server, forgets running" : "server",
                clients,
                all,
                secs,
                forgets.get());
    }

    private static Result summarize(
            String what, int clients, long[] lat, double seconds, int forgets) {
        Arrays.sort(lat);
        double p50 = lat.length == 0 ? Double.NaN : lat[(int) (lat.length * 0.50)] / 1e6;
        double p99 =
                lat.length == 0
                        ? Double.NaN
                        : lat[Math.min(lat.length - 1, (int) (lat.length * 0.99))] / 1e6;
        return new Result(
                what, clients, lat.length, seconds, lat.length / seconds, p50, p99, forgets);
    }
}
