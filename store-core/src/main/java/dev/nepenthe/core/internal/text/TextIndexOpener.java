package dev.nepenthe.core.internal.text;

import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.crypto.Keystore;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.lucene.store.LockObtainFailedException;

/**
 * Opens a collection's text index reconciled with its records, and rebuilds it from the records
 * when its files cannot be read.
 *
 * <p>Why a rebuild and not a refusal. The text index is derived from the records, as the vector
 * index is, and the same rule holds (see {@code IndexGenerations}): a file that cannot be read is
 * named in the log and in the open report, and the index is built again from the records that
 * survive. The case that matters is a copy of a data folder taken before a forget and opened with
 * the keystore as it is after it: the forget merged the subject's documents away and destroyed the
 * keys of the segments that held them (and of the commit point naming them), so the copy's text
 * index is ciphertext without keys. The records in the copy lose the subject too (its key is gone
 * and the tombstone journal names its records), so a rebuild from them indexes only what survives.
 * Refusing the open would keep privacy but leave the store unusable.
 *
 * <p>What is given up goes for good: every file of the folder has its key destroyed (those whose
 * keys are gone already are simply deleted), before the empty index is filled again.
 */
public final class TextIndexOpener {

    private static final System.Logger LOG = System.getLogger(TextIndexOpener.class.getName());

    private TextIndexOpener() {}

    /** An open text index and what opening it did. */
    public record Opened(TextIndex index, OpenReport.TextRecovery recovery) {}

    /**
     * Opens (creating if needed) the text index in {@code folder} and reconciles it with the
     * records ({@link TextIndex#reconcile}); if either fails, destroys the folder's files and
     * builds the index from the records. Costs, on a rebuild, the analysis of every record's text.
     *
     * @param collection the collection's name, for the log line
     * @param collectionId the collection's incarnation id: file keys are scoped by it
     * @throws IOException if the rebuilt index fails too, or if another writer holds the folder's
     *     lock (a folder in use is never wiped)
     */
    public static Opened open(
            Path folder,
            String analyzer,
            Keystore keystore,
            KeyedHash hashes,
            String collection,
            String collectionId,
            TextIndex.Records records)
            throws IOException {
        TextIndex t = null;
        String why;
        try {
            t = TextIndex.open(folder, analyzer, keystore, hashes, collectionId);
            TextIndex.Reconciled r = t.reconcile(records);
            return new Opened(t, new OpenReport.TextRecovery(false, r.removed(), r.added(), null));
        } catch (LockObtainFailedException e) {
            closeQuietly(t, e);
            throw e;
        } catch (IOException | RuntimeException e) {
            closeQuietly(t, e);
            // Lucene's messages name the file and the reason, never a document's content.
            why = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "collection ''{0}'': text index unreadable, rebuilding it from the"
                        + " records: {1}",
                collection,
                why);
        TextIndex.destroyFolder(folder, keystore, hashes, collectionId);
        TextIndex fresh = TextIndex.open(folder, analyzer, keystore, hashes, collectionId);
        try {
            TextIndex.Reconciled r = fresh.reconcile(records);
            return new Opened(
                    fresh, new OpenReport.TextRecovery(true, r.removed(), r.added(), why));
        } catch (IOException | RuntimeException e) {
            closeQuietly(fresh, e);
            throw e;
        }
    }

    private static void closeQuietly(TextIndex t, Exception cause) {
        if (t == null) {
            return;
        }
        try {
            t.close();
        } catch (IOException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
