package dev.nepenthe.core.internal.evidence;

import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.audit.LedgerVerification;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.List;

/**
 * How the open ledger hands an auditor's view of the entries it already holds in memory (verified
 * at open, appended since) without re-reading the file. {@link LedgerAudit} keeps its constructor
 * to itself, so that no user can build an audit over entries that were never verified; it installs
 * this factory when it is initialised.
 */
public final class AuditAccess {

    /** Builds an audit over entries the caller has verified. */
    public interface Factory {
        LedgerAudit over(
                Path file,
                PublicKey key,
                List<LedgerEntry> entries,
                LedgerVerification verification);
    }

    private static volatile Factory factory;

    private AuditAccess() {}

    /** Called once by {@link LedgerAudit}'s static initialiser; a second call is refused. */
    public static synchronized void install(Factory f) {
        if (factory != null) {
            throw new IllegalStateException("the audit factory is installed once, by LedgerAudit");
        }
        factory = f;
    }

    static LedgerAudit over(
            Path file, PublicKey key, List<LedgerEntry> entries, LedgerVerification verification) {
        if (factory == null) {
            try {
                Class.forName(
                        LedgerAudit.class.getName(), true, LedgerAudit.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        }
        return factory.over(file, key, entries, verification);
    }
}
