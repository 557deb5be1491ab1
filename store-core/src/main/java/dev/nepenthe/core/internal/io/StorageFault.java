package dev.nepenthe.core.internal.io;

import dev.nepenthe.core.StoreReadOnlyException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.time.Instant;

/**
 * The store's read-only latch: the first write to its files that fails (in any collection, the
 * keystore, the journal, the operation log or the ledger) trips it, and from then on every write,
 * delete, checkpoint and forget step is refused while searches and reads go on. It is never reset
 * in place: after a failed fsync the kernel may have dropped pages the store believes written, and
 * only a reopen, which reads back what is really on disk, knows the state again (PostgreSQL's
 * answer to "fsyncgate" is the same: crash and recover).
 */
public final class StorageFault {

    private static final System.Logger LOG = System.getLogger(StorageFault.class.getName());

    private volatile IOException cause;
    private volatile Instant since;

    /**
     * Trips the latch if {@code failure} is (or was caused by) an I/O error and the latch is not
     * tripped yet; returns {@code failure} so the caller can throw it.
     */
    public <T extends Throwable> T trip(T failure) {
        IOException io = ioCause(failure);
        if (io != null) {
            synchronized (this) {
                if (cause == null) {
                    since = Instant.now();
                    cause = io;
                    // Messages of the store's I/O errors name files, never records' content.
                    LOG.log(
                            Level.ERROR,
                            "the store is read-only from now on: a write failed ("
                                    + io.getMessage()
                                    + "); searches go on, writes wait for a reopen once the disk is"
                                    + " sound");
                }
            }
        }
        return failure;
    }

    /**
     * Refuses a write once a write has failed.
     *
     * @throws StoreReadOnlyException if the latch is tripped
     */
    public void ensureWritable() {
        IOException c = cause;
        if (c != null) {
            throw new StoreReadOnlyException(since, c);
        }
    }

    /** Whether a write failed. */
    public boolean tripped() {
        return cause != null;
    }

    /** What failed, naming the file, for the operator; null while writes are accepted. */
    // Identity on purpose: a cause that is its own cause ends the chain.
    @SuppressWarnings("ReferenceEquality")
    public String problem() {
        IOException c = cause;
        if (c == null) {
            return null;
        }
        // The whole chain: the file is often named a level or two down (Lucene's merge, say).
        StringBuilder b = new StringBuilder("read-only since " + since + ": " + c);
        for (Throwable x = c.getCause(); x != null && x != x.getCause(); x = x.getCause()) {
            b.append("; caused by ").append(x);
        }
        return b.toString();
    }

    /** Whether {@code t} is (or was caused by) an I/O error, other than a read-only refusal. */
    public static boolean isIoFailure(Throwable t) {
        return ioCause(t) != null;
    }

    private static IOException ioCause(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause()) {
            if (x instanceof StoreReadOnlyException) {
                return null; // a refusal, not a new failure
            }
            if (x instanceof IOException io) {
                return io;
            }
            if (x instanceof UncheckedIOException u) {
                return u.getCause();
            }
        }
        return null;
    }
}
