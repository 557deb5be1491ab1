package dev.nepenthe.server;

import dev.nepenthe.core.audit.LedgerVerifier;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Command-line entry point: {@code nepenthe demo [--data DIR] [--index KIND]}. */
public final class Main {

    private static final String USAGE = """
            usage: nepenthe demo [--data DIR] [--index exact|hnsw|ivfpq]
                   nepenthe verify-receipt RECEIPT PUBLIC-KEY.pem
                   nepenthe verify-ledger LEDGER PUBLIC-KEY.pem [RECEIPT]...
              demo            build a store under DIR (default ./demo-data, wiped on each run), load a
                              small corpus of memories, search it, snapshot it, forget one person,
                              scan the folder for their notes, verify the signed receipt and show that
                              restoring the snapshot does not bring them back
              verify-receipt  check an erasure receipt's signature offline with the store's public key
                              (the demo writes both into its folder); prints the signed JSON
              verify-ledger   check an evidence ledger's hash chain and every signature offline, and
                              that it still holds the entry each given receipt names (a ledger cut
                              short after a receipt was issued fails)
            """;

    /**
     * The model's runtime (DJL) logs GPU probing at WARNING and Chronicle Map logs a banner at
     * INFO on every start; that is noise for a CPU-only embedded store. Held here so the levels
     * stick (java.util.logging keeps loggers only weakly).
     */
    private static final java.util.logging.Logger DJL_LOG = java.util.logging.Logger.getLogger("ai.djl");
    private static final java.util.logging.Logger CHRONICLE_LOG = java.util.logging.Logger.getLogger("net.openhft");

    private Main() {}

    public static void main(String[] args) throws Exception {
        DJL_LOG.setLevel(java.util.logging.Level.SEVERE);
        CHRONICLE_LOG.setLevel(java.util.logging.Level.WARNING);
        String command = args.length == 0 ? "demo" : args[0];
        if (command.equals("verify-receipt") && args.length != 3) {
            fail(command + " expects two files, got " + (args.length - 1) + " arguments");
        }
        if (command.equals("verify-ledger") && args.length < 3) {
            fail(command + " expects a ledger, a public key and any receipts, got " + (args.length - 1) + " arguments");
        }
        if (command.equals("verify-receipt")) {
            System.exit(verifyReceipt(Path.of(args[1]), Path.of(args[2])));
        }
        if (command.equals("verify-ledger")) {
            List<Path> receipts = new java.util.ArrayList<>();
            for (int i = 3; i < args.length; i++) {
                receipts.add(Path.of(args[i]));
            }
            System.exit(verifyLedger(Path.of(args[1]), Path.of(args[2]), receipts));
        }
        Path data = Path.of("demo-data");
        String index = "exact";
        for (int i = 1; i < args.length; i++) {
            switch (args[i]) {
                case "--data" -> data = Path.of(value(args, ++i, "--data"));
                case "--index" -> index = value(args, ++i, "--index");
                default -> fail("unknown option '" + args[i] + "'");
            }
        }
        switch (command) {
            case "demo" -> new Demo(data, new MiniLmEmbedder(), index, System.out).run();
            case "help", "--help", "-h" -> System.out.print(USAGE);
            default -> fail("unknown command '" + command + "'");
        }
    }

    /** Exit status 0 when the receipt's signature verifies under the key, 1 when it does not. */
    static int verifyReceipt(Path receipt, Path publicKey) throws java.io.IOException {
        String json = Receipt.verify(Files.readString(receipt), SigningKey.parsePem(Files.readString(publicKey)));
        if (json == null) {
            System.out.println("receipt " + receipt + ": signature does NOT verify with " + publicKey);
            return 1;
        }
        System.out.println("receipt " + receipt + ": signature verifies with " + publicKey);
        System.out.println(json);
        return 0;
    }

    static int verifyLedger(Path ledger, Path publicKey, List<Path> receipts) throws java.io.IOException {
        return LedgerVerifier.run(ledger, SigningKey.parsePem(Files.readString(publicKey)), receipts, List.of(), System.out);
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            fail(option + " expects a value");
        }
        return args[i];
    }

    private static void fail(String message) {
        System.err.println("nepenthe: " + message);
        System.err.print(USAGE);
        System.exit(2);
    }
}
