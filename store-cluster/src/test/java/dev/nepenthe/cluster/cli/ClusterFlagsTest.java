package dev.nepenthe.cluster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nepenthe.cluster.Member;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The cluster commands refuse bad flags before anything starts, with status 2 and a message that
 * names the flag, what it expects and what arrived.
 */
final class ClusterFlagsTest {

    @TempDir Path dir;

    private record Run(int status, String err) {}

    private static Run run(String... args) {
        CommandLine cl = ClusterMain.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err, true));
        cl.setOut(new PrintWriter(new StringWriter(), true));
        int status = cl.execute(args);
        return new Run(status, err.toString());
    }

    private Path tokens() throws IOException {
        Path t = dir.resolve("tokens");
        Files.writeString(t, "# none\n");
        return t;
    }

    @Test
    void aMemberWithoutTheTwoAddressesIsRefusedWithTheFormExpected() throws IOException {
        Run r =
                run(
                        "node",
                        "--id",
                        "n1",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801",
                        "--data",
                        dir.resolve("n1").toString(),
                        "--tokens",
                        tokens().toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--member: expected ID=CLIENT-HOST:PORT/RAFT-HOST:PORT (e.g."
                                + " n1=127.0.0.1:7801/127.0.0.1:7901), got 'n1=127.0.0.1:7801'");
        assertThat(Files.exists(dir.resolve("n1"))).as("nothing started").isFalse();
    }

    @Test
    void aMemberWithABadPortNamesTheMemberAndTheAddress() throws IOException {
        Run r =
                run(
                        "node",
                        "--id",
                        "n1",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:99999",
                        "--data",
                        dir.resolve("n1").toString(),
                        "--tokens",
                        tokens().toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--member 'n1=127.0.0.1:7801/127.0.0.1:99999': raft address of n1:"
                                + " expected host:port with a port from 1 to 65535, got"
                                + " '127.0.0.1:99999'");
    }

    @Test
    void joiningWithoutTheGroupsKeyIsRefusedBeforeAnythingStarts() throws IOException {
        Run r =
                run(
                        "node",
                        "--join",
                        "--id",
                        "n4",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--member",
                        "n4=127.0.0.1:7804/127.0.0.1:7904",
                        "--data",
                        dir.resolve("n4").toString(),
                        "--tokens",
                        tokens().toString(),
                        "--master-key",
                        dir.resolve("no-such.key").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--master-key: expected the group's key file");
        assertThat(dir.resolve("n4")).doesNotExist();
    }

    @Test
    void aMissingIdIsNamed() throws IOException {
        Run r =
                run(
                        "node",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--data",
                        dir.toString(),
                        "--tokens",
                        tokens().toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("Missing required option: '--id=ID'");
    }

    @Test
    void anIdThatIsNotAMemberNamesTheMembers() throws IOException {
        Run r =
                run(
                        "node",
                        "--id",
                        "n9",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--member",
                        "n2=127.0.0.1:7802/127.0.0.1:7902",
                        "--data",
                        dir.toString(),
                        "--tokens",
                        tokens().toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--id: expected one of the members [n1, n2], got 'n9'");
    }

    @Test
    void aMissingTokensFileIsNamed() {
        Path missing = dir.resolve("no-tokens");
        Run r =
                run(
                        "node",
                        "--id",
                        "n1",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--data",
                        dir.toString(),
                        "--tokens",
                        missing.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--tokens: expected a tokens file, got '"
                                + missing
                                + "', which does"
                                + " not exist");
    }

    @Test
    void badElectionTimeoutsAreRefused() throws IOException {
        Run r =
                run(
                        "node",
                        "--id",
                        "n1",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--data",
                        dir.toString(),
                        "--tokens",
                        tokens().toString(),
                        "--election-timeout-ms",
                        "fast");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--election-timeout-ms: expected MIN-MAX in milliseconds (e.g."
                                + " 1000-2000), got 'fast'");
    }

    @Test
    void upRefusesZeroNodes() {
        Run r = run("up", "--data", dir.toString(), "--nodes", "0");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("--nodes: expected 1 to 99, got 0");
    }

    @Test
    void aTakenPortIsRefusedByNumberAndMember() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            // n2's client port is base+2.
            LocalNodes nodes = new LocalNodes(dir, 3, port - 2, "1000-2000");
            assertThatThrownBy(nodes::checkPortsFree)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(
                            "client port of n2: expected port "
                                    + port
                                    + " on 127.0.0.1 to be free, got it taken");
        }
    }

    @Test
    void aMemberFlagReadsBackWhatUpWrites() {
        Member m = new Member("n7", "127.0.0.1:7907", "127.0.0.1:7807");
        assertThat(MemberFlag.format(m)).isEqualTo("n7=127.0.0.1:7807/127.0.0.1:7907");
        assertThat(MemberFlag.parse(MemberFlag.format(m))).isEqualTo(m);
    }

    @Test
    void aLedgerWhoseChainIsBrokenIsRefusedNamingTheLine() throws IOException {
        Path ledger = dir.resolve("ledger.jsonl");
        Files.writeString(
                ledger,
                "{\"prev\":\""
                        + "0".repeat(64)
                        + "\",\"kind\":\"X\",\"index\":1}\n"
                        + "{\"prev\":\""
                        + "1".repeat(64)
                        + "\",\"kind\":\"X\",\"index\":2}\n");
        assertThatThrownBy(() -> LedgerKeys.read(ledger))
                .hasMessageContaining(ledger + ": line 2: expected prev ")
                .hasMessageContaining("got " + "1".repeat(64));
    }

    @Test
    void halfTheTlsFlagsAreRefusedNamingWhatCame() throws IOException {
        Path pem = dir.resolve("c.pem");
        Files.writeString(pem, "x");
        Run r =
                run(
                        "node",
                        "--id",
                        "n1",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--data",
                        dir.resolve("n1").toString(),
                        "--tokens",
                        tokens().toString(),
                        "--tls-cert",
                        pem.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--tls-cert, --tls-key, --tls-trust: expected all three, got only"
                                + " --tls-cert");
    }

    @Test
    void aMemberBeyondLoopbackWithoutTlsIsRefused() throws IOException {
        Run r =
                run(
                        "node",
                        "--id",
                        "n1",
                        "--group",
                        "g",
                        "--member",
                        "n1=127.0.0.1:7801/127.0.0.1:7901",
                        "--member",
                        "n2=10.9.8.7:7802/10.9.8.7:7902",
                        "--data",
                        dir.resolve("n1").toString(),
                        "--tokens",
                        tokens().toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.err()).contains("member n2: expected TLS between replicas");
        assertThat(Files.exists(dir.resolve("n1"))).as("nothing started").isFalse();
    }
}
