package dev.nepenthe.server.cli;

import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.server.Main;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code nepenthe verify-receipt}: a receipt's signature, offline, with only the store's public key. */
@Command(name = "verify-receipt", mixinStandardHelpOptions = true,
        description = "Check an erasure receipt's signature offline with the store's public key and print the signed JSON. Exit 0 when it verifies, 1 when it does not.")
public final class VerifyReceiptCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "RECEIPT", description = "The receipt file.")
    Path receipt;

    @Parameters(index = "1", paramLabel = "PUBLIC-KEY.pem", description = "The store's public key.")
    Path publicKey;

    @Override
    public Integer call() throws Exception {
        String json = Receipt.verify(Files.readString(receipt), SigningKey.parsePem(Files.readString(publicKey)));
        if (json == null) {
            System.out.println("receipt " + receipt + ": signature does NOT verify with " + publicKey);
            return Main.DOES_NOT_HOLD;
        }
        System.out.println("receipt " + receipt + ": signature verifies with " + publicKey);
        System.out.println(json);
        return 0;
    }
}
