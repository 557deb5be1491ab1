package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A served store for hostile-input tests: collection "notes" (4 dimensions, cosine) with 200
 * records of tenant acme and 50 of globex, tokens for an operator, acme, globex and two of the
 * tenant mallory (who holds no data and attacks), the server on a free loopback port, and a channel
 * to it. {@link #close} stops the server, reopens the store and checks that the digest of every
 * record is the one taken before the server started.
 */
final class HostileServer implements AutoCloseable {

    /**
     * How long a call of a tenant that is not attacking may take: a search of 250 records takes
     * milliseconds; 10 s allows for a loaded 2-core machine.
     */
    static final long SERVED_WITHIN_SECONDS = 10;

    final String operator = Tokens.newToken();
    final String acme = Tokens.newToken();
    final String globex = Tokens.newToken();
    final String mallory = Tokens.newToken();
    final String mallory2 = Tokens.newToken();
    final Nepenthe store;
    final NepentheServer server;
    final ManagedChannel channel;
    private final Path dir;
    private final String before;

    HostileServer(Path dir, long seed, Limits limits) throws Exception {
        this.dir = dir;
        SplittableRandom rnd = new SplittableRandom(seed);
        Path tokens = dir.resolve("tokens.conf");
        Tokens.writeOwnerOnly(
                tokens,
                Tokens.line(operator, "ops", true)
                        + "\n"
                        + Tokens.line(acme, "acme", false)
                        + "\n"
                        + Tokens.line(globex, "globex", false)
                        + "\n"
                        + Tokens.line(mallory, "mallory", false)
                        + "\n"
                        + Tokens.line(mallory2, "mallory", false)
                        + "\n");
        store = open(dir);
        VectorCollection notes =
                store.createCollection(CollectionSpec.of("notes", 4, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 250; i++) {
            batch.add(
                    VectorRecord.builder("r" + i)
                            .tenant(i < 200 ? "acme" : "globex")
                            .subject("s" + (i % 7))
                            .vector(
                                    new float[] {
                                        rnd.nextFloat() + 0.01f,
                                        rnd.nextFloat(),
                                        rnd.nextFloat(),
                                        rnd.nextFloat()
                                    })
                            .text("note " + i)
                            .metadata("n", (long) i)
                            .build());
        }
        notes.upsertAll(batch);
        before = digest(store);
        server =
                NepentheServer.start(
                        store,
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(tokens)
                                .limits(limits));
        channel =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                        .usePlaintext()
                        .maxInboundMessageSize(1 << 20)
                        .build();
    }

    private static Nepenthe open(Path dir) throws java.io.IOException {
        return Nepenthe.open(
                dir.resolve("data"), StoreOptions.defaults().withKeystore(dir.resolve("keys")));
    }

    /**
     * The limits of the hostile tests: the defaults' shape, smaller, and a 5 s request idle time.
     */
    static Limits attackLimits() {
        return new Limits(
                        32 << 20,
                        100,
                        100,
                        1000,
                        64,
                        8,
                        5,
                        1000,
                        1L << 20,
                        Limits.Calls.DEFAULTS,
                        Limits.Queries.DEFAULTS)
                .withCalls(
                        new Limits.Calls(64, 24, 16, 48L << 20, 32L << 20, 5, 300, 0, 0, 60, 128));
    }

    /** Request and response bodies as raw bytes, so that a test can send what no stub would. */
    static final io.grpc.MethodDescriptor.Marshaller<byte[]> BYTES =
            new io.grpc.MethodDescriptor.Marshaller<>() {
                @Override
                public java.io.InputStream stream(byte[] value) {
                    return new java.io.ByteArrayInputStream(value);
                }

                @Override
                public byte[] parse(java.io.InputStream stream) {
                    try {
                        return stream.readAllBytes();
                    } catch (java.io.IOException e) {
                        throw new IllegalStateException(e);
                    }
                }
            };

    static Metadata auth(String token) {
        Metadata md = new Metadata();
        md.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
        return md;
    }

    RecordsGrpc.RecordsBlockingStub records(String token) {
        return RecordsGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth(token)));
    }

    /**
     * A tenant that is not attacking is answered, correctly, within {@link #SERVED_WITHIN_SECONDS}.
     */
    void assertServed(String token, String who) {
        var hits =
                records(token)
                        .withDeadlineAfter(SERVED_WITHIN_SECONDS, TimeUnit.SECONDS)
                        .search(
                                SearchRequest.newBuilder()
                                        .setCollection("notes")
                                        .setK(3)
                                        .addVector(1)
                                        .addVector(0)
                                        .addVector(0)
                                        .addVector(0)
                                        .build());
        assertEquals(3, hits.getHitsCount(), who + " is still answered");
    }

    void assertUp() {
        HealthCheckResponse health =
                HealthGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(SERVED_WITHIN_SECONDS, TimeUnit.SECONDS)
                        .check(HealthCheckRequest.getDefaultInstance());
        assertEquals(
                HealthCheckResponse.ServingStatus.SERVING,
                health.getStatus(),
                "the server is still up");
    }

    @Override
    public void close() throws IOException {
        try {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while closing the channel", e);
        } finally {
            server.close();
        }
        try (Nepenthe reopened = open(dir)) {
            assertEquals(before, digest(reopened), "the stored records are unchanged");
        }
    }

    /** SHA-256 over every record of every tenant: ids, subjects, vectors (bits), text, metadata. */
    static String digest(Nepenthe store) {
        MessageDigest d;
        try {
            d = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("every JDK has SHA-256", e);
        }
        for (String name :
                store.collections().stream().map(CollectionSpec::name).sorted().toList()) {
            VectorCollection c = store.collection(name);
            for (String tenant : store.tenants()) {
                for (String id : c.ids(tenant).stream().sorted().toList()) {
                    VectorRecord r = c.get(tenant, id).orElseThrow();
                    d.update(
                            (name
                                            + "\0"
                                            + tenant
                                            + "\0"
                                            + id
                                            + "\0"
                                            + r.subject()
                                            + "\0"
                                            + r.text()
                                            + "\0"
                                            + new TreeMap<>(r.metadata()))
                                    .getBytes(StandardCharsets.UTF_8));
                    for (float f : r.vector()) {
                        int bits = Float.floatToRawIntBits(f);
                        d.update(
                                new byte[] {
                                    (byte) (bits >>> 24),
                                    (byte) (bits >>> 16),
                                    (byte) (bits >>> 8),
                                    (byte) bits
                                });
                    }
                }
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }
}
