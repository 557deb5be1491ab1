package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.testing.Seeds;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input over the real transport (Netty on loopback): 10,000 requests, bounded in count
 * and time, each one of: random or truncated bytes as a request body to any method, a missing,
 * wrong or other tenant's token, wrong dimensions, NaN, a huge k, an oversized message, an
 * unknown collection. Each must end with a status a caller can act on (never INTERNAL, UNKNOWN
 * or a dropped connection), the server must stay up, and the stored records must be unchanged,
 * byte for byte, by a digest over every record taken before and after. Then the bounds on what
 * one query may ask (filters, knobs, huge vectors) and the refusal of plaintext beyond loopback.
 * The bounds on calls themselves (half-sent calls, bytes arriving, stream slots) are in
 * {@link HostileCallsTest}.
 */
class HostileInputTest {

    private static final int REQUESTS = 10_000;
    private static final long TIME_BOUND_SECONDS = 240;
    private static final Set<Status.Code> CLEAR = Set.of(Status.Code.OK, Status.Code.INVALID_ARGUMENT,
            Status.Code.NOT_FOUND, Status.Code.UNAUTHENTICATED, Status.Code.PERMISSION_DENIED,
            Status.Code.RESOURCE_EXHAUSTED, Status.Code.FAILED_PRECONDITION, Status.Code.UNIMPLEMENTED,
            Status.Code.ALREADY_EXISTS, Status.Code.DEADLINE_EXCEEDED);

