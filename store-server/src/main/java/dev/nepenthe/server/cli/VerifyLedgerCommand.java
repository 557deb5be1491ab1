package dev.nepenthe.server.cli;

import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerifier;
import dev.nepenthe.core.internal.evidence.SigningKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nepenthe verify-ledger}: an evidence ledger, offline (see {@link LedgerVerifier}). */
@Command(
        name = "verify-ledger",
        mixinStandardHelpOptions = true,
        description =
                "Check an evidence ledger's hash chain and every signature offline, that it still"
                    + " holds the entry each given receipt names, and each witnessed head (a ledger"
                    + " cut short after a receipt was issued fails). Exit 0 when everything holds,"
                    + " 1 when something does not.")
public final class VerifyLedgerCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "LEDGER", description = "The ledger file (ledger.bin).")
    Path ledger;

    @Parameters(index = "1", paramLabel = "PUBLIC-KEY.pem", description = "The store's public key.")
    Path publicKey;

    @Parameters(
            index = "2..*",
            paramLabel = "RECEIPT",
            description = "Receipts that must be in the ledger.")
    List<Path> receipts = new ArrayList<>();

    @Option(
            names = "--head",
            paramLabel = "SEQ:HASH",
            description = "A head a witness recorded; repeatable.")
    List<String> heads = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        List<LedgerHead> parsed = new ArrayList<>();
        for (String h : heads) {
            parsed.add(LedgerHead.parse(h));
        }
        return LedgerVerifier.run(
                ledger,
                SigningKey.parsePem(Files.readString(publicKey)),
                receipts,
                parsed,
                System.out);
    }
}
