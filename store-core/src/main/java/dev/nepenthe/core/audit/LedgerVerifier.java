package dev.nepenthe.core.audit;

import dev.nepenthe.core.internal.evidence.SigningKey;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;

/**
 * Offline check of an evidence ledger, needing only the ledger file and the store's public key:
 * {@code java -cp store-core.jar dev.nepenthe.core.audit.LedgerVerifier LEDGER PUBLIC.pem [--head
 * SEQ:HASH]... [RECEIPT]...}. Every entry's chain link and signature are checked; each receipt
 * given must verify and name an entry the ledger holds, and each witnessed head must still be in
 * the ledger, so a ledger cut short after receipts were issued fails here. Exit status 0 when
 * everything holds, 1 when something does not (each printed), 2 when the check could not be made:
 * misuse, a file that cannot be read, a malformed key, head or ledger header (one line says which),
 * so that "could not check" is never mistaken for "does not hold".
 */
public final class LedgerVerifier {
    private LedgerVerifier() {}

    /**
     * The command line; see the class comment. Calls {@link System#exit} with the status.
     *
     * @param args the ledger file, the public key file, then {@code --head SEQ:HASH} and receipt
     *     files in any order
     */
    public static void main(String[] args) {
        try {
            System.exit(runCommand(args));
        } catch (IOException | RuntimeException e) {
            System.err.println("LedgerVerifier: could not check: " + e.getMessage());
            System.exit(2);
        }
    }

    private static int runCommand(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println(
                    "usage: LedgerVerifier LEDGER-FILE PUBLIC-KEY.pem [--head SEQ:HASH]..."
                            + " [RECEIPT-FILE]...");
            return 2;
        }
        List<LedgerHead> heads = new ArrayList<>();
        List<Path> receipts = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            if (args[i].equals("--head")) {
                if (++i >= args.length) {
                    System.err.println("--head expects SEQ:HASH");
                    return 2;
                }
                heads.add(LedgerHead.parse(args[i]));
            } else {
                receipts.add(Path.of(args[i]));
            }
        }
        var key = SigningKey.parsePem(Files.readString(Path.of(args[1])));
        return run(Path.of(args[0]), key, receipts, heads, System.out);
    }

    /**
     * Runs every check, printing one line each: the ledger's own verification, each head, each
     * receipt.
     *
     * @param ledger the ledger file
     * @param key the store's public key
     * @param receipts receipt files to check against the ledger
     * @param heads witnessed heads the ledger must still hold
     * @param out where the lines go
     * @return the exit status: 0 when everything holds, 1 otherwise
     * @throws IOException if the ledger or a receipt cannot be read, or the ledger's header is
     *     wrong
     */
    public static int run(
            Path ledger,
            PublicKey key,
            List<Path> receipts,
            List<LedgerHead> heads,
            PrintStream out)
            throws IOException {
        LedgerAudit audit = LedgerAudit.read(ledger, key);
        LedgerVerification v = audit.verification();
        boolean ok = v.ok();
        if (v.ok()) {
            out.println(
                    "ledger "
                            + ledger
                            + ": "
                            + v.entries()
                            + " entries verify, head "
                            + audit.head());
        } else {
            out.println(
                    "ledger "
                            + ledger
                            + ": BROKEN at entry "
                            + v.firstBadEntry()
                            + ": "
                            + v.problem()
                            + " ("
                            + v.entries()
                            + " entries before it verify)");
        }
        for (LedgerHead h : heads) {
            ok &= report(audit.checkHead(h), out);
        }
        for (Path r : receipts) {
            LedgerAudit.Check c = audit.checkReceipt(Files.readString(r));
            ok &=
                    report(
                            new LedgerAudit.Check(
                                    c.subject() + " (" + r.getFileName() + ")", c.problem()),
                            out);
        }
        return ok ? 0 : 1;
    }

    private static boolean report(LedgerAudit.Check c, PrintStream out) {
        out.println(
                c.ok()
                        ? c.subject() + ": held by the ledger"
                        : c.subject() + ": FAILS: " + c.problem());
        return c.ok();
    }
}
