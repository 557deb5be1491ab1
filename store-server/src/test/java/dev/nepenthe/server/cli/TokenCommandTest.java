package dev.nepenthe.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.server.Main;
import dev.nepenthe.server.grpc.NepentheServer;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nepenthe token} makes a working token for a tenant without anyone touching hashes: the
 * token lands in an owner-only file and never on the terminal, a server started on the tokens file
 * accepts it for that tenant, with the store-operator or tenant-admin role only when asked, and an
 * existing token file is never overwritten.
 */
class TokenCommandTest {

    @TempDir Path tmp;

    @Test
    void aNewTokenWorksForItsTenantAndIsNeverPrinted() throws Exception {
        Path tokens = tmp.resolve("server").resolve("tokens.conf");
        Path ops = tmp.resolve("ops.token");
        Path acme = tmp.resolve("acme.token");
        assertEquals(
                0,
                run(
                        "token",
                        "--tenant",
                        "ops",
                        "--operator",
                        "--tokens",
                        tokens.toString(),
                        "--out",
                        ops.toString()));
        String printed =
                run2(
                        "token",
                        "--tenant",
                        "acme",
                        "--tokens",
                        tokens.toString(),
                        "--out",
                        acme.toString());
        String acmeToken = Files.readString(acme).strip();
        assertFalse(printed.contains(acmeToken), "the token is never printed: " + printed);
        assertEquals(
                "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(acme)));
        assertEquals(
                2,
                Files.readAllLines(tokens).stream().filter(l -> l.startsWith("sha256:")).count());
        assertFalse(
                Files.readString(tokens).contains(acmeToken),
                "only the hash is in the tokens file");
        assertEquals(
                3,
                run(
                        "token",
                        "--tenant",
                        "acme",
                        "--tokens",
                        tokens.toString(),
                        "--out",
                        acme.toString()),
                "an existing token file is never overwritten");
        assertEquals(acmeToken, Files.readString(acme).strip());
        Path admin = tmp.resolve("acme-admin.token");
        assertEquals(
                0,
                run(
                        "token",
                        "--tenant",
                        "acme",
                        "--role",
                        "tenant-admin",
                        "--tokens",
                        tokens.toString(),
                        "--out",
                        admin.toString()));
        assertTrue(
                Files.readAllLines(tokens).getLast().endsWith(" acme tenant-admin"),
                Files.readString(tokens));
        assertTrue(
                Files.readAllLines(tokens).get(1).endsWith(" ops store-operator"),
                Files.readString(tokens));
        assertEquals(
                3,
                run(
                        "token",
                        "--tenant",
                        "acme",
                        "--role",
                        "root",
                        "--tokens",
                        tokens.toString(),
                        "--out",
                        tmp.resolve("root.token").toString()),
                "an unknown role");
        assertFalse(Files.exists(tmp.resolve("root.token")));

        Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        NepentheServer server =
                NepentheServer.start(
                        store, new NepentheServer.Options().listen("127.0.0.1", 0).tokens(tokens));
        ManagedChannel ch =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        try {
            CreateCollectionRequest create =
                    CreateCollectionRequest.newBuilder()
                            .setSpec(
                                    dev.nepenthe.grpc.v1.CollectionSpec.newBuilder()
                                            .setName("notes")
                                            .setDimension(3)
                                            .setMetric(dev.nepenthe.grpc.v1.Metric.L2))
                            .build();
            collections(ch, Files.readString(ops).strip()).create(create);
            assertEquals(
                    1,
                    collections(ch, acmeToken)
                            .list(ListCollectionsRequest.getDefaultInstance())
                            .getCollectionsCount());
            StatusRuntimeException denied =
                    org.junit.jupiter.api.Assertions.assertThrows(
                            StatusRuntimeException.class,
                            () -> collections(ch, acmeToken).create(create));
            assertEquals(
                    Status.Code.PERMISSION_DENIED,
                    denied.getStatus().getCode(),
                    "no store-operator role unless asked");
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
    }

    private static CollectionsGrpc.CollectionsBlockingStub collections(
            ManagedChannel ch, String token) {
        Metadata md = new Metadata();
        md.put(
                Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
                "Bearer " + token);
        return CollectionsGrpc.newBlockingStub(ch)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }

    private static int run(String... args) {
        return Main.commandLine().execute(args);
    }

    private static String run2(String... args) {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true));
        try {
            assertEquals(0, Main.commandLine().execute(args));
        } finally {
            System.setOut(old);
        }
        String out = buf.toString();
        assertTrue(out.contains("token for 'acme'"), out);
        return out;
    }
}
