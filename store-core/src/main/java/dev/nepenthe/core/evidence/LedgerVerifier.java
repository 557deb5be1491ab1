package dev.nepenthe.core.evidence;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Offline check of an evidence ledger, needing only the ledger file and the store's public
 * key: {@code java -cp store-core.jar dev.nepenthe.core.evidence.LedgerVerifier LEDGER PUBLIC.pem}.
 * Exit status 0 when every entry verifies, 1 at the first that does not (printed), 2 on misuse.
 */
public final class LedgerVerifier {
    private LedgerVerifier() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: LedgerVerifier LEDGER-FILE PUBLIC-KEY.pem");
            System.exit(2);
        }
        var key = SigningKey.parsePem(Files.readString(Path.of(args[1])));
        EvidenceLedger.Verification v = EvidenceLedger.verify(Path.of(args[0]), key);
        if (v.ok()) {
            System.out.println("ledger OK: " + v.entries() + " entries, head " + v.headHash());
        } else {
            System.out.println("ledger BROKEN at entry " + v.firstBadEntry() + ": " + v.problem()
                    + " (" + v.entries() + " entries before it verify)");
            System.exit(1);
        }
    }
}
