package dev.nepenthe.core.audit;

import dev.nepenthe.core.internal.evidence.AuditAccess;
import dev.nepenthe.core.internal.evidence.EvidenceLedger;
import java.io.IOException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A read-only view of an evidence ledger for an auditor, needing only the file and the store's
 * public key: the entries that verify, the entries of one operation, and cross-checks of what was
 * handed out against the ledger. A receipt names its ledger entry (sequence and hash), and a
 * witnessed head names the last entry at some moment; a ledger that was cut short, rolled back or
 * replaced since no longer holds them, and the check says which.
 *
 * <p>Immutable once read: it holds the entries as they were on disk when {@link #read} ran, so the
 * checks below are in-memory and cost at most a pass over the entries.
 */
public final class LedgerAudit {

    private static final Pattern LEDGER_ENTRY =
            Pattern.compile(
                    "\"ledgerEntry\":\\{(?:\"epoch\":(\\d+),)?\"hash\":\"([0-9a-f]{64})\",\"seq\":(\\d+)\\}");
    private static final Pattern EPOCH = Pattern.compile("\"epoch\":(\\d+)");
    private static final Pattern OPERATION = Pattern.compile("\"operation\":\"([^\"]+)\"");

    /**
     * The outcome of one cross-check: what was checked ("receipt fop-...", "head 12:ab..") and, if
     * it failed, why.
     *
     * @param subject what was checked (a receipt's operation, a head, an operation's sealed entry)
     * @param problem why the check failed, or null when it passed
     */
    public record Check(String subject, String problem) {
        /**
         * Whether the check passed.
         *
         * @return true when there is no problem
         */
        public boolean ok() {
            return problem == null;
        }
    }

    private final Path file;
    private final PublicKey key;
    private final List<LedgerEntry> entries;
    private final LedgerVerification verification;

    static {
        AuditAccess.install(LedgerAudit::new);
    }

    private LedgerAudit(Path file, PublicKey key, List<LedgerEntry> entries, LedgerVerification v) {
        this.file = file;
        this.key = key;
        this.entries = List.copyOf(entries);
        this.verification = v;
    }

    /**
     * Reads and verifies the ledger file (hash chain, signatures) as it is on disk now. Reads the
     * whole file into memory and checks one signature per entry; a bad entry stops the scan there
     * (see {@link #verification()}) rather than throwing.
     *
     * @param ledger the ledger file
     * @param publicKey the store's Ed25519 public key
     * @return the audit view
     * @throws IOException if the file cannot be read
     * @throws dev.nepenthe.core.CorruptFileException if its header is not an evidence ledger's
     */
    public static LedgerAudit read(Path ledger, PublicKey publicKey) throws IOException {
        List<LedgerEntry> out = new ArrayList<>();
        LedgerVerification v = EvidenceLedger.scanInto(ledger, publicKey, out);
        return new LedgerAudit(ledger, publicKey, out, v);
    }

    /**
     * The ledger file this view was read from.
     *
     * @return the path given to {@link #read}
     */
    public Path file() {
        return file;
    }

    /**
     * The key the entries were verified with.
     *
     * @return the public key given to {@link #read}
     */
    public PublicKey publicKey() {
        return key;
    }

    /**
     * The file's own verification: chain and signatures up to the first bad entry.
     *
     * @return the verification
     */
    public LedgerVerification verification() {
        return verification;
    }

    /**
     * The entries that verify, in order (all of them when {@link #verification()} is ok).
     *
     * @return an immutable list
     */
    public List<LedgerEntry> entries() {
        return entries;
    }

    /**
     * The head of the verified entries.
     *
     * @return the last verified entry's position and hash, or sequence -1 with the all-zero genesis
     *     hash when no entry verifies
     */
    public LedgerHead head() {
        return entries.isEmpty()
                ? new LedgerHead(-1, verification.headHash())
                : new LedgerHead(entries.size() - 1, entries.get(entries.size() - 1).hashHex());
    }

    /**
     * Every entry that names this operation, oldest first. A pass over the entries.
     *
     * @param operationId the operation's id
     * @return the entries, empty when none names it
     */
    public List<LedgerEntry> entriesOf(String operationId) {
        List<LedgerEntry> out = new ArrayList<>();
        for (LedgerEntry e : entries) {
            if (operationId.equals(operationOf(e.body()))) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * The "sealed" entry of an operation, if the ledger holds one. A pass over the entries.
     *
     * @param operationId the operation's id
     * @return the entry, or empty
     */
    public Optional<LedgerEntry> sealedEntry(String operationId) {
        return entriesOf(operationId).stream().filter(e -> isSealed(e.body())).findFirst();
    }

    /**
     * Checks a receipt: its signature verifies under the public key, and the ledger holds the entry
     * it names, with the same hash, sealing the same operation, in this ledger's epoch.
     *
     * @param document the receipt as issued (JSON, separator, signature line)
     * @return the check; a failure says whether the signature, the entry or the epoch is wrong
     */
    public Check checkReceipt(String document) {
        String json = Receipt.verify(document, key);
        if (json == null) {
            return new Check("receipt", "its signature does not verify with the given public key");
        }
        Matcher op = OPERATION.matcher(json);
        Matcher at = LEDGER_ENTRY.matcher(json);
        if (!op.find() || !at.find()) {
            return new Check(
                    "receipt",
                    "it names no operation or no ledger entry (not a Nepenthe erasure receipt?)");
        }
        String subject = "receipt " + op.group(1);
        int named = at.group(1) == null ? 0 : Integer.parseInt(at.group(1));
        if (named != epoch()) {
            return new Check(
                    subject,
                    "it names an entry of ledger epoch "
                            + named
                            + ", and this ledger is epoch "
                            + epoch()
                            + " (an operator restarted the ledger; check the receipt against the"
                            + " archived ledger of its epoch)");
        }
        return new Check(
                subject, entryProblem(op.group(1), Long.parseLong(at.group(3)), at.group(2)));
    }

    /**
     * Checks a head recorded earlier (by the store's anchor or an outside witness): the ledger
     * still holds it. A head at sequence -1 (an empty ledger) always passes.
     *
     * @param witnessed the head as recorded
     * @return the check; a failure says whether the ledger was cut short or rolled back
     */
    public Check checkHead(LedgerHead witnessed) {
        String subject = "head " + witnessed;
        if (witnessed.seq() < 0) {
            return new Check(subject, null);
        }
        if (witnessed.seq() >= entries.size()) {
            return new Check(subject, missing(witnessed.seq()));
        }
        if (!entries.get((int) witnessed.seq()).hashHex().equals(witnessed.hash())) {
            return new Check(
                    subject,
                    "entry "
                            + witnessed.seq()
                            + " is not the entry that was witnessed there (the"
                            + " ledger was rolled back or replaced)");
        }
        return new Check(subject, null);
    }

    /**
     * Checks that the ledger holds, at {@code named}, the entry sealing operation {@code id} (as
     * its receipt names it), without checking a receipt signature.
     *
     * @param id the operation's id
     * @param named the entry's position and hash, as the receipt names it
     * @return the check
     * @throws IndexOutOfBoundsException if {@code named} is at sequence -1 (the check does not
     *     handle an empty-ledger head)
     */
    public Check checkSealedEntry(String id, LedgerHead named) {
        return new Check("operation " + id, entryProblem(id, named.seq(), named.hash()));
    }

    /**
     * Why the ledger does not hold operation {@code id}'s sealed entry at {@code seq} with {@code
     * hash}, or null.
     */
    private String entryProblem(String id, long seq, String hash) {
        if (seq < 0) {
            return "entry "
                    + seq
                    + " names no entry (a sealed operation's entry has a sequence number of 0 or"
                    + " more)";
        }
        if (seq >= entries.size()) {
            return missing(seq);
        }
        LedgerEntry e = entries.get((int) seq);
        if (!e.hashHex().equals(hash)) {
            return "ledger entry "
                    + seq
                    + " is not the entry the receipt names (the ledger was rolled back or"
                    + " replaced)";
        }
        if (!isSealed(e.body()) || !id.equals(operationOf(e.body()))) {
            return "ledger entry " + seq + " does not seal operation " + id;
        }
        return null;
    }

    private String missing(long seq) {
        return verification.ok()
                ? "the ledger holds "
                        + entries.size()
                        + " entries, so entry "
                        + seq
                        + " is missing (the ledger was cut short)"
                : "entry "
                        + seq
                        + " is not among the "
                        + entries.size()
                        + " entries that verify ("
                        + verification.problem()
                        + ")";
    }

    /**
     * The ledger entry a receipt names. Does not verify the receipt.
     *
     * @param receiptJson a receipt, or its JSON part
     * @return the entry's position and hash, or null when the document names none
     */
    public static LedgerHead entryNamedBy(String receiptJson) {
        Matcher at = LEDGER_ENTRY.matcher(receiptJson);
        return at.find() ? new LedgerHead(Long.parseLong(at.group(3)), at.group(2)) : null;
    }

    /**
     * This ledger's epoch: 0 for a store's first ledger; a ledger an operator started after a
     * damaged one opens with a "ledger-restart" entry that names its epoch and the archived file.
     *
     * @return the epoch
     */
    public int epoch() {
        if (entries.isEmpty() || !isRestart(entries.get(0).body())) {
            return 0;
        }
        Matcher m = EPOCH.matcher(entries.get(0).body());
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /**
     * Whether an entry body opens a ledger restarted after a damaged one.
     *
     * @param body an entry's body
     * @return true for a "ledger-restart" entry
     */
    public static boolean isRestart(String body) {
        return body.contains("\"type\":\"ledger-restart\"");
    }

    /**
     * The operation id an entry body names (bodies are canonical JSON with sorted keys).
     *
     * @param body an entry's body
     * @return the first {@code "operation"} value, or null when there is none
     */
    public static String operationOf(String body) {
        Matcher m = OPERATION.matcher(body);
        return m.find() ? m.group(1) : null;
    }

    /**
     * Whether an entry body records an operation sealing.
     *
     * @param body an entry's body
     * @return true for a forget entry whose event is "sealed"
     */
    public static boolean isSealed(String body) {
        return body.contains("\"event\":\"sealed\"") && body.contains("\"type\":\"forget\"");
    }
}
