package dev.nepenthe.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * A write refused because the store is read-only: an earlier write to its files failed (a full
 * disk, an I/O error, a failed fsync). A store that cannot tell what reached the disk stops writing
 * at once, rather than retry an fsync whose second answer means nothing or append after bytes that
 * may be torn; searches and reads go on. {@link Nepenthe#health()} names the failure and the file;
 * reopening the store (once the disk is sound) recovers, and an unfinished forget resumes.
 *
 * <p>The message names no file (it may reach a remote client); the cause is the original failure.
 */
public final class StoreReadOnlyException extends UncheckedIOException {

    private static final long serialVersionUID = 1L;

    /** When the store became read-only. */
    private final Instant since;

    /**
     * A refusal of a write to a store that is read-only since {@code since}.
     *
     * @param since when the store became read-only
     * @param cause the write failure that made it so
     */
    public StoreReadOnlyException(Instant since, IOException cause) {
        super(
                "the store is read-only since "
                        + since
                        + ": a write to its files failed ("
                        + kind(cause)
                        + "); searches and reads go on, writes, deletes and forgets are refused"
                        + " until it is reopened once the disk is sound (health() names the file)",
                cause);
        this.since = since;
    }

    /**
     * When the store became read-only.
     *
     * @return the moment the first write failed
     */
    public Instant since() {
        return since;
    }

    /** What failed, without the file's name: the kind of error the operating system gave. */
    private static String kind(IOException e) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        for (String known :
                new String[] {
                    "No space left on device",
                    "Input/output error",
                    "Disk quota exceeded",
                    "Read-only file system"
                }) {
            if (m.contains(known)) {
                return known;
            }
        }
        return e.getClass().getSimpleName();
    }
}
