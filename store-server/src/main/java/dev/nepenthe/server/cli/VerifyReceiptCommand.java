package dev.nepenthe.server.cli;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.server.Main;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code nepenthe verify-receipt}: a receipt's signature, offline, with only the store's public
 * key; with {@code --ledger}, also that the ledger holds the entry the receipt names.
 */
@Command(
        name = "verify-receipt",
        mixinStandardHelpOptions = true,
        description =
                "Check an erasure receipt's signature offline with the store's public key and print"
                    + " the signed JSON; with --ledger, also check that the ledger holds the entry"
                    + " the receipt names (same hash, sealing the same operation). Exit 0 when it"
                    + " verifies, 1 when it does not.")
public final class VerifyReceiptCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Parameters(index = "0", paramLabel = "RECEIPT", description = "The receipt file.")
    Path receipt;

    @Parameters(index = "1", paramLabel = "PUBLIC-KEY.pem", description = "The store's public key.")
    Path publicKey;

    @Option(
            names = "--ledger",
            paramLabel = "FILE",
            description = "The store's evidence ledger (ledger.bin) to check the receipt against.")
    Path ledger;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        String document = Files.readString(receipt);
        PublicKey key = SigningKey.parsePem(Files.readString(publicKey));
        String json = Receipt.verify(document, key);
        if (json == null) {
            out.println("receipt " + receipt + ": signature does NOT verify with " + publicKey);
            return Main.DOES_NOT_HOLD;
        }
        out.println("receipt " + receipt + ": signature verifies with " + publicKey);
        out.println(json);
        if (ledger != null) {
            LedgerAudit.Check check = LedgerAudit.read(ledger, key).checkReceipt(document);
            if (!check.ok()) {
                out.println(
                        "ledger "
                                + ledger
                                + ": does NOT hold the receipt's entry: "
                                + check.problem());
                return Main.DOES_NOT_HOLD;
            }
            out.println("ledger " + ledger + ": holds the entry the receipt names");
        }
        return 0;
    }
}
