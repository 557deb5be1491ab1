package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a tenant reads carries no server file path (issue 47): a status's description, and an
 * operation's note and surface problems. The oracle is the path itself: it is in what the store
 * said (the control: a store operator's status keeps it) and absent from what the tenant got.
 */
class TenantReadablePathsTest {

    @TempDir Path tmp;

    private static final String SERVER_PATH =
            "/srv/nepenthe/data/collections/notes/segments/0-17.seg";

    private static StatusRuntimeException as(Role role, Throwable t) throws Exception {
        return Context.current()
                .withValue(Caller.KEY, new Caller("acme", role, "0000"))
                .call(() -> Statuses.of(t));
    }

    @Test
    void aTenantsStatusNamesNoServerPathAndAStoreOperatorsKeepsIt() throws Exception {
        for (Throwable t :
                List.of(
                        new IOException("cannot read " + SERVER_PATH),
                        new IllegalArgumentException(
                                "restore target " + SERVER_PATH + " is not empty"),
                        new IllegalStateException("ledger '" + SERVER_PATH + "' is damaged"))) {
            for (Role role : List.of(Role.TENANT, Role.TENANT_ADMIN)) {
                String d = as(role, t).getStatus().getDescription();
                assertFalse(d.contains("/srv"), role + ": " + d);
                assertTrue(d.contains(Redaction.MARK), d);
            }
            assertTrue(
                    as(Role.STORE_OPERATOR, t).getStatus().getDescription().contains(SERVER_PATH),
                    "the control: the store operator reads the path");
        }
        assertEquals(
                Status.Code.UNAVAILABLE,
                as(Role.TENANT, new IOException(SERVER_PATH)).getStatus().getCode());
        // What is not a server path stays as it was.
        for (String plain :
                List.of(
                        "derived_from: expected '@<collection>/<id>', got '@x'",
                        "k: expected 1 to 1000, got 0",
                        "expected a/b or c / d")) {
            assertEquals(
                    plain,
                    as(Role.TENANT, new IllegalArgumentException(plain))
                            .getStatus()
                            .getDescription());
        }
    }

    /** A surface whose purge fails naming a server file, as a storage failure's message does. */
    private static final class FailingSurface implements ErasureSurface {
        @Override
        public String name() {
            return "test:failing";
        }

        @Override
        public ErasureClass erasureClass() {
            return ErasureClass.PHYSICAL;
        }

        @Override
        public void block(BlockedScope scope) {}

        @Override
        public long purge(ForgottenRecords forgotten) throws IOException {
            throw new java.nio.file.AccessDeniedException(SERVER_PATH);
        }

        @Override
        public SurfaceOutcome verify(ForgottenRecords forgotten, long purged) {
            return new SurfaceOutcome(
                    name(), ErasureClass.PHYSICAL, 0, 0, List.of("left in " + SERVER_PATH), null);
        }

        @Override
        public void release(String operationId) {}
    }

    @Test
    void anOperationsNoteReadOverGrpcNamesNoServerPath() throws Exception {
        String acme = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(tokens, Tokens.line(acme, "acme", false) + "\n");
        Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        store.createCollection(CollectionSpec.of("notes", 4, Metric.COSINE))
                .upsert(
                        VectorRecord.builder("a1")
                                .tenant("acme")
                                .subject("alice")
                                .vector(new float[] {1, 0, 0, 0})
                                .build());
        store.registerSurface(new FailingSurface());
        String name = "paths-" + System.nanoTime();
        try (NepentheServer _ =
                NepentheServer.start(
                        InProcessServerBuilder.forName(name),
                        store,
                        Tokens.read(tokens),
                        new Limits(
                                1 << 20,
                                50,
                                100,
                                1000,
                                64,
                                2,
                                5,
                                0,
                                0,
                                Limits.Calls.DEFAULTS,
                                Limits.Queries.DEFAULTS),
                        true)) {
            ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
            Metadata md = new Metadata();
            md.put(AuthInterceptor.AUTHORIZATION, "Bearer " + acme);
            ForgetGrpc.ForgetBlockingStub forget =
                    ForgetGrpc.newBlockingStub(channel)
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
            Operation op =
                    forget.forget(
                            ForgetRequest.newBuilder()
                                    .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                    .setIdempotencyKey("k1")
                                    .setReasonCode("gdpr")
                                    .build());
            // The purge fails: the operation stops with a note quoting the failure.
            long deadline =
                    System.nanoTime()
                            + TimeUnit.SECONDS.toNanos(60); // generous: one forget on an idle store
            Operation seen = op;
            while (!seen.getNote().contains("stopped") && System.nanoTime() < deadline) {
                Thread.sleep(20);
                seen =
                        forget.getOperation(
                                GetOperationRequest.newBuilder().setId(op.getId()).build());
            }
            assertTrue(
                    store.operation(op.getId()).orElseThrow().note().contains(SERVER_PATH),
                    "the control: the store's own note names the file");
            assertTrue(seen.getNote().contains("stopped"), seen.toString());
            assertFalse(
                    seen.toString().contains("/srv"),
                    "no server path in what the tenant reads: " + seen);
            assertTrue(seen.getNote().contains(Redaction.MARK), seen.getNote());
            channel.shutdownNow();
        }
    }
}
