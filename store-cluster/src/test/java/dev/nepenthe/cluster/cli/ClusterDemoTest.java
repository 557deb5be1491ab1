package dev.nepenthe.cluster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nepenthe.cluster.internal.ClusterReceipt;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo end to end, with its three replicas as child JVMs on free loopback ports: it passes
 * every check, and its receipt verifies on its own against the keys of every replica's ledger.
 */
final class ClusterDemoTest {

    @TempDir Path dir;

    /** A base port whose six ports (base+1..3 and base+101..103) are free on loopback now. */
    private static int freeBase() throws IOException {
        Random rnd = new Random();
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = 20_000 + rnd.nextInt(40_000);
            if (free(base + 1, base + 2, base + 3, base + 101, base + 102, base + 103)) {
                return base;
            }
        }
        throw new IOException("no free base port found in 200 tries");
    }

    private static boolean free(int... ports) {
        for (int p : ports) {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), p));
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }

    @Test
    @Timeout(240)
    void theDemoPassesAndItsReceiptVerifiesAgainstEveryLedger() throws Exception {
        Path folder = dir.resolve("demo");
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8);
        ClusterDemo.Outcome outcome;
        long left;
        try {
            outcome = new ClusterDemo(folder, freeBase(), Duration.ofMinutes(2), out).run();
            left = ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).count();
        } finally {
            System.out.print(captured.toString(StandardCharsets.UTF_8));
            // The demo stops its nodes itself; should it not have, none outlives the test.
            ProcessHandle.current()
                    .descendants()
                    .forEach(
                            p -> {
                                p.destroyForcibly();
                                p.onExit().orTimeout(10, TimeUnit.SECONDS).join();
                            });
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        assertThat(outcome.failures()).as(text).isEmpty();
        assertThat(outcome.passed()).isTrue();
        assertThat(text)
                .contains("the operation waits: WAITING_FOR_REPLICAS")
                .contains("n3 has not")
                .contains("All checks passed.");
        assertThat(left).as("child JVMs the demo left running").isZero();
        // The receipt stands on its own: the keys of any replica's ledger verify it.
        for (String node : new String[] {"n1", "n2", "n3"}) {
            LedgerKeys keys = LedgerKeys.read(LedgerKeys.ledgerOf(folder.resolve(node)));
            assertThat(keys.nodeKeys()).containsOnlyKeys("n1", "n2", "n3");
            assertThat(ClusterReceipt.verify(outcome.receipt(), keys.nodeKeys(), keys.storeKeys()))
                    .as("receipt against %s's ledger", node)
                    .isEmpty();
        }
        assertThat(Files.readString(folder.resolve("receipt.json"))).isEqualTo(outcome.receipt());
        // So does the command an auditor runs, against the file and one ledger; a changed byte
        // in the receipt makes it fail.
        java.io.StringWriter printed = new java.io.StringWriter();
        var cl = ClusterMain.commandLine();
        cl.setOut(new java.io.PrintWriter(printed, true));
        Path ledger = LedgerKeys.ledgerOf(folder.resolve("n2"));
        assertThat(
                        cl.execute(
                                "verify-receipt",
                                folder.resolve("receipt.json").toString(),
                                ledger.toString()))
                .as(printed.toString())
                .isZero();
        assertThat(printed.toString()).contains("holds: operation cfop-");
        Path changed = folder.resolve("changed.json");
        Files.writeString(changed, outcome.receipt().replace("\"ERASED\"", "\"NOTHING_FOUND\""));
        assertThat(cl.execute("verify-receipt", changed.toString(), ledger.toString()))
                .isEqualTo(1);
        assertThat(outcome.receipt()).contains("\"members\":[\"n1\",\"n2\",\"n3\"]");
        assertThat(outcome.receipt()).doesNotContain("alice");
    }
}
