package dev.nepenthe.cluster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.cluster.ClusterConfig;
import dev.nepenthe.cluster.Member;
import dev.nepenthe.cluster.NodeTls;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.UpsertRequest;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas that authenticate each other by certificate: with every member's certificate trusted the
 * group replicates; a member whose certificate the others do not trust never receives an entry.
 * Without TLS, a member beyond loopback is refused at start.
 */
@Timeout(240)
final class MutualTlsTest {

    @TempDir Path dir;

    /** A self-signed certificate and key for one node, made with the JDK's keytool, as PEM. */
    private Path[] certificate(String name) throws Exception {
        Path p12 = dir.resolve(name + ".p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        Process p =
                new ProcessBuilder(
                                keytool.toString(),
                                "-genkeypair",
                                "-alias",
                                name,
                                "-keyalg",
                                "EC",
                                "-groupname",
                                "secp256r1",
                                "-validity",
                                "2",
                                "-dname",
                                "CN=" + name,
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
        assertThat(p.waitFor()).as(out).isZero();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(p12.toFile())) {
            ks.load(in, "changeit".toCharArray());
        }
        Path cert = dir.resolve(name + ".crt");
        Path key = dir.resolve(name + ".key");
        Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate(name).getEncoded()));
        Files.writeString(
                key, pem("PRIVATE KEY", ks.getKey(name, "changeit".toCharArray()).getEncoded()));
        return new Path[] {cert, key};
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN "
                + type
                + "-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END "
                + type
                + "-----\n";
    }

    @Test
    void membersWithTrustedCertificatesReplicateAndAStrangerGetsNothing() throws Exception {
        Path[][] certs = {certificate("n1"), certificate("n2"), certificate("n3")};
        Path[] stranger = certificate("stranger");
        // n1 and n2 trust the three members; n3 presents the stranger's certificate instead.
        Path trusted = dir.resolve("trusted.pem");
        Files.writeString(
                trusted,
                Files.readString(certs[0][0])
                        + Files.readString(certs[1][0])
                        + Files.readString(certs[2][0]));
        SslContext client = GrpcSslContexts.forClient().trustManager(trusted.toFile()).build();
        try (LocalCluster c =
                new LocalCluster(
                        dir.resolve("cluster"),
                        3,
                        i ->
                                i == 2
                                        ? new NodeTls(stranger[0], stranger[1], trusted)
                                        : new NodeTls(certs[i][0], certs[i][1], trusted),
                        client)) {
            int leader = c.awaitLeader(Duration.ofSeconds(30));
            assertThat(leader).isNotEqualTo(2);
            assertThat(c.replicas[leader].config().tls()).isNotNull();
            // The client API is TLS too: the cluster's channels are.
            {
                c.collections(leader)
                        .create(
                                CreateCollectionRequest.newBuilder()
                                        .setSpec(
                                                CollectionSpec.newBuilder()
                                                        .setName("notes")
                                                        .setDimension(2)
                                                        .setMetric(Metric.COSINE))
                                        .build());
                c.records(leader)
                        .upsert(
                                UpsertRequest.newBuilder()
                                        .setCollection("notes")
                                        .addRecords(
                                                Record.newBuilder()
                                                        .setId("r1")
                                                        .addVector(1f)
                                                        .addVector(0f))
                                        .build());
                assertThat(
                                c.records(leader)
                                        .get(
                                                GetRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .setId("r1")
                                                        .build())
                                        .getRecord()
                                        .getId())
                        .isEqualTo("r1");
            }
            int other = 1 - leader;
            for (int t = 0;
                    t < 100
                            && c.replicas[other].division().getInfo().getLastAppliedIndex()
                                    < c.replicas[leader].division().getInfo().getLastAppliedIndex();
                    t++) {
                Thread.sleep(100);
            }
            assertThat(c.replicas[other].store().collection("notes").get("r1")).isPresent();
            // The stranger holds nothing: the members refused its connections both ways.
            assertThat(c.replicas[2].store().collections()).isEmpty();
            // A Raft client of its own sent straight to the leader: with a member's certificate
            // the leader answers (the control); with the stranger's it refuses the connection,
            // because members check client certificates too.
            RaftGroup group = c.replicas[leader].division().getGroup();
            RaftPeerId leaderId = c.replicas[leader].division().getId();
            assertThat(rawSend(group, leaderId, certs[other], trusted)).isNull();
            assertThat(rawSend(group, leaderId, stranger, trusted)).isInstanceOf(IOException.class);
        }
    }

    /** Sends a JOIN with a bad body (refused when applied) as a raw Raft client; its failure. */
    private static Throwable rawSend(
            RaftGroup group, RaftPeerId leader, Path[] cert, Path trusted) {
        Parameters tls = new Parameters();
        GrpcConfigKeys.TLS.setConf(
                tls, new GrpcTlsConfig(cert[1].toFile(), cert[0].toFile(), trusted.toFile(), true));
        RaftProperties props = new RaftProperties();
        RaftClientConfigKeys.Rpc.setRequestTimeout(
                props, TimeDuration.valueOf(3, TimeUnit.SECONDS));
        try (RaftClient raw =
                RaftClient.newBuilder()
                        .setProperties(props)
                        .setParameters(tls)
                        .setRaftGroup(group)
                        .setLeaderId(leader)
                        .setRetryPolicy(RetryPolicies.noRetry())
                        .build()) {
            raw.io()
                    .send(
                            Message.valueOf(
                                    ByteString.copyFrom(
                                            new Command(Command.Kind.EXCUSE, "{}".getBytes())
                                                    .encode())));
            return null;
        } catch (IOException e) {
            return e;
        }
    }

    @Test
    void plaintextBeyondLoopbackIsRefused() {
        List<Member> members =
                List.of(
                        new Member("n1", "10.1.2.3:7801", "127.0.0.1:7701"),
                        new Member("n2", "127.0.0.1:7802", "127.0.0.1:7702"));
        ClusterConfig config =
                ClusterConfig.of("n2", "g", members, dir.resolve("n2"), dir.resolve("tokens"));
        assertThatThrownBy(config::checkPlaintext)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("member n1: expected TLS between replicas")
                .hasMessageContaining("10.1.2.3:7801");
    }
}
