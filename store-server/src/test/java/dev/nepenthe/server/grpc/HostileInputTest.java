package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
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
 * byte for byte, by a digest over every record taken before and after.
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
        Tokens.writeOwnerOnly(tokens, Tokens.line(operator, "ops", true) + "\n" + Tokens.line(acme, "acme", false) + "\n"
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

    /** SHA-256 over every record of every tenant: ids, subjects, vectors (bits), text, metadata. */
    private static String digest(Nepenthe store) throws Exception {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        for (String name : store.collections().stream().map(CollectionSpec::name).sorted().toList()) {
            VectorCollection c = store.collection(name);
            for (String tenant : store.tenants()) {
                for (String id : c.ids(tenant).stream().sorted().toList()) {
                    VectorRecord r = c.get(tenant, id).orElseThrow();
                    d.update((name + "\0" + tenant + "\0" + id + "\0" + r.subject() + "\0" + r.text() + "\0"
                            + new TreeMap<>(r.metadata())).getBytes(StandardCharsets.UTF_8));
                    for (float f : r.vector()) {
                        int bits = Float.floatToRawIntBits(f);
                        d.update(new byte[] {(byte) (bits >>> 24), (byte) (bits >>> 16), (byte) (bits >>> 8), (byte) bits});
                    }
                }
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }
}
