package dev.nepenthe.cluster.cli;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.nepenthe.cluster.internal.ClusterReceipt;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe cluster verify-receipt RECEIPT LEDGER}: checks a replicated forget's receipt
 * offline, as an auditor would, against one replica's cluster ledger: every member accounted for,
 * every attestation signed by the node key and every local receipt by the store key the ledger
 * recorded for that member, and the ledger holding this very receipt in its chain.
 */
@Command(
        name = "verify-receipt",
        mixinStandardHelpOptions = true,
        description = {
            "Check a cluster receipt (the JSON 'nepenthe forget' prints for a cfop- operation)"
                    + " offline against the keys a replica's cluster ledger"
                    + " (DATA/cluster/ledger.jsonl) recorded.",
            "Exit 0 when it holds, 1 when it does not."
        })
final class VerifyReceiptCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Parameters(index = "0", paramLabel = "RECEIPT", description = "The receipt's JSON file.")
    Path receipt;

    @Parameters(index = "1", paramLabel = "LEDGER", description = "A replica's cluster ledger.")
    Path ledger;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        String text = Files.readString(receipt, StandardCharsets.UTF_8).strip();
        LedgerKeys keys = LedgerKeys.read(ledger);
        List<String> problems =
                new ArrayList<>(ClusterReceipt.verify(text, keys.nodeKeys(), keys.storeKeys()));
        if (!ledgerHolds(text)) {
            problems.add(
                    "the ledger holds no FORGET_SEALED line with this receipt (another group's"
                            + " ledger, or one cut before the forget sealed)");
        }
        if (!problems.isEmpty()) {
            out.println("receipt " + receipt + " does NOT hold:");
            problems.forEach(p -> out.println("  " + p));
            return ClusterMain.DOES_NOT_HOLD;
        }
        JsonObject o = JsonParser.parseString(text).getAsJsonObject();
        out.println(
                "receipt "
                        + receipt
                        + " holds: operation "
                        + o.get("operation").getAsString()
                        + " at log index "
                        + o.get("logIndex").getAsLong()
                        + ", outcome "
                        + o.get("outcome").getAsString()
                        + "; members "
                        + o.get("members")
                        + ", attested "
                        + o.getAsJsonArray("attestations").size()
                        + ", excused "
                        + o.getAsJsonArray("excused").size());
        return 0;
    }

    private boolean ledgerHolds(String text) throws IOException {
        for (String line : Files.readAllLines(ledger, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            try {
                JsonObject o = JsonParser.parseString(line).getAsJsonObject();
                if ("FORGET_SEALED".equals(o.get("kind").getAsString())
                        && text.equals(o.get("receipt").getAsString())) {
                    return true;
                }
            } catch (RuntimeException e) {
                // a line still being written: LedgerKeys judged the chain
            }
        }
        return false;
    }
}
