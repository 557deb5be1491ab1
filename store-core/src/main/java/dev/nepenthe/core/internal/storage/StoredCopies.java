package dev.nepenthe.core.internal.storage;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Where the sealed copy of each ordinal lies, so that a get or a search can read it without the
 * writer's lock: in the write-ahead log (held here until a checkpoint folds it into a segment), or
 * at an offset of its bucket's segment file. The writer changes this only under the write lock and
 * never while it writes a file; a read holds the read lock while it copies the sealed bytes out.
 */
final class StoredCopies {

    /** A stored copy and the file it was read from (for error messages). */
    record Found(SealedRecord copy, Path where) {}

    /** A bucket a checkpoint rewrote: its new file (null when emptied), members and offsets. */
    static final class Rewritten {
        final int bucket;
        final String name;
        final int[] ordinals;
        final long[] offsets;

        Rewritten(int bucket, String name, int[] ordinals, long[] offsets) {
            this.bucket = bucket;
            this.name = name;
            this.ordinals = ordinals;
            this.offsets = offsets;
        }
    }

    private final Path dir;

    /**
     * Sealed bytes of records written since the last checkpoint (from the log), so the checkpoint
     * copies them into segments instead of encrypting them again.
     */
    private final Map<Integer, SealedRecord> pendingSealed = new HashMap<>();

    /** Guards everything below and {@link #pendingSealed}. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    /**
     * Per ordinal, the segment file holding its copy (a handle into {@link #segmentFiles}, 0 for
     * none) and where that copy starts. An ordinal whose record left keeps its last copy here until
     * the ordinal is reused or the copy's segment is replaced: a reader checks what it read against
     * the record it asked for.
     */
    private int[] copySegment = new int[16];

    private long[] copyOffset = new long[16];

    /** The live segment files by handle. A handle is never reused. */
    private final Map<Integer, SegmentFile> segmentFiles = new HashMap<>();

    /** Each bucket's current segment file (its handle; 0 for none). */
    private final int[] bucketSegment;

    private int nextSegmentHandle = 1;

    StoredCopies(Path dir, int bucketCount) {
        this.dir = dir;
        this.bucketSegment = new int[bucketCount];
    }

    /**
     * Makes {@code name} bucket {@code b}'s live segment file (none when null) and closes the one
     * it replaces; returns its handle (0 for none). Under the write lock, or during the open,
     * before any read.
     */
    int install(int b, String name) {
        retire(b);
        if (name == null) {
            return 0;
        }
        int handle = nextSegmentHandle++;
        if (handle <= 0) {
            throw new IllegalStateException(
                    dir + ": more than 2^31 segment files made in one open");
        }
        segmentFiles.put(handle, new SegmentFile(dir.resolve("segments").resolve(name)));
        bucketSegment[b] = handle;
        return handle;
    }

    private void retire(int b) {
        SegmentFile old = segmentFiles.remove(bucketSegment[b]);
        if (old != null) {
            old.close();
        }
        bucketSegment[b] = 0;
    }

    /**
     * Records where the live copy of {@code ordinal} lies. Under the write lock, or during the
     * open.
     */
    void place(int ordinal, int segment, long offset) {
        if (ordinal >= copySegment.length) {
            int cap = Math.max(ordinal + 1, copySegment.length + (copySegment.length >> 1));
            copySegment = Arrays.copyOf(copySegment, cap);
            copyOffset = Arrays.copyOf(copyOffset, cap);
        }
        copySegment[ordinal] = segment;
        copyOffset[ordinal] = offset;
    }

    /** The log's copy of {@code ordinal}, or null; for the writer, which alone changes them. */
    SealedRecord pending(int ordinal) {
        return pendingSealed.get(ordinal);
    }

    /** Makes the log's copies of a batch readable, before the log write. */
    void addPending(Collection<SealedRecord> logged) {
        lock.writeLock().lock();
        try {
            for (SealedRecord c : logged) {
                pendingSealed.put(c.ordinal(), c);
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Withdraws copies {@link #addPending} added whose log write failed. */
    void withdrawPending(Collection<SealedRecord> notLogged) {
        lock.writeLock().lock();
        try {
            for (SealedRecord c : notLogged) {
                pendingSealed.remove(c.ordinal(), c);
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Drops the log's copy of a deleted record. */
    void dropPending(int ordinal) {
        lock.writeLock().lock();
        try {
            pendingSealed.remove(ordinal);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Moves reads to a checkpoint's new segment files (before the old ones go); the log's copies
     * are in them now.
     */
    void publish(List<Rewritten> rewritten) {
        lock.writeLock().lock();
        try {
            for (Rewritten r : rewritten) {
                int handle = install(r.bucket, r.name);
                for (int i = 0; i < r.ordinals.length; i++) {
                    place(r.ordinals[i], handle, r.offsets[i]);
                }
            }
            pendingSealed.clear();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Unmaps every segment file; after this no read finds a segment copy. */
    void retireAll() {
        lock.writeLock().lock();
        try {
            for (int b = 0; b < bucketSegment.length; b++) {
                retire(b);
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * The stored copy of {@code ordinal}: the log's if it came after the last checkpoint, else the
     * one in its bucket's segment; null when the ordinal has none at hand.
     */
    Found find(int ordinal) throws IOException {
        lock.readLock().lock();
        try {
            SealedRecord copy = pendingSealed.get(ordinal);
            if (copy != null) {
                return new Found(copy, dir.resolve("wal"));
            }
            SegmentFile f =
                    ordinal >= 0 && ordinal < copySegment.length
                            ? segmentFiles.get(copySegment[ordinal])
                            : null;
            if (f == null) {
                return null;
            }
            return new Found(f.readAt(copyOffset[ordinal], ordinal), f.file);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * A segment file a read of one copy may map, from the open or the checkpoint that made it live
     * until the checkpoint that replaces it unmaps it (before deleting it: a forgotten record's
     * copy must not outlive its file in a mapping). Mapped rather than read through a channel: a
     * mapping keeps no file descriptor (a collection has up to {@code shardBuckets} files, and a
     * store many collections), and a read is a copy from the page cache, with no system call. The
     * file is immutable while it is live: a checkpoint writes a new file and renames it into place,
     * so the mapped one is never truncated.
     */
    private static final class SegmentFile {
        final Path file;
        private Arena arena;
        private MemorySegment mapped;
        private boolean closed;

        SegmentFile(Path file) {
            this.file = file;
        }

        /** The copy of {@code ordinal} at {@code offset}; see {@link SegmentFiles#readAt}. */
        SealedRecord readAt(long offset, int ordinal) throws IOException {
            return SegmentFiles.readAt(mapping(), file, offset, ordinal);
        }

        // The arena outlives this call on purpose: it holds the mapping until close() ends it.
        @SuppressWarnings("MustBeClosedChecker")
        private synchronized MemorySegment mapping() throws IOException {
            if (closed) {
                throw new IllegalStateException(file + " is no longer live");
            }
            if (mapped == null) {
                Arena a = Arena.ofShared();
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                    mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), a);
                } catch (IOException | RuntimeException e) {
                    a.close();
                    throw e;
                }
                arena = a;
            }
            return mapped;
        }

        /** Unmaps the file; no read may be running (the caller holds the write lock). */
        synchronized void close() {
            closed = true;
            if (arena != null) {
                arena.close();
                arena = null;
                mapped = null;
            }
        }
    }
}
