package dev.nepenthe.cluster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster verify-receipt} says when a receipt does not hold: a file that is not a receipt, a
 * ledger that recorded none of its keys. (A receipt that holds is checked end to end by {@link
 * ClusterDemoTest}, which runs the command on the demo's receipt.)
 */
final class VerifyReceiptCommandTest {

    @TempDir Path dir;

    @Test
    void aReceiptTheLedgerKnowsNothingOfDoesNotHold() throws Exception {
        Path receipt = dir.resolve("r.json");
        Files.writeString(
                receipt,
                "{\"kind\":\"nepenthe-cluster-receipt\",\"version\":1,\"group\":\"g\","
                        + "\"operation\":\"cfop-x-9\",\"logIndex\":9,\"tenant\":\"t\","
                        + "\"members\":[\"n1\"],\"attestations\":[{\"node\":\"n1\",\"state\":"
                        + "\"SEALED\",\"outcome\":\"ERASED\",\"localReceipt\":\"x\","
                        + "\"signature\":\"AAAA\"}],\"excused\":[],\"outcome\":\"ERASED\"}");
        Path ledger = dir.resolve("ledger.jsonl");
        Files.writeString(ledger, "");
        StringWriter out = new StringWriter();
        var cl = ClusterMain.commandLine();
        cl.setOut(new PrintWriter(out, true));
        int status = cl.execute("verify-receipt", receipt.toString(), ledger.toString());
        assertThat(status).isEqualTo(1);
        assertThat(out.toString())
                .contains("does NOT hold")
                .contains("n1: no node key recorded for it")
                .contains("the ledger holds no FORGET_SEALED line with this receipt");
    }
}
