package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS from a configured certificate and key: a self-signed pair made for the test with the JDK's
 * keytool (exported to PEM here), a client that trusts it gets through, a plaintext client does
 * not.
 */
class TlsTest {

    @TempDir Path tmp;

    @Test
    void aClientThatTrustsTheCertificateGetsThroughAndAPlaintextOneDoesNot() throws Exception {
        Path p12 = tmp.resolve("server.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p =
                new ProcessBuilder(
                                keytool.toString(),
                                "-genkeypair",
                                "-alias",
                                "server",
                                "-keyalg",
                                "RSA",
                                "-keysize",
                                "2048",
                                "-validity",
                                "2",
                                "-dname",
                                "CN=localhost",
                                "-ext",
                                "SAN=dns:localhost,ip:127.0.0.1",
                                "-storetype",
                                "PKCS12",
                                "-keystore",
                                p12.toString(),
                                "-storepass",
                                "changeit",
                                "-keypass",
                                "changeit")
                        .redirectErrorStream(true)
                        .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertEquals(0, p.waitFor(), out);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(p12.toFile())) {
            ks.load(in, "changeit".toCharArray());
        }
        Certificate cert = ks.getCertificate("server");
        Path certPem = tmp.resolve("cert.pem");
        Path keyPem = tmp.resolve("key.pem");
        Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
        Files.writeString(
                keyPem,
                pem("PRIVATE KEY", ks.getKey("server", "changeit".toCharArray()).getEncoded()));

        String token = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(tokens, Tokens.line(token, "acme", false) + "\n");
        Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        NepentheServer server =
                NepentheServer.start(
                        store,
                        new NepentheServer.Options()
                                .listen("127.0.0.1", 0)
                                .tokens(tokens)
                                .tls(certPem, keyPem));
        Metadata auth = new Metadata();
        auth.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
        ManagedChannel tls =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port())
                        .overrideAuthority("localhost")
                        .sslContext(
                                GrpcSslContexts.forClient().trustManager(certPem.toFile()).build())
                        .build();
        ManagedChannel plain =
                NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
        try {
            assertEquals(
                    0,
                    CollectionsGrpc.newBlockingStub(tls)
                            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth))
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .list(ListCollectionsRequest.getDefaultInstance())
                            .getCollectionsCount());
            StatusRuntimeException e =
                    assertThrows(
                            StatusRuntimeException.class,
                            () ->
                                    CollectionsGrpc.newBlockingStub(plain)
                                            .withInterceptors(
                                                    MetadataUtils.newAttachHeadersInterceptor(auth))
                                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                                            .list(ListCollectionsRequest.getDefaultInstance()));
            assertEquals(
                    Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        } finally {
            tls.shutdownNow();
            plain.shutdownNow();
            server.close();
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN "
                + type
                + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END "
                + type
                + "-----\n";
    }
}