    @TempDir
    Path tmp;

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };

    @Test
    void tenThousandHostileRequestsLeaveTheServerUpAndTheDataUnchanged() throws Exception {
        long seed = Seeds.draw("HostileInputTest");
        SplittableRandom rnd = new SplittableRandom(seed);
        String operator = Tokens.newToken();
        String acme = Tokens.newToken();
        String globex = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Files.writeString(tokens, Tokens.line(operator, "ops", true) + "\n" + Tokens.line(acme, "acme", false) + "\n"
                + Tokens.line(globex, "globex", false) + "\n");
        Nepenthe store = Nepenthe.open(tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        VectorCollection notes = store.createCollection(CollectionSpec.of("notes", 4, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(VectorRecord.builder("r" + i).tenant("acme").subject("s" + (i % 7))
                    .vector(new float[] {rnd.nextFloat() + 0.01f, rnd.nextFloat(), rnd.nextFloat(), rnd.nextFloat()})
                    .text("note " + i).metadata("n", (long) i).build());
        }
        notes.upsertAll(batch);
        String before = digest(store);

        NepentheServer server = NepentheServer.start(store, new NepentheServer.Options().listen("127.0.0.1", 0)
                .tokens(tokens).limits(new Limits(64 << 10, 100, 100, 1000, 64, 4, 5, 1000, 1L << 20)));
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                .maxInboundMessageSize(1 << 20).build();
        List<MethodDescriptor<?, ?>> methods = new ArrayList<>();
        for (io.grpc.ServiceDescriptor sd : List.of(CollectionsGrpc.getServiceDescriptor(), RecordsGrpc.getServiceDescriptor(),
                ForgetGrpc.getServiceDescriptor(), AdminGrpc.getServiceDescriptor())) {
            methods.addAll(sd.getMethods());
        }
        Map<Status.Code, Integer> seen = new EnumMap<>(Status.Code.class);
        Map<String, String> unclear = new TreeMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIME_BOUND_SECONDS);
        int sent = 0;
        try {
            for (; sent < REQUESTS && System.nanoTime() < deadline; sent++) {
                MethodDescriptor<?, ?> m = methods.get(rnd.nextInt(methods.size()));
                String token = switch (rnd.nextInt(4)) {
                    case 0 -> null;
                    case 1 -> "wrong-" + Long.toHexString(rnd.nextLong());
                    // Random bodies go out with a tenant token that holds no data, so that no
                    // accident of the random bytes can write or forget the data under test.
                    default -> globex;
                };
                byte[] body;
                int kind = rnd.nextInt(6);
                if (kind < 3) {
                    body = new byte[rnd.nextInt(300)];
                    rnd.nextBytes(body);
                } else if (kind == 3) {
                    byte[] valid = SearchRequest.newBuilder().setCollection("notes").setK(5).addVector(1).addVector(0)
                            .addVector(0).addVector(0).build().toByteArray();
                    body = java.util.Arrays.copyOf(valid, rnd.nextInt(valid.length + 1));
                } else {
                    // Structured but wrong, with the data tenant's own token: refused, nothing stored.
                    token = acme;
                    m = RecordsGrpc.getUpsertMethod();
                    body = hostileUpsert(rnd).toByteArray();
                }
                Status.Code code = call(channel, m, token, body);
                seen.merge(code, 1, Integer::sum);
                if (!CLEAR.contains(code)) {
                    unclear.putIfAbsent(code + " " + m.getFullMethodName(), HexFormat.of().formatHex(body, 0,
                            Math.min(body.length, 32)));
                }
            }
            // Read-only hostile calls with the data tenant's token.
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, call(channel, RecordsGrpc.getSearchMethod(), acme,
                    SearchRequest.newBuilder().setCollection("notes").setK(1_000_000).addVector(1).addVector(0)
                            .addVector(0).addVector(0).build().toByteArray()));
            assertEquals(Status.Code.NOT_FOUND, call(channel, RecordsGrpc.getGetMethod(), acme,
                    GetRequest.newBuilder().setCollection("no-such").setId("r1").build().toByteArray()));
            byte[] oversized = UpsertRequest.newBuilder().setCollection("notes").addRecords(Record.newBuilder()
                    .setId("big").addVector(1).addVector(0).addVector(0).addVector(0).setText("x".repeat(100_000))).build()
                    .toByteArray();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, call(channel, RecordsGrpc.getUpsertMethod(), acme, oversized));

            System.out.println("[hostile] seed " + seed + ": " + sent + " requests, statuses " + seen);
            assertTrue(unclear.isEmpty(), "statuses a caller cannot act on (seed " + seed + "): " + unclear);
            assertTrue(sent >= 2_000, "only " + sent + " requests within " + TIME_BOUND_SECONDS + " s");
            HealthCheckResponse health = HealthGrpc.newBlockingStub(channel).check(HealthCheckRequest.getDefaultInstance());
            assertEquals(HealthCheckResponse.ServingStatus.SERVING, health.getStatus(), "the server is still up");
            var hits = RecordsGrpc.newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(
                    auth(acme))).search(SearchRequest.newBuilder().setCollection("notes").setK(3).addVector(1)
                    .addVector(0).addVector(0).addVector(0).build());
            assertEquals(3, hits.getHitsCount(), "and still answers");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
        try (Nepenthe reopened = Nepenthe.open(tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            assertEquals(before, digest(reopened), "the stored records are unchanged (seed " + seed + ")");
        }
    }


    /** A search of notes with this filter and these knobs, as acme. */
    private static Status search(HostileServer h, dev.nepenthe.grpc.v1.Filter filter, Map<String, String> params,
            float... vector) {
        SearchRequest.Builder q = SearchRequest.newBuilder().setCollection("notes").setK(3).putAllParams(params);
        for (float x : vector.length == 0 ? new float[] {1, 0, 0, 0} : vector) {
            q.addVector(x);
        }
        if (filter != null) {
            q.setFilter(filter);
        }
        try {
            h.records(h.acme).withDeadlineAfter(60, TimeUnit.SECONDS).search(q.build());
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }

    private static dev.nepenthe.grpc.v1.Filter ranges(int n) {
        dev.nepenthe.grpc.v1.Filter.Any.Builder any = dev.nepenthe.grpc.v1.Filter.Any.newBuilder();
        for (int i = 0; i < n; i++) {
            any.addFilters(dev.nepenthe.grpc.v1.Filter.newBuilder().setRange(dev.nepenthe.grpc.v1.Filter.Range.newBuilder()
                    .setKey("n").setMin(i).setMax(i + 0.5)));
        }
        return dev.nepenthe.grpc.v1.Filter.newBuilder().setAny(any).build();
    }

    private static void assertExhausted(Status s, String description) {
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s.toString());
        assertEquals(description, s.getDescription());
    }

    /**
     * Filters and knobs are bounded (the defaults: 1,024 terms, 32 deep, 16,384 keyed hashes; 16
     * knobs, efSearch 4,096, window 10,000): each refusal names the limit and the value received;
     * a filter just within the hash bound is answered, and matches what the store answers. A
     * forget's metadata scope is held to the same bounds. Vectors of huge finite components are
     * refused, stored or queried, by the store's own check. Globex is served throughout and no
     * record changes.
     */
    @Test
    void filtersKnobsAndHugeVectorsAreBounded() throws Exception {
        long seed = Seeds.draw("HostileInputTest.queries");
        try (HostileServer h = new HostileServer(tmp, seed, HostileServer.attackLimits())) {
            assertExhausted(search(h, ranges(1_000_000), Map.of()), "filter: filter terms: expected at most 1024, got"
                    + " 1000001");
            assertExhausted(search(h, ranges(18), Map.of()), "filter: filter cost in keyed hashes (1 per eq or exists,"
                    + " 1 per in value, 960 per range): expected at most 16384, got 17280");
            // 17 ranges cost 16,320 hashes: answered, and exactly as the store answers.
            assertEquals(Status.Code.OK, search(h, ranges(17), Map.of()).getCode());
            var within = h.records(h.acme).search(SearchRequest.newBuilder().setCollection("notes").setK(3).addVector(1)
                    .addVector(0).addVector(0).addVector(0).setFilter(ranges(17)).build());
            var expected = h.store.collection("notes").search(new dev.nepenthe.core.SearchRequest(new float[] {1, 0, 0, 0},
                    3, "acme", null, Protos.filter(ranges(17), "filter"), dev.nepenthe.core.index.SearchParams.DEFAULTS));
            assertEquals(expected.stream().map(dev.nepenthe.core.SearchHit::id).toList(),
                    within.getHitsList().stream().map(x -> x.getRecord().getId()).toList());

            dev.nepenthe.grpc.v1.Filter.In.Builder in = dev.nepenthe.grpc.v1.Filter.In.newBuilder().setKey("doc");
            for (int i = 0; i < 20_000; i++) {
                in.addValues(dev.nepenthe.grpc.v1.Value.newBuilder().setStringValue("d" + i));
            }
            assertExhausted(search(h, dev.nepenthe.grpc.v1.Filter.newBuilder().setIn(in).build(), Map.of()),
                    "filter: filter cost in keyed hashes (1 per eq or exists, 1 per in value, 960 per range): expected"
                    + " at most 16384, got 20000");
            dev.nepenthe.grpc.v1.Filter deep = dev.nepenthe.grpc.v1.Filter.newBuilder().setExists(
                    dev.nepenthe.grpc.v1.Filter.Exists.newBuilder().setKey("n")).build();
            for (int i = 0; i < 40; i++) {
                deep = dev.nepenthe.grpc.v1.Filter.newBuilder().setNot(dev.nepenthe.grpc.v1.Filter.Not.newBuilder()
                        .setFilter(deep)).build();
            }
            assertExhausted(search(h, deep, Map.of()), "filter: filter nesting (not, all, any): expected at most 32,"
                    + " got 33");
            assertExhausted(search(h, null, Map.of("efSearch", "1000000")), "params 'efSearch': expected at most 4096,"
                    + " got 1000000");
            assertExhausted(search(h, null, Map.of("window", "20000")), "params 'window': expected at most 10000, got"
                    + " 20000");
            Map<String, String> many = new TreeMap<>();
            for (int i = 0; i < 17; i++) {
                many.put("knob" + i, "1");
            }
            assertExhausted(search(h, null, many), "params: search knobs: expected at most 16, got 17");
            assertEquals(Status.Code.OK, search(h, null, Map.of("efSearch", "4096", "nprobe", "64")).getCode());

            var forget = ForgetGrpc.newBlockingStub(h.channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(
                    HostileServer.auth(h.acme)));
            StatusRuntimeException f = assertThrows(StatusRuntimeException.class, () -> forget.forget(
                    dev.nepenthe.grpc.v1.ForgetRequest.newBuilder().setScope(dev.nepenthe.grpc.v1.ForgetScope.newBuilder()
                            .setMetadata(ranges(5_000))).setReasonCode("test").setIdempotencyKey("k1").build()));
            assertExhausted(f.getStatus(), "scope.metadata: filter terms: expected at most 1024, got 5001");

            // Huge finite components: refused in a dot-product collection, stored or queried.
            CollectionsGrpc.newBlockingStub(h.channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(
                    HostileServer.auth(h.operator))).create(dev.nepenthe.grpc.v1.CreateCollectionRequest.newBuilder()
                    .setSpec(dev.nepenthe.grpc.v1.CollectionSpec.newBuilder().setName("dots").setDimension(4)
                            .setMetric(dev.nepenthe.grpc.v1.Metric.DOT)).build());
            StatusRuntimeException stored = assertThrows(StatusRuntimeException.class, () -> h.records(h.acme).upsert(
                    UpsertRequest.newBuilder().setCollection("dots").addRecords(Record.newBuilder().setId("huge")
                            .addVector(3e38f).addVector(0).addVector(0).addVector(0)).build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, stored.getStatus().getCode());
            assertTrue(stored.getStatus().getDescription().startsWith("record 0 of the batch: expected a vector whose"
                    + " squared norm is at most 4.254e+37"), stored.getStatus().getDescription());
            Status query = search(h, null, Map.of(), 0, 3e38f, 0, 0);
            assertEquals(Status.Code.INVALID_ARGUMENT, query.getCode(), query.toString());
            assertTrue(query.getDescription().startsWith("query: expected a vector whose squared norm"),
                    query.getDescription());

            h.assertServed(h.globex, "globex");
            h.assertUp();
        }
    }

    /**
     * Plaintext beyond loopback is refused unless the operator passes the loudly named flag: by
     * the server (naming the flag and the address) and by {@code nepenthe serve}, which refuses
     * before it creates the data folder. The refused address is 192.0.2.1 (TEST-NET-1, never
     * this machine's), so that a refusal that failed to happen could not bind a network port.
     */
    @Test
    void plaintextBeyondLoopbackIsRefusedUnlessTheOperatorSaysSo() throws Exception {
        for (String loopback : List.of("127.0.0.1", "127.0.0.2", "localhost", "::1")) {
            NepentheServer.checkPlaintext(loopback, false, false);
        }
        IllegalArgumentException any = assertThrows(IllegalArgumentException.class,
                () -> NepentheServer.checkPlaintext("0.0.0.0", false, false));
        assertTrue(any.getMessage().startsWith("--host 0.0.0.0: expected a loopback address for a server without TLS,"
                + " got 0.0.0.0"), any.getMessage());
        assertTrue(any.getMessage().contains("--insecure-plaintext-on-network"), any.getMessage());
        NepentheServer.checkPlaintext("0.0.0.0", true, false);
        NepentheServer.checkPlaintext("0.0.0.0", false, true);

        Path tokens = tmp.resolve("tokens.conf");
        Files.writeString(tokens, Tokens.line(Tokens.newToken(), "acme", false) + "\n");
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            IllegalArgumentException server = assertThrows(IllegalArgumentException.class, () -> NepentheServer.start(
                    store, new NepentheServer.Options().listen("192.0.2.1", 0).tokens(tokens)));
            assertTrue(server.getMessage().contains("--insecure-plaintext-on-network"), server.getMessage());
        }
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine cl = dev.nepenthe.server.Main.commandLine();
        cl.setErr(new java.io.PrintWriter(err, true));
        Path folder = tmp.resolve("never-created");
        int exit = cl.execute("serve", "--data", folder.toString(), "--host", "192.0.2.1", "--port", "0");
        assertEquals(2, exit, err.toString());
        assertTrue(err.toString().contains("--host 192.0.2.1: expected a loopback address for a server without TLS")
                && err.toString().contains("pass --insecure-plaintext-on-network"), err.toString());
        assertFalse(Files.exists(folder), "refused before the store was opened");
    }

    /** A batch that must be refused: wrong dimension, NaN, infinity, no vector, or a blank id. */
    private static UpsertRequest hostileUpsert(SplittableRandom rnd) {
        Record.Builder r = Record.newBuilder().setId("h" + rnd.nextInt(1000)).setSubject("s1");
        switch (rnd.nextInt(5)) {
            case 0 -> r.addVector(1).addVector(2).addVector(3);
            case 1 -> r.addVector(1).addVector(Float.NaN).addVector(0).addVector(0);
            case 2 -> r.addVector(Float.POSITIVE_INFINITY).addVector(0).addVector(0).addVector(0);
            case 3 -> { }
            default -> r.setId(" ").addVector(1).addVector(0).addVector(0).addVector(0);
        }
        return UpsertRequest.newBuilder().setCollection(rnd.nextBoolean() ? "notes" : "nope").addRecords(r).build();
    }

    private static Metadata auth(String token) {
        Metadata md = new Metadata();
        md.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
        return md;
    }

    private static Status.Code call(ManagedChannel channel, MethodDescriptor<?, ?> m, String token, byte[] body) {
        MethodDescriptor<byte[], byte[]> raw = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(m.getType() == MethodDescriptor.MethodType.SERVER_STREAMING
                        ? MethodDescriptor.MethodType.SERVER_STREAMING : MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(m.getFullMethodName()).setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
        var ch = token == null ? channel
                : io.grpc.ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(auth(token)));
        CallOptions opts = CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS);
        try {
            if (raw.getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
                Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(ch, raw, opts, body);
                while (it.hasNext()) {
                    it.next();
                }
            } else {
                ClientCalls.blockingUnaryCall(ch, raw, opts, body);
            }
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    private static String digest(Nepenthe store) throws Exception {
        return HostileServer.digest(store);
    }
}
