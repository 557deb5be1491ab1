package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.RestoreRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seam a cluster plugs into: a routed call survives encoding and a cut-short one is refused; a
 * server with a {@link Replication} hands every write to it instead of running it (here the fake
 * replication runs it through the server's own {@link WriteApplier}, as one replica would), waits
 * for it before a read, and refuses a restore.
 */
class ReplicationSeamTest {

    @TempDir Path tmp;

    private record StreamResult(long upserted, Status error) {}

    /** Streams one single-record batch per value (a NaN makes that batch invalid). */
    private static StreamResult stream(
            ManagedChannel channel, io.grpc.ClientInterceptor attach, float... firsts)
            throws Exception {
        CompletableFuture<StreamResult> done = new CompletableFuture<>();
        io.grpc.stub.StreamObserver<UpsertRequest> in =
                RecordsGrpc.newStub(channel)
                        .withInterceptors(attach)
                        .upsertStream(
                                new io.grpc.stub.StreamObserver<>() {
                                    @Override
                                    public void onNext(dev.nepenthe.grpc.v1.UpsertResponse r) {
                                        done.complete(new StreamResult(r.getUpserted(), null));
                                    }

                                    @Override
                                    public void onError(Throwable t) {
                                        done.complete(
                                                new StreamResult(-1, Status.fromThrowable(t)));
                                    }

                                    @Override
                                    public void onCompleted() {}
                                });
        int n = 0;
        for (float f : firsts) {
            in.onNext(
                    UpsertRequest.newBuilder()
                            .setCollection("notes")
                            .addRecords(
                                    Record.newBuilder().setId("s" + n++).addVector(f).addVector(1f))
                            .build());
        }
        in.onCompleted();
        return done.get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    private static void assertMessage(Throwable t, String... parts) {
        for (String p : parts) {
            assertTrue(t.getMessage().contains(p), "expected '" + p + "' in: " + t.getMessage());
        }
    }

    @Test
    void aRoutedCallAndResultSurviveEncodingAndACutShortOneIsRefused() {
        RoutedCall c =
                new RoutedCall(
                        "nepenthe.v1.Records/Upsert", "acme", "TENANT", "t1", new byte[] {1, 2, 3});
        RoutedCall back = RoutedCall.decode(c.encode());
        assertEquals(c.method(), back.method());
        assertEquals("acme", back.tenant());
        assertArrayEquals(new byte[] {1, 2, 3}, back.request());
        byte[] cut = Arrays.copyOf(c.encode(), c.encode().length - 2);
        assertMessage(
                assertThrows(IllegalArgumentException.class, () -> RoutedCall.decode(cut)),
                "cut short");
        RoutedResult r = RoutedResult.of(Status.NOT_FOUND.withDescription("no such"));
        assertEquals(Status.Code.NOT_FOUND, RoutedResult.decode(r.encode()).status().getCode());
        assertEquals("no such", RoutedResult.decode(r.encode()).description());
    }

    @Test
    void writesGoThroughTheReplicationAndReadsWaitForIt() throws Exception {
        Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        String token = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(tokens, Tokens.line(token, "acme", true) + "\n");
        Tokens read = Tokens.read(tokens);
        List<RoutedCall> routed = new ArrayList<>();
        AtomicReference<WriteApplier> applier = new AtomicReference<>();
        AtomicReference<CompletableFuture<Void>> readable =
                new AtomicReference<>(CompletableFuture.completedFuture(null));
        Replication fake =
                new Replication() {
                    @Override
                    public CompletableFuture<RoutedResult> write(RoutedCall call) {
                        routed.add(call);
                        return CompletableFuture.completedFuture(applier.get().apply(call));
                    }

                    @Override
                    public CompletableFuture<Void> readable(boolean stale) {
                        return readable.get();
                    }
                };
        String name = "seam-" + System.nanoTime();
        try (NepentheServer server =
                NepentheServer.start(
                        InProcessServerBuilder.forName(name),
                        store,
                        () -> read,
                        Limits.DEFAULTS,
                        SnapshotFolders.none(),
                        true,
                        fake)) {
            applier.set(server.applier());
            ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
            Metadata auth = new Metadata();
            auth.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
            var attach = MetadataUtils.newAttachHeadersInterceptor(auth);
            CollectionsGrpc.newBlockingStub(channel)
                    .withInterceptors(attach)
                    .create(
                            CreateCollectionRequest.newBuilder()
                                    .setSpec(
                                            CollectionSpec.newBuilder()
                                                    .setName("notes")
                                                    .setDimension(2)
                                                    .setMetric(Metric.COSINE))
                                    .build());
            RecordsGrpc.RecordsBlockingStub records =
                    RecordsGrpc.newBlockingStub(channel).withInterceptors(attach);
            records.upsert(
                    UpsertRequest.newBuilder()
                            .setCollection("notes")
                            .addRecords(Record.newBuilder().setId("r1").addVector(1f).addVector(0f))
                            .build());
            assertEquals(
                    List.of("nepenthe.v1.Collections/Create", "nepenthe.v1.Records/Upsert"),
                    routed.stream().map(RoutedCall::method).toList());
            assertEquals("acme", routed.get(1).tenant());
            assertTrue(store.collection("notes").get("acme", "r1").isPresent());
            assertEquals(
                    "r1",
                    records.get(GetRequest.newBuilder().setCollection("notes").setId("r1").build())
                            .getRecord()
                            .getId());

            // A stream of upserts is one routed upsert per message; a bad batch ends it, saying
            // how much was stored before.
            routed.clear();
            StreamResult ok = stream(channel, attach, 1f, 0.5f);
            assertEquals(2, ok.upserted);
            assertEquals(2, routed.size());
            assertTrue(
                    routed.stream().allMatch(c -> c.method().equals("nepenthe.v1.Records/Upsert")));
            StreamResult bad = stream(channel, attach, 1f, Float.NaN, 0.25f);
            assertEquals(Status.Code.INVALID_ARGUMENT, bad.error.getCode());
            assertTrue(
                    bad.error
                            .getDescription()
                            .contains("after 1 records of this stream were stored"),
                    bad.error.getDescription());

            // A read waits for the replication; when it cannot say the replica is current, the
            // read is refused with its status, and the store is not asked.
            readable.set(
                    CompletableFuture.failedFuture(
                            Status.UNAVAILABLE.withDescription("no leader").asRuntimeException()));
            assertMessage(
                    assertThrows(
                            StatusRuntimeException.class,
                            () ->
                                    records.get(
                                            GetRequest.newBuilder()
                                                    .setCollection("notes")
                                                    .setId("r1")
                                                    .build())),
                    "UNAVAILABLE: no leader");

            // The applier refuses what it cannot run, as a result, not an exception.
            assertEquals(
                    Status.Code.UNIMPLEMENTED.value(),
                    server.applier()
                            .apply(
                                    new RoutedCall(
                                            "nepenthe.v1.Nothing/Here",
                                            "acme",
                                            "TENANT",
                                            "t",
                                            new byte[0]))
                            .code());
            assertEquals(
                    Status.Code.INVALID_ARGUMENT.value(),
                    server.applier()
                            .apply(
                                    new RoutedCall(
                                            "nepenthe.v1.Records/Upsert",
                                            "acme",
                                            "TENANT",
                                            "t",
                                            new byte[] {(byte) 0xff, 1}))
                            .code());
            assertMessage(
                    assertThrows(
                            StatusRuntimeException.class,
                            () ->
                                    AdminGrpc.newBlockingStub(channel)
                                            .withInterceptors(attach)
                                            .restore(RestoreRequest.getDefaultInstance())),
                    "FAILED_PRECONDITION",
                    "restoring one replica in place");
            channel.shutdownNow();
        }
    }
}
