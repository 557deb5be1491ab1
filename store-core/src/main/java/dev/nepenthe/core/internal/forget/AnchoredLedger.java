package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.LedgerHead;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.evidence.EvidenceLedger;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The evidence ledger as the forget protocol keeps it: a chain that verifies can still have been
 * cut short, so every append is anchored (its head fsynced into the operation log), and the ledger
 * is cross-checked against that anchor and against the entry every sealed operation's receipt
 * names, at open and on {@link #verify}. A ledger that fails is kept read-only: the protocol
 * refuses new forgets while searches go on, until an operator puts back a sound copy or {@linkplain
 * #restart restarts} it. Callers hold the protocol's monitor.
 */
public final class AnchoredLedger implements Closeable {

    private static final System.Logger LOG = System.getLogger(AnchoredLedger.class.getName());

    private final SigningKey signer;
    private final OperationLog log;

    /** The store's test points: where a test stops the worker dead. */
    private final TestPoints points;

    /** Replaced only by {@link #restart}. */
    private volatile EvidenceLedger ledger;

    /** The "sealed" entry of each operation that has one, by operation id. */
    private final Map<String, LedgerEntry> sealedEntries = new ConcurrentHashMap<>();

    /**
     * Why the ledger cannot be trusted (file damage, lost anchor, missing sealed entry), or null.
     */
    private volatile String problem;

    private int reconciledWithoutEvidence;

    private AnchoredLedger(
            SigningKey signer, OperationLog log, EvidenceLedger ledger, TestPoints points) {
        this.signer = signer;
        this.log = log;
        this.points = points;
        this.ledger = ledger;
        indexSealed();
    }

    /**
     * Opens the ledger; a damaged file opens read-only (see {@link
     * EvidenceLedger#openAllowingDamage}).
     */
    public static AnchoredLedger open(
            Path file, SigningKey signer, OperationLog log, TestPoints points) throws IOException {
        return new AnchoredLedger(
                signer, log, EvidenceLedger.openAllowingDamage(file, signer), points);
    }

    /** One pass over the entries; from then on a seal finds its entry by operation id. */
    private void indexSealed() {
        sealedEntries.clear();
        for (LedgerEntry e : ledger.entries()) {
            if (LedgerAudit.isSealed(e.body())) {
                sealedEntries.put(LedgerAudit.operationOf(e.body()), e);
            }
        }
    }

    /** Cross-checks the ledger as read at open against the anchor and the sealed operations. */
    public void checkAtOpen(Collection<OperationLog.Public> operations) throws IOException {
        problem = crossCheck(ledger.audit(), operations);
        if (problem != null) {
            LOG.log(
                    Level.ERROR,
                    "{0}. Searches go on; new forgets, holds and overrides are refused and"
                        + " unfinished forgets wait (their scopes stay blocked) until the ledger is"
                        + " put back",
                    problem);
        } else if (log.ledgerHead() == null && !ledger.entries().isEmpty()) {
            // A store from before anchoring: anchor what is there now.
            log.saveLedgerHead(ledger.head(), log.ledgerEpoch());
        }
    }

    /**
     * Appends an entry, then anchors the new head in the operation log: a ledger found shorter than
     * its anchor, or with another entry there, was cut short or rolled back. (A crash between the
     * two leaves the ledger one entry past its anchor, which is fine: entries past the anchor still
     * chain and carry the store's signature.)
     *
     * @throws IllegalStateException while the ledger is damaged
     */
    public LedgerEntry append(Map<String, Object> body) throws IOException {
        ensureSound();
        LedgerEntry e = ledger.append(body);
        if ("sealed".equals(body.get("event")) && body.get("operation") instanceof String op) {
            sealedEntries.put(op, e);
        }
        ForgetCrash.point(points, "ledger-appended");
        log.saveLedgerHead(new LedgerHead(e.seq(), e.hashHex()), log.ledgerEpoch());
        return e;
    }

    public LedgerEntry sealedEntry(String operationId) {
        return sealedEntries.get(operationId);
    }

    /**
     * Why the ledger cannot be trusted, or null: the file's own chain and signatures, its epoch and
     * the head the operation log anchored, and the entry each sealed operation's receipt names.
     */
    private String crossCheck(LedgerAudit audit, Collection<OperationLog.Public> operations) {
        LedgerVerification v = audit.verification();
        if (!v.ok()) {
            return audit.file()
                    + ": evidence ledger fails verification at entry "
                    + v.firstBadEntry()
                    + ": "
                    + v.problem();
        }
        if (audit.epoch() != log.ledgerEpoch()) {
            return audit.file()
                    + ": the ledger is of epoch "
                    + audit.epoch()
                    + ", and the operation log anchors epoch "
                    + log.ledgerEpoch()
                    + " (a ledger of another epoch was put in its place)";
        }
        LedgerHead anchor = log.ledgerHead();
        if (anchor != null) {
            LedgerAudit.Check c = audit.checkHead(anchor);
            if (!c.ok()) {
                return audit.file()
                        + ": the operation log anchors ledger entry "
                        + anchor.seq()
                        + ", but "
                        + c.problem();
            }
        }
        for (OperationLog.Public op : operations) {
            // Operations sealed in an earlier epoch were judged when the operator restarted the
            // ledger: the restart entry lists those whose entries were lost.
            if (sealedInThisEpoch(op)) {
                LedgerHead named = LedgerAudit.entryNamedBy(op.receipt);
                LedgerAudit.Check c =
                        named == null
                                ? new LedgerAudit.Check("", "its receipt names no ledger entry")
                                : audit.checkSealedEntry(op.id, named);
                if (!c.ok()) {
                    return audit.file() + ": sealed forget operation " + op.id + ": " + c.problem();
                }
            }
        }
        return null;
    }

    private boolean sealedInThisEpoch(OperationLog.Public op) {
        return op.state == OperationState.SEALED
                && op.receipt != null
                && op.ledgerEpoch == log.ledgerEpoch();
    }

    /**
     * Re-reads the file and cross-checks it. A problem found while serving (the file was changed
     * under the store) stops appends from then on.
     */
    public LedgerVerification verify(Collection<OperationLog.Public> operations)
            throws IOException {
        LedgerAudit audit = LedgerAudit.read(ledger.file(), signer.publicKey());
        String found = crossCheck(audit, operations);
        LedgerVerification v = audit.verification();
        if (found != null && problem == null) {
            problem = found;
            LOG.log(
                    Level.ERROR,
                    "{0}; new forgets, holds and overrides are refused from now on",
                    found);
        }
        if (found == null || !v.ok()) {
            return v;
        }
        return new LedgerVerification(v.entries(), v.entries(), found, v.headHash());
    }

    /**
     * The operator's way out when no sound copy of a damaged ledger exists: the damaged file is
     * kept, renamed, never changed, and a new ledger begins with a signed "ledger-restart" entry
     * naming the archived file (name, SHA-256, entries that verify, its head, the problem), the
     * head the operation log had anchored, the sealed operations whose entries the damaged file no
     * longer holds, and the operator's reason code. Receipts issued from then on name the new
     * epoch. Refused while the ledger is sound.
     *
     * @return the new ledger's head (hand it to the outside witness, if there is one)
     */
    public LedgerHead restart(String reasonCode, Collection<OperationLog.Public> operations)
            throws IOException {
        ForgetRequest.checkReasonCode(reasonCode);
        if (problem == null) {
            throw new IllegalStateException(
                    "restart of the evidence ledger: expected a damaged ledger (see health()),"
                            + " found a sound one; a sound ledger is never restarted");
        }
        Path file = ledger.file();
        LedgerAudit onDisk = LedgerAudit.read(file, signer.publicKey());
        int epoch = Math.max(log.ledgerEpoch(), onDisk.epoch()) + 1;
        List<String> lost = new ArrayList<>();
        for (OperationLog.Public op : operations) {
            if (sealedInThisEpoch(op)) {
                LedgerHead named = LedgerAudit.entryNamedBy(op.receipt);
                if (named == null || !onDisk.checkSealedEntry(op.id, named).ok()) {
                    lost.add(op.id);
                }
            }
        }
        Path archived = file.resolveSibling("ledger.epoch-" + (epoch - 1) + ".damaged.bin");
        for (int n = 2; Files.exists(archived); n++) {
            archived =
                    file.resolveSibling("ledger.epoch-" + (epoch - 1) + ".damaged-" + n + ".bin");
        }
        String sha = sha256(file);
        ledger.close();
        Files.move(file, archived, StandardCopyOption.ATOMIC_MOVE);
        ChecksummedFiles.fsyncDirectory(file.toAbsolutePath().getParent());
        EvidenceLedger fresh = EvidenceLedger.open(file, signer);
        Map<String, Object> previous = new TreeMap<>();
        previous.put("file", archived.getFileName().toString());
        previous.put("sha256", sha);
        previous.put("entriesThatVerify", onDisk.entries().size());
        previous.put("head", onDisk.head().toString());
        previous.put("anchoredHead", log.ledgerHead() == null ? null : log.ledgerHead().toString());
        previous.put("epoch", epoch - 1);
        Map<String, Object> body = new TreeMap<>();
        body.put("type", "ledger-restart");
        body.put("epoch", epoch);
        body.put("reason", reasonCode);
        body.put("previous", previous);
        body.put("sealedOperationsWithoutEntry", lost);
        body.put("policy", ForgetEvidence.POLICY);
        LedgerEntry e = fresh.append(body);
        ledger = fresh;
        indexSealed();
        log.saveLedgerHead(new LedgerHead(e.seq(), e.hashHex()), epoch);
        problem = null;
        LOG.log(
                Level.WARNING,
                "evidence ledger restarted by the operator (reason {0}): epoch {1}, the damaged"
                        + " file kept as {2}; {3} sealed operations had lost their entries",
                reasonCode,
                epoch,
                archived.getFileName(),
                lost.size());
        return new LedgerHead(e.seq(), e.hashHex());
    }

    private static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of()
                    .formatHex(
                            MessageDigest.getInstance("SHA-256")
                                    .digest(IoErrors.readAllBytes(file)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Refuses what needs a sound ledger.
     *
     * @throws IllegalStateException naming the problem while the ledger is damaged
     */
    public void ensureSound() {
        String p = problem;
        if (p != null) {
            throw new IllegalStateException(
                    "the evidence ledger is damaged ("
                            + p
                            + "): new forgets, holds and overrides are refused until an operator"
                            + " puts back a ledger that holds every anchored entry, or restarts it"
                            + " (restartLedger); searches go on");
        }
    }

    public String problem() {
        return problem;
    }

    public void countUnrecorded(int removed) {
        reconciledWithoutEvidence += removed;
    }

    public int reconciledWithoutEvidence() {
        return reconciledWithoutEvidence;
    }

    public int epoch() {
        return log.ledgerEpoch();
    }

    public LedgerHead head() {
        return ledger.head();
    }

    public LedgerHead anchoredHead() {
        return log.ledgerHead();
    }

    public Path file() {
        return ledger.file();
    }

    public LedgerAudit audit() {
        return ledger.audit();
    }

    @Override
    public void close() {
        ledger.close();
    }
}
