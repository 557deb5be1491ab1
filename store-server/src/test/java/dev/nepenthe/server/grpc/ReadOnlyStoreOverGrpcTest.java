package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.ServerStats;
import dev.nepenthe.grpc.v1.ServerStatsRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.testing.faults.FaultPlan;
import dev.nepenthe.testing.faults.FaultyFileSystem;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A served store whose disk fails an fsync: the failed upsert ends UNAVAILABLE, later writes end
 * FAILED_PRECONDITION (no retry helps until the store is reopened), searches go on, the health
 * service's {@value NepentheServer#WRITES_HEALTH} turns NOT_SERVING while the server itself stays
 * SERVING, and the statistics tell a store operator the file (a tenant administrator gets the
 * reason without the server's paths). Reopened on a sound disk, the store holds every record
 * acknowledged before the fault.
 */
class ReadOnlyStoreOverGrpcTest {

    @TempDir Path tmp;

    private static Record record(String id, float x) {
        return Record.newBuilder()
                .setId(id)
                .setSubject("s")
                .addVector(x)
                .addVector(1)
                .addVector(0)
                .addVector(0)
                .build();
    }

    private static UpsertRequest upsert(String id, float x) {
        return UpsertRequest.newBuilder().setCollection("notes").addRecords(record(id, x)).build();
    }

    @Test
    void aFailedFsyncMakesTheServedStoreReadOnlyAndSaysWhy() throws Exception {
        String ops = Tokens.newToken();
        String acme = Tokens.newToken();
        String acmeAdmin = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(
                tokens,
                Tokens.line(ops, "ops", Role.STORE_OPERATOR)
                        + "\n"
                        + Tokens.line(acme, "acme", Role.TENANT)
                        + "\n"
                        + Tokens.line(acmeAdmin, "acme", Role.TENANT_ADMIN)
                        + "\n");
        FaultPlan plan = FaultPlan.none(7);
        Path data = FaultyFileSystem.wrap(tmp.resolve("data"), plan);
        StoreOptions options = StoreOptions.defaults();
        Nepenthe store = Nepenthe.open(data, options);
        store.createCollection(CollectionSpec.of("notes", 4, Metric.COSINE));
        NepentheServer server =
                NepentheServer.start(
                        store, new NepentheServer.Options().listen("127.0.0.1", 0).tokens(tokens));
        ManagedChannel channel =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        try {
            RecordsGrpc.RecordsBlockingStub records =
                    RecordsGrpc.newBlockingStub(channel)
                            .withInterceptors(
                                    MetadataUtils.newAttachHeadersInterceptor(
                                            HostileServer.auth(acme)));
            records.upsert(upsert("kept", 1));
            assertEquals(HealthCheckResponse.ServingStatus.SERVING, writesHealth(channel));

            plan.failNth(FaultPlan.Op.FSYNC, 1, false); // one failure: the next fsync would succeed
            StatusRuntimeException failed =
                    assertThrows(
                            StatusRuntimeException.class, () -> records.upsert(upsert("lost", 2)));
            assertEquals(Status.Code.UNAVAILABLE, failed.getStatus().getCode(), failed.toString());
            StatusRuntimeException refused =
                    assertThrows(
                            StatusRuntimeException.class, () -> records.upsert(upsert("later", 3)));
            assertEquals(
                    Status.Code.FAILED_PRECONDITION,
                    refused.getStatus().getCode(),
                    refused.toString());
            assertTrue(
                    refused.getStatus().getDescription().contains("read-only"), refused.toString());
            assertFalse(
                    refused.getStatus().getDescription().contains(tmp.toString()),
                    "no server path: " + refused);
            assertEquals(1, plan.injectedCount(), "the fsync was not tried again");

            var hits =
                    records.search(
                            SearchRequest.newBuilder()
                                    .setCollection("notes")
                                    .setK(5)
                                    .addVector(1)
                                    .addVector(1)
                                    .addVector(0)
                                    .addVector(0)
                                    .build());
            assertEquals("kept", hits.getHits(0).getRecord().getId(), "searches go on");
            assertEquals(1, hits.getHitsCount(), "the failed write is not served");

            long until =
                    System.nanoTime()
                            + TimeUnit.SECONDS.toNanos(10); // the server checks every second
            while (writesHealth(channel) != HealthCheckResponse.ServingStatus.NOT_SERVING
                    && System.nanoTime() < until) {
                Thread.sleep(100);
            }
            assertEquals(HealthCheckResponse.ServingStatus.NOT_SERVING, writesHealth(channel));
            assertEquals(
                    HealthCheckResponse.ServingStatus.SERVING,
                    HealthGrpc.newBlockingStub(channel)
                            .check(HealthCheckRequest.getDefaultInstance())
                            .getStatus(),
                    "the server itself still serves");

            ServerStats opsView = stats(channel, ops);
            assertFalse(opsView.getWritesAccepted());
            assertTrue(
                    opsView.getWriteProblem().contains(tmp.toString()),
                    "the operator sees the file: " + opsView);
            ServerStats adminView = stats(channel, acmeAdmin);
            assertFalse(adminView.getWritesAccepted());
            assertFalse(adminView.getWriteProblem().isEmpty());
            assertFalse(
                    adminView.getWriteProblem().contains(tmp.toString()),
                    "no server path: " + adminView);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
        plan.heal();
        try (Nepenthe reopened = Nepenthe.open(data, options)) {
            assertTrue(reopened.health().writesAccepted());
            assertTrue(
                    reopened.collection("notes").get("acme", "kept").isPresent(),
                    "an acknowledged write survives");
            assertFalse(reopened.collection("notes").get("acme", "later").isPresent());
        }
    }

    private static HealthCheckResponse.ServingStatus writesHealth(ManagedChannel channel) {
        return HealthGrpc.newBlockingStub(channel)
                .check(
                        HealthCheckRequest.newBuilder()
                                .setService(NepentheServer.WRITES_HEALTH)
                                .build())
                .getStatus();
    }

    private static ServerStats stats(ManagedChannel channel, String token) {
        return AdminGrpc.newBlockingStub(channel)
                .withInterceptors(
                        MetadataUtils.newAttachHeadersInterceptor(HostileServer.auth(token)))
                .stats(ServerStatsRequest.getDefaultInstance());
    }
}
