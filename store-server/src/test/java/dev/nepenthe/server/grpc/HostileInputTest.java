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
import dev.nepenthe.grpc.v1.DropCollectionRequest;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.RestoreRequest;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.ServerStats;
import dev.nepenthe.grpc.v1.ServerStatsRequest;
import dev.nepenthe.grpc.v1.SnapshotRequest;
import dev.nepenthe.grpc.v1.TenantStats;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.VerifyLedgerRequest;
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
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
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
 * Hostile input over the real transport (Netty on loopback): 10,000 requests, bounded in count and
 * time, each one of: random or truncated bytes as a request body to any method, a missing, wrong or
 * other tenant's token, wrong dimensions, NaN, a huge k, an oversized message, an unknown
 * collection. Each must end with a status a caller can act on (never INTERNAL, UNKNOWN or a dropped
 * connection), the server must stay up, and the stored records must be unchanged, byte for byte, by
 * a digest over every record taken before and after. Then the bounds on what one query may ask
 * (filters, knobs, huge vectors) and the refusal of plaintext beyond loopback. The bounds on calls
 * themselves (half-sent calls, bytes arriving, stream slots) are in {@link HostileCallsTest}. A
 * last run does the same for hostile operators and token holders: paths out of the snapshot
 * folders, token edits while serving, and roles reaching past their own.
 */
class HostileInputTest {

    private static final int REQUESTS = 10_000;
    private static final long TIME_BOUND_SECONDS = 240;
    private static final Set<Status.Code> CLEAR =
            Set.of(
                    Status.Code.OK,
                    Status.Code.INVALID_ARGUMENT,
                    Status.Code.NOT_FOUND,
                    Status.Code.UNAUTHENTICATED,
                    Status.Code.PERMISSION_DENIED,
                    Status.Code.RESOURCE_EXHAUSTED,
                    Status.Code.FAILED_PRECONDITION,
                    Status.Code.UNIMPLEMENTED,
                    Status.Code.ALREADY_EXISTS,
                    Status.Code.DEADLINE_EXCEEDED);

    @TempDir Path tmp;

    private static final MethodDescriptor.Marshaller<byte[]> BYTES =
            new MethodDescriptor.Marshaller<>() {
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
        Tokens.writeOwnerOnly(
                tokens,
                Tokens.line(operator, "ops", true)
                        + "\n"
                        + Tokens.line(acme, "acme", false)
                        + "\n"
                        + Tokens.line(globex, "globex", false)
                        + "\n");
        Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        VectorCollection notes =
                store.createCollection(CollectionSpec.of("notes", 4, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(
                    VectorRecord.builder("r" + i)
                            .tenant("acme")
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
        String before = digest(store);

        NepentheServer server =
                NepentheServer.start(
                        store,
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(tokens)
                                .limits(
                                        new Limits(
                                                64 << 10,
                                                100,
                                                100,
                                                1000,
                                                64,
                                                4,
                                                5,
                                                1000,
                                                1L << 20,
                                                Limits.Calls.DEFAULTS,
                                                Limits.Queries.DEFAULTS)));
        ManagedChannel channel =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                        .usePlaintext()
                        .maxInboundMessageSize(1 << 20)
                        .build();
        List<MethodDescriptor<?, ?>> methods = new ArrayList<>();
        for (io.grpc.ServiceDescriptor sd :
                List.of(
                        CollectionsGrpc.getServiceDescriptor(),
                        RecordsGrpc.getServiceDescriptor(),
                        ForgetGrpc.getServiceDescriptor(),
                        AdminGrpc.getServiceDescriptor())) {
            methods.addAll(sd.getMethods());
        }
        Map<Status.Code, Integer> seen = new EnumMap<>(Status.Code.class);
        Map<String, String> unclear = new TreeMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIME_BOUND_SECONDS);
        int sent = 0;
        try {
            for (; sent < REQUESTS && System.nanoTime() < deadline; sent++) {
                MethodDescriptor<?, ?> m = methods.get(rnd.nextInt(methods.size()));
                String token =
                        switch (rnd.nextInt(4)) {
                            case 0 -> null;
                            case 1 -> "wrong-" + Long.toHexString(rnd.nextLong());
                            // Random bodies go out with a tenant token that holds no data, so that
                            // no
                            // accident of the random bytes can write or forget the data under test.
                            default -> globex;
                        };
                byte[] body;
                int kind = rnd.nextInt(6);
                if (kind < 3) {
                    body = new byte[rnd.nextInt(300)];
                    rnd.nextBytes(body);
                } else if (kind == 3) {
                    byte[] valid =
                            SearchRequest.newBuilder()
                                    .setCollection("notes")
                                    .setK(5)
                                    .addVector(1)
                                    .addVector(0)
                                    .addVector(0)
                                    .addVector(0)
                                    .build()
                                    .toByteArray();
                    body = java.util.Arrays.copyOf(valid, rnd.nextInt(valid.length + 1));
                } else {
                    // Structured but wrong, with the data tenant's own token: refused, nothing
                    // stored.
                    token = acme;
                    m = RecordsGrpc.getUpsertMethod();
                    body = hostileUpsert(rnd).toByteArray();
                }
                Status.Code code = call(channel, m, token, body);
                seen.merge(code, 1, Integer::sum);
                if (!CLEAR.contains(code)) {
                    unclear.putIfAbsent(
                            code + " " + m.getFullMethodName(),
                            HexFormat.of().formatHex(body, 0, Math.min(body.length, 32)));
                }
            }
            // Read-only hostile calls with the data tenant's token.
            assertEquals(
                    Status.Code.RESOURCE_EXHAUSTED,
                    call(
                            channel,
                            RecordsGrpc.getSearchMethod(),
                            acme,
                            SearchRequest.newBuilder()
                                    .setCollection("notes")
                                    .setK(1_000_000)
                                    .addVector(1)
                                    .addVector(0)
                                    .addVector(0)
                                    .addVector(0)
                                    .build()
                                    .toByteArray()));
            assertEquals(
                    Status.Code.NOT_FOUND,
                    call(
                            channel,
                            RecordsGrpc.getGetMethod(),
                            acme,
                            GetRequest.newBuilder()
                                    .setCollection("no-such")
                                    .setId("r1")
                                    .build()
                                    .toByteArray()));
            byte[] oversized =
                    UpsertRequest.newBuilder()
                            .setCollection("notes")
                            .addRecords(
                                    Record.newBuilder()
                                            .setId("big")
                                            .addVector(1)
                                            .addVector(0)
                                            .addVector(0)
                                            .addVector(0)
                                            .setText("x".repeat(100_000)))
                            .build()
                            .toByteArray();
            assertEquals(
                    Status.Code.RESOURCE_EXHAUSTED,
                    call(channel, RecordsGrpc.getUpsertMethod(), acme, oversized));

            System.out.println(
                    "[hostile] seed " + seed + ": " + sent + " requests, statuses " + seen);
            assertTrue(
                    unclear.isEmpty(),
                    "statuses a caller cannot act on (seed " + seed + "): " + unclear);
            assertTrue(
                    sent >= 2_000,
                    "only " + sent + " requests within " + TIME_BOUND_SECONDS + " s");
            HealthCheckResponse health =
                    HealthGrpc.newBlockingStub(channel)
                            .check(HealthCheckRequest.getDefaultInstance());
            assertEquals(
                    HealthCheckResponse.ServingStatus.SERVING,
                    health.getStatus(),
                    "the server is still up");
            var hits =
                    RecordsGrpc.newBlockingStub(channel)
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth(acme)))
                            .search(
                                    SearchRequest.newBuilder()
                                            .setCollection("notes")
                                            .setK(3)
                                            .addVector(1)
                                            .addVector(0)
                                            .addVector(0)
                                            .addVector(0)
                                            .build());
            assertEquals(3, hits.getHitsCount(), "and still answers");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
        try (Nepenthe reopened =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            assertEquals(
                    before,
                    digest(reopened),
                    "the stored records are unchanged (seed " + seed + ")");
        }
    }

    /**
     * Issue 47, careless or hostile operators and token holders, over the real transport: paths
     * that leave the snapshot folders (absolute, {@code ..}, through a link, a dangling link, a
     * link planted inside a snapshot, the served folder), a newline in a snapshot name, two
     * authorization headers, a token revoked and one added while the server runs, a tokens file
     * edited into a typo or opened to others, and each role reaching past its own. Each refusal is
     * checked by its status and by the file system (nothing written where it was refused); the
     * other tenant is served throughout, and a digest of every record is unchanged.
     */
    @Test
    void hostileOperatorsAndTokenEditsLeaveOtherTenantsServedAndTheDataUnchanged()
            throws Exception {
        String ops = Tokens.newToken();
        String acme = Tokens.newToken();
        String acmeAdmin = Tokens.newToken();
        String globex = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        // The store operator's line as older servers wrote it: 'operator' still means store
        // operator.
        String opsLine =
                "sha256:" + HexFormat.of().formatHex(Tokens.sha256(ops)) + " ops tenant,operator";
        String others =
                Tokens.line(acmeAdmin, "acme", Role.TENANT_ADMIN)
                        + "\n"
                        + Tokens.line(globex, "globex", false)
                        + "\n";
        Tokens.writeOwnerOnly(
                tokens, opsLine + "\n" + Tokens.line(acme, "acme", false) + "\n" + others);
        Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        VectorCollection notes =
                store.createCollection(CollectionSpec.of("notes", 4, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            batch.add(
                    VectorRecord.builder("r" + i)
                            .tenant(i < 50 ? "acme" : "globex")
                            .subject("s" + (i % 7))
                            .vector(new float[] {1 + i % 5, i % 3, i % 7, 1})
                            .text("note " + i)
                            .build());
        }
        notes.upsertAll(batch);
        String before = digest(store);
        Path snaps = tmp.resolve("snaps");
        Path outside = tmp.resolve("outside");
        Files.createDirectories(outside.resolve("fake").resolve("collections"));
        Files.writeString(outside.resolve("secret.txt"), "SECRET-OUTSIDE-THE-SNAPSHOT-FOLDERS");

        NepentheServer server =
                NepentheServer.start(
                        store,
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(tokens)
                                .snapshotDirs(List.of(snaps))
                                .limits(
                                        new Limits(
                                                64 << 10,
                                                100,
                                                100,
                                                1000,
                                                64,
                                                4,
                                                5,
                                                1000,
                                                1L << 20,
                                                Limits.Calls.DEFAULTS,
                                                Limits.Queries.DEFAULTS)));
        ManagedChannel channel =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        Path real = snaps.toRealPath();
        try {
            // 1. Snapshots and restores stay inside the snapshot folders, judged by real path.
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(() -> snapshot(channel, ops, outside.resolve("x").toString())));
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(() -> snapshot(channel, ops, snaps + "/../outside/y")));
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(() -> snapshot(channel, ops, "snaps/relative")));
            Files.createSymbolicLink(snaps.resolve("link"), outside);
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(
                            () ->
                                    snapshot(
                                            channel,
                                            ops,
                                            snaps.resolve("link").resolve("z").toString())));
            Files.createSymbolicLink(snaps.resolve("dangling"), outside.resolve("w"));
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(() -> snapshot(channel, ops, snaps.resolve("dangling").toString())));
            for (String refused : List.of("x", "y", "z", "w")) {
                assertFalse(
                        Files.exists(outside.resolve(refused)),
                        "nothing written outside: " + refused);
            }
            assertEquals(
                    real.resolve("good").toString(),
                    snapshot(channel, ops, snaps.resolve("good").toString()));
            // A newline in the name cannot forge a registry line: one line per snapshot of the one
            // collection.
            Path hostile = snaps.resolve("nl\n" + outside + "\tnotes\tforged\t9");
            Files.createDirectories(hostile.getParent());
            snapshot(channel, ops, hostile.toString());
            List<String> registry =
                    Files.readAllLines(tmp.resolve("keys").resolve("snapshots.registry"));
            assertEquals(2, registry.size(), registry.toString());
            assertTrue(registry.stream().allMatch(l -> l.startsWith("2\t")), registry.toString());
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(
                            () ->
                                    restore(
                                            channel,
                                            ops,
                                            snaps.resolve("link").resolve("fake").toString(),
                                            snaps.resolve("r1").toString())),
                    "a snapshot reached through a link to outside");
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(
                            () ->
                                    restore(
                                            channel,
                                            ops,
                                            snaps.resolve("good").toString(),
                                            snaps.resolve("link").resolve("r2").toString())),
                    "a target reached through a link to outside");
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(
                            () ->
                                    restore(
                                            channel,
                                            ops,
                                            snaps.resolve("good").toString(),
                                            tmp.resolve("data").toString())),
                    "the served folder");
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(
                            () ->
                                    restore(
                                            channel,
                                            ops,
                                            snaps.resolve("good").toString(),
                                            snaps.resolve("good").resolve("inner").toString())),
                    "a target inside the snapshot");
            Path planted =
                    snaps.resolve("good")
                            .resolve("collections")
                            .resolve("notes")
                            .resolve("segments")
                            .resolve("p");
            Files.createSymbolicLink(planted, outside.resolve("secret.txt"));
            assertEquals(
                    Status.Code.INVALID_ARGUMENT,
                    code(
                            () ->
                                    restore(
                                            channel,
                                            ops,
                                            snaps.resolve("good").toString(),
                                            snaps.resolve("r3").toString())),
                    "a link planted inside a snapshot");
            assertFalse(
                    Files.exists(snaps.resolve("r1"))
                            || Files.exists(outside.resolve("r2"))
                            || Files.exists(snaps.resolve("r3"))
                            || Files.exists(snaps.resolve("good").resolve("inner")),
                    "no refused restore wrote anything");
            Files.delete(planted);
            assertEquals(
                    real.resolve("r4").toString(),
                    restore(
                            channel,
                            ops,
                            snaps.resolve("good").toString(),
                            snaps.resolve("r4").toString()));
            try (Nepenthe restored =
                    Nepenthe.open(
                            snaps.resolve("r4"),
                            StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
                assertEquals(before, digest(restored), "the control: the snapshot restores whole");
            }
            // Without snapshot folders the calls are refused, naming the option.
            String bareName = "bare-" + System.nanoTime();
            try (NepentheServer _ =
                    NepentheServer.start(
                            io.grpc.inprocess.InProcessServerBuilder.forName(bareName),
                            store,
                            Tokens.read(tokens),
                            new Limits(
                                    64 << 10,
                                    100,
                                    100,
                                    1000,
                                    64,
                                    4,
                                    5,
                                    0,
                                    0,
                                    Limits.Calls.DEFAULTS,
                                    Limits.Queries.DEFAULTS),
                            false)) {
                ManagedChannel in =
                        io.grpc.inprocess.InProcessChannelBuilder.forName(bareName).build();
                StatusRuntimeException off =
                        org.junit.jupiter.api.Assertions.assertThrows(
                                StatusRuntimeException.class,
                                () -> snapshot(in, ops, snaps.resolve("bare").toString()));
                assertEquals(Status.Code.FAILED_PRECONDITION, off.getStatus().getCode());
                assertTrue(
                        off.getStatus().getDescription().contains("--snapshot-dir"),
                        off.getStatus().getDescription());
                in.shutdownNow();
            }

            // 3. Roles: a tenant administrator reaches its own tenant, never another's or the whole
            // store.
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(() -> snapshot(channel, acmeAdmin, snaps.resolve("a").toString())));
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(() -> snapshot(channel, acme, snaps.resolve("b").toString())));
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(
                            () ->
                                    restore(
                                            channel,
                                            acmeAdmin,
                                            snaps.resolve("good").toString(),
                                            snaps.resolve("c").toString())));
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(
                            () ->
                                    stub(CollectionsGrpc.newBlockingStub(channel), acmeAdmin)
                                            .drop(
                                                    DropCollectionRequest.newBuilder()
                                                            .setName("notes")
                                                            .build())));
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(
                            () ->
                                    stub(ForgetGrpc.newBlockingStub(channel), acmeAdmin)
                                            .verifyLedger(
                                                    VerifyLedgerRequest.getDefaultInstance())));
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    code(
                            () ->
                                    stub(AdminGrpc.newBlockingStub(channel), acme)
                                            .stats(ServerStatsRequest.getDefaultInstance())));
            ServerStats own =
                    stub(AdminGrpc.newBlockingStub(channel), acmeAdmin)
                            .stats(ServerStatsRequest.getDefaultInstance());
            assertEquals(
                    List.of("acme"),
                    own.getTenantsList().stream().map(TenantStats::getTenant).toList(),
                    own.toString());
            assertEquals(Map.of("notes", 50L), own.getTenants(0).getRecordsMap());
            assertFalse(own.getCacheEnabled(), "the cache's counters are every tenant's traffic");
            assertEquals(
                    Status.Code.NOT_FOUND,
                    code(
                            () ->
                                    stub(RecordsGrpc.newBlockingStub(channel), acmeAdmin)
                                            .get(
                                                    GetRequest.newBuilder()
                                                            .setCollection("notes")
                                                            .setId("r60")
                                                            .build())),
                    "globex's record");
            ServerStats all =
                    stub(AdminGrpc.newBlockingStub(channel), ops)
                            .stats(ServerStatsRequest.getDefaultInstance());
            Map<String, Long> records = new TreeMap<>();
            all.getTenantsList()
                    .forEach(t -> records.put(t.getTenant(), t.getRecordsOrDefault("notes", 0)));
            assertEquals(50L, records.get("acme"), all.toString());
            assertEquals(30L, records.get("globex"), all.toString());

            // 2. Tokens: two authorization headers are refused, even two good ones.
            Metadata twice = auth(acme);
            twice.put(AuthInterceptor.AUTHORIZATION, "Bearer " + acme);
            assertEquals(
                    Status.Code.UNAUTHENTICATED,
                    code(
                            () ->
                                    RecordsGrpc.newBlockingStub(channel)
                                            .withInterceptors(
                                                    MetadataUtils.newAttachHeadersInterceptor(
                                                            twice))
                                            .search(query())));
            Metadata mixed = auth("wrong");
            mixed.put(AuthInterceptor.AUTHORIZATION, "Bearer " + acme);
            assertEquals(
                    Status.Code.UNAUTHENTICATED,
                    code(
                            () ->
                                    RecordsGrpc.newBlockingStub(channel)
                                            .withInterceptors(
                                                    MetadataUtils.newAttachHeadersInterceptor(
                                                            mixed))
                                            .search(query())));
            // Revoked by deleting its line, with the server running: refused on its next call.
            assertEquals(3, search(channel, acme).getHitsCount());
            Tokens.writeOwnerOnly(tokens, opsLine + "\n" + others);
            assertEquals(
                    Status.Code.UNAUTHENTICATED,
                    code(() -> search(channel, acme)),
                    "the revoked token");
            assertEquals(3, search(channel, globex).getHitsCount(), "the other tenant is served");
            // A typo while editing: every call is refused until the file reads again (fail closed).
            Files.writeString(tokens, "sha256:not-hex globex tenant\n", StandardOpenOption.APPEND);
            assertEquals(Status.Code.UNAVAILABLE, code(() -> search(channel, globex)));
            assertEquals(
                    Status.Code.UNAVAILABLE,
                    code(
                            () ->
                                    stub(AdminGrpc.newBlockingStub(channel), ops)
                                            .stats(ServerStatsRequest.getDefaultInstance())));
            Tokens.writeOwnerOnly(tokens, opsLine + "\n" + others);
            assertEquals(3, search(channel, globex).getHitsCount(), "served again once it reads");
            // Opened to others: refused the same way until it is owner-only again.
            Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-r--r--"));
            assertEquals(Status.Code.UNAVAILABLE, code(() -> search(channel, globex)));
            Files.setPosixFilePermissions(tokens, PosixFilePermissions.fromString("rw-------"));
            assertEquals(3, search(channel, globex).getHitsCount());
            // A token added while it runs is accepted at once.
            Path acmeAgain = tmp.resolve("acme-again.token");
            NepentheServer.addToken(tokens, acmeAgain, "acme", "tenant");
            assertEquals(3, search(channel, Files.readString(acmeAgain).strip()).getHitsCount());

            HealthCheckResponse health =
                    HealthGrpc.newBlockingStub(channel)
                            .check(HealthCheckRequest.getDefaultInstance());
            assertEquals(
                    HealthCheckResponse.ServingStatus.SERVING,
                    health.getStatus(),
                    "the server is still up");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
        try (Nepenthe reopened =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            assertEquals(before, digest(reopened), "the stored records are unchanged");
        }
    }

    private static <S extends io.grpc.stub.AbstractStub<S>> S stub(S s, String token) {
        return s.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth(token)))
                .withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static String snapshot(ManagedChannel channel, String token, String target) {
        return stub(AdminGrpc.newBlockingStub(channel), token)
                .snapshot(SnapshotRequest.newBuilder().setTarget(target).build())
                .getTarget();
    }

    private static String restore(
            ManagedChannel channel, String token, String snapshot, String target) {
        return stub(AdminGrpc.newBlockingStub(channel), token)
                .restore(
                        RestoreRequest.newBuilder().setSnapshot(snapshot).setTarget(target).build())
                .getTarget();
    }

    private static SearchRequest query() {
        return SearchRequest.newBuilder()
                .setCollection("notes")
                .setK(3)
                .addVector(1)
                .addVector(0)
                .addVector(0)
                .addVector(0)
                .build();
    }

    private static dev.nepenthe.grpc.v1.SearchResponse search(
            ManagedChannel channel, String token) {
        return stub(RecordsGrpc.newBlockingStub(channel), token).search(query());
    }

    private static Status.Code code(Runnable call) {
        try {
            call.run();
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    /** A search of notes with this filter and these knobs, as acme. */
    private static Status search(
            HostileServer h,
            dev.nepenthe.grpc.v1.Filter filter,
            Map<String, String> params,
            float... vector) {
        SearchRequest.Builder q =
                SearchRequest.newBuilder().setCollection("notes").setK(3).putAllParams(params);
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
            any.addFilters(
                    dev.nepenthe.grpc.v1.Filter.newBuilder()
                            .setRange(
                                    dev.nepenthe.grpc.v1.Filter.Range.newBuilder()
                                            .setKey("n")
                                            .setMin(i)
                                            .setMax(i + 0.5)));
        }
        return dev.nepenthe.grpc.v1.Filter.newBuilder().setAny(any).build();
    }

    private static void assertExhausted(Status s, String description) {
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s.toString());
        assertEquals(description, s.getDescription());
    }

    /**
     * Filters and knobs are bounded (the defaults: 1,024 terms, 32 deep, 16,384 keyed hashes; 16
     * knobs, efSearch 4,096, window 10,000): each refusal names the limit and the value received; a
     * filter just within the hash bound is answered, and matches what the store answers. A forget's
     * metadata scope is held to the same bounds. Vectors of huge finite components are refused,
     * stored or queried, by the store's own check. Globex is served throughout and no record
     * changes.
     */
    @Test
    void filtersKnobsAndHugeVectorsAreBounded() throws Exception {
        long seed = Seeds.draw("HostileInputTest.queries");
        try (HostileServer h = new HostileServer(tmp, seed, HostileServer.attackLimits())) {
            assertExhausted(
                    search(h, ranges(1_000_000), Map.of()),
                    "filter: filter terms: expected at most 1024, got" + " 1000001");
            assertExhausted(
                    search(h, ranges(18), Map.of()),
                    "filter: filter cost in keyed hashes (1 per eq or exists,"
                            + " 1 per in value, 960 per range): expected at most 16384, got 17280");
            // 17 ranges cost 16,320 hashes: answered, and exactly as the store answers.
            assertEquals(Status.Code.OK, search(h, ranges(17), Map.of()).getCode());
            var within =
                    h.records(h.acme)
                            .search(
                                    SearchRequest.newBuilder()
                                            .setCollection("notes")
                                            .setK(3)
                                            .addVector(1)
                                            .addVector(0)
                                            .addVector(0)
                                            .addVector(0)
                                            .setFilter(ranges(17))
                                            .build());
            var expected =
                    h.store
                            .collection("notes")
                            .search(
                                    new dev.nepenthe.core.SearchRequest(
                                            new float[] {1, 0, 0, 0},
                                            3,
                                            "acme",
                                            null,
                                            Protos.filter(ranges(17), "filter"),
                                            dev.nepenthe.core.index.SearchParams.DEFAULTS));
            assertEquals(
                    expected.stream().map(dev.nepenthe.core.SearchHit::id).toList(),
                    within.getHitsList().stream().map(x -> x.getRecord().getId()).toList());

            dev.nepenthe.grpc.v1.Filter.In.Builder in =
                    dev.nepenthe.grpc.v1.Filter.In.newBuilder().setKey("doc");
            for (int i = 0; i < 20_000; i++) {
                in.addValues(dev.nepenthe.grpc.v1.Value.newBuilder().setStringValue("d" + i));
            }
            assertExhausted(
                    search(h, dev.nepenthe.grpc.v1.Filter.newBuilder().setIn(in).build(), Map.of()),
                    "filter: filter cost in keyed hashes (1 per eq or exists, 1 per in value, 960"
                            + " per range): expected at most 16384, got 20000");
            dev.nepenthe.grpc.v1.Filter deep =
                    dev.nepenthe.grpc.v1.Filter.newBuilder()
                            .setExists(dev.nepenthe.grpc.v1.Filter.Exists.newBuilder().setKey("n"))
                            .build();
            for (int i = 0; i < 40; i++) {
                deep =
                        dev.nepenthe.grpc.v1.Filter.newBuilder()
                                .setNot(
                                        dev.nepenthe.grpc.v1.Filter.Not.newBuilder()
                                                .setFilter(deep))
                                .build();
            }
            assertExhausted(
                    search(h, deep, Map.of()),
                    "filter: filter nesting (not, all, any): expected at most 32," + " got 33");
            assertExhausted(
                    search(h, null, Map.of("efSearch", "1000000")),
                    "params 'efSearch': expected at most 4096," + " got 1000000");
            assertExhausted(
                    search(h, null, Map.of("window", "20000")),
                    "params 'window': expected at most 10000, got" + " 20000");
            Map<String, String> many = new TreeMap<>();
            for (int i = 0; i < 17; i++) {
                many.put("knob" + i, "1");
            }
            assertExhausted(
                    search(h, null, many), "params: search knobs: expected at most 16, got 17");
            assertEquals(
                    Status.Code.OK,
                    search(h, null, Map.of("efSearch", "4096", "nprobe", "64")).getCode());

            var forget =
                    ForgetGrpc.newBlockingStub(h.channel)
                            .withInterceptors(
                                    MetadataUtils.newAttachHeadersInterceptor(
                                            HostileServer.auth(h.acme)));
            StatusRuntimeException f =
                    assertThrows(
                            StatusRuntimeException.class,
                            () ->
                                    forget.forget(
                                            dev.nepenthe.grpc.v1.ForgetRequest.newBuilder()
                                                    .setScope(
                                                            dev.nepenthe.grpc.v1.ForgetScope
                                                                    .newBuilder()
                                                                    .setMetadata(ranges(5_000)))
                                                    .setReasonCode("test")
                                                    .setIdempotencyKey("k1")
                                                    .build()));
            assertExhausted(
                    f.getStatus(), "scope.metadata: filter terms: expected at most 1024, got 5001");

            // Huge finite components: refused in a dot-product collection, stored or queried.
            CollectionsGrpc.newBlockingStub(h.channel)
                    .withInterceptors(
                            MetadataUtils.newAttachHeadersInterceptor(
                                    HostileServer.auth(h.operator)))
                    .create(
                            dev.nepenthe.grpc.v1.CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            dev.nepenthe.grpc.v1.CollectionSpec.newBuilder()
                                                    .setName("dots")
                                                    .setDimension(4)
                                                    .setMetric(dev.nepenthe.grpc.v1.Metric.DOT))
                                    .build());
            StatusRuntimeException stored =
                    assertThrows(
                            StatusRuntimeException.class,
                            () ->
                                    h.records(h.acme)
                                            .upsert(
                                                    UpsertRequest.newBuilder()
                                                            .setCollection("dots")
                                                            .addRecords(
                                                                    Record.newBuilder()
                                                                            .setId("huge")
                                                                            .addVector(3e38f)
                                                                            .addVector(0)
                                                                            .addVector(0)
                                                                            .addVector(0))
                                                            .build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, stored.getStatus().getCode());
            assertTrue(
                    stored.getStatus()
                            .getDescription()
                            .startsWith(
                                    "record 0 of the batch: expected a vector whose"
                                            + " squared norm is at most 4.254e+37"),
                    stored.getStatus().getDescription());
            Status query = search(h, null, Map.of(), 0, 3e38f, 0, 0);
            assertEquals(Status.Code.INVALID_ARGUMENT, query.getCode(), query.toString());
            assertTrue(
                    query.getDescription()
                            .startsWith("query: expected a vector whose squared norm"),
                    query.getDescription());

            h.assertServed(h.globex, "globex");
            h.assertUp();
        }
    }

    /**
     * Plaintext beyond loopback is refused unless the operator passes the loudly named flag: by the
     * server (naming the flag and the address) and by {@code nepenthe serve}, which refuses before
     * it creates the data folder. The refused address is 192.0.2.1 (TEST-NET-1, never this
     * machine's), so that a refusal that failed to happen could not bind a network port.
     */
    @Test
    void plaintextBeyondLoopbackIsRefusedUnlessTheOperatorSaysSo() throws Exception {
        for (String loopback : List.of("127.0.0.1", "127.0.0.2", "localhost", "::1")) {
            NepentheServer.checkPlaintext(loopback, false, false);
        }
        IllegalArgumentException any =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> NepentheServer.checkPlaintext("0.0.0.0", false, false));
        assertTrue(
                any.getMessage()
                        .startsWith(
                                "--host 0.0.0.0: expected a loopback address for a server without"
                                        + " TLS, got 0.0.0.0"),
                any.getMessage());
        assertTrue(any.getMessage().contains("--insecure-plaintext-on-network"), any.getMessage());
        NepentheServer.checkPlaintext("0.0.0.0", true, false);
        NepentheServer.checkPlaintext("0.0.0.0", false, true);

        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(tokens, Tokens.line(Tokens.newToken(), "acme", false) + "\n");
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            IllegalArgumentException server =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    NepentheServer.start(
                                            store,
                                            new NepentheServer.Options()
                                                    .listen("192.0.2.1", 0)
                                                    .tokens(tokens)));
            assertTrue(
                    server.getMessage().contains("--insecure-plaintext-on-network"),
                    server.getMessage());
        }
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine cl = dev.nepenthe.server.Main.commandLine();
        cl.setErr(new java.io.PrintWriter(err, true));
        Path folder = tmp.resolve("never-created");
        int exit =
                cl.execute(
                        "serve", "--data", folder.toString(), "--host", "192.0.2.1", "--port", "0");
        assertEquals(2, exit, err.toString());
        assertTrue(
                err.toString()
                                .contains(
                                        "--host 192.0.2.1: expected a loopback address for a server"
                                                + " without TLS")
                        && err.toString().contains("pass --insecure-plaintext-on-network"),
                err.toString());
        assertFalse(Files.exists(folder), "refused before the store was opened");
    }

    /** A batch that must be refused: wrong dimension, NaN, infinity, no vector, or a blank id. */
    private static UpsertRequest hostileUpsert(SplittableRandom rnd) {
        Record.Builder r = Record.newBuilder().setId("h" + rnd.nextInt(1000)).setSubject("s1");
        switch (rnd.nextInt(5)) {
            case 0 -> r.addVector(1).addVector(2).addVector(3);
            case 1 -> r.addVector(1).addVector(Float.NaN).addVector(0).addVector(0);
            case 2 -> r.addVector(Float.POSITIVE_INFINITY).addVector(0).addVector(0).addVector(0);
            case 3 -> {}
            default -> r.setId(" ").addVector(1).addVector(0).addVector(0).addVector(0);
        }
        return UpsertRequest.newBuilder()
                .setCollection(rnd.nextBoolean() ? "notes" : "nope")
                .addRecords(r)
                .build();
    }

    private static Metadata auth(String token) {
        Metadata md = new Metadata();
        md.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
        return md;
    }

    private static Status.Code call(
            ManagedChannel channel, MethodDescriptor<?, ?> m, String token, byte[] body) {
        MethodDescriptor<byte[], byte[]> raw =
                MethodDescriptor.<byte[], byte[]>newBuilder()
                        .setType(
                                m.getType() == MethodDescriptor.MethodType.SERVER_STREAMING
                                        ? MethodDescriptor.MethodType.SERVER_STREAMING
                                        : MethodDescriptor.MethodType.UNARY)
                        .setFullMethodName(m.getFullMethodName())
                        .setRequestMarshaller(BYTES)
                        .setResponseMarshaller(BYTES)
                        .build();
        var ch =
                token == null
                        ? channel
                        : io.grpc.ClientInterceptors.intercept(
                                channel, MetadataUtils.newAttachHeadersInterceptor(auth(token)));
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

    private static String digest(Nepenthe store) {
        return HostileServer.digest(store);
    }
}
