package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.IoErrors;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.crypto.Cipher;

/**
 * The replica's write-ahead journal for command bodies: what Ratis's state-machine data path
 * writes, reads back for a lagging follower, truncates and flushes. The Raft log holds only a small
 * header per command; the body (records, forget scopes: subject data) lives here, encrypted, so
 * that a forget can make it undecryptable on this replica.
 *
 * <p>Segments: every segment has a key of its own ({@code seg-<first index>.key}, 32 random bytes)
 * and its records ({@code seg-<first index>.jnl}, format in {@link JournalSegmentRecords}). The
 * caller rolls at every forget entry, and the journal rolls itself once a segment passes {@link
 * #ROLL_BYTES}; so once a forget at index f has reached every replica, {@link #destroyThrough
 * destroyThrough(f)} destroys the key of every segment whose entries are all at or before f.
 *
 * <p>Destroying, in this order: every such key file is overwritten in place with zeros and forced;
 * then each key file and its segment are deleted and the directory forced. A crash in between
 * leaves zeroed keys or, for the oldest segment only, a segment without key; {@link #open} counts
 * both as destroyed and removes what is left. See {@link PayloadJournalRecovery} for every state a
 * crash can leave and what opening does with it.
 *
 * <p>Failure: a failed write or fsync leaves the journal failed for good. An fsync is never retried
 * (after a failed one the kernel may have dropped the dirty pages, and a second fsync would answer
 * for nothing); every later append, flush, roll, truncate or destroy throws an {@link
 * IllegalStateException} naming the first failure. Reopening recovers: a torn tail was never
 * flushed, so never acknowledged.
 *
 * <p>Threads: Ratis calls write, read, truncate and flush from different threads (its log worker,
 * the leader's appenders, the state machine updater). Every public method is synchronized: the
 * bookkeeping (segments, the open segment, the last index) changes together with the files, and one
 * lock keeps them in step without an argument per field. Its price is that a read waits for an
 * fsync in progress; reads are of old entries for lagging followers, which tolerate that.
 */
final class PayloadJournal implements Closeable {

    /** The size past which the open segment is rolled before the next append. */
    static final long ROLL_BYTES = 64L << 20;

    /** How the journal forces a file: {@link FileChannel#force}, or a test's stand-in. */
    @FunctionalInterface
    interface Fsync {
        void force(FileChannel channel, Path file) throws IOException;
    }

    private static final Fsync FORCE = (channel, file) -> channel.force(true);

    private final Path dir;
    private final long rollBytes;
    private final Fsync fsync;
    private final SecureRandom random = new SecureRandom();
    private final Cipher cipher = JournalSegmentRecords.newCipher();

    /** Every segment whose key lives, by first index. */
    private final TreeMap<Long, JournalSegment> segments = new TreeMap<>();

    /** The segment appends go to, or null until the next append starts one. */
    private JournalSegment open;

    /** The closed segment whose read channel is open (at most one, to bound open files). */
    private JournalSegment reading;

    /** The highest index appended and not truncated, or -1. A destroy does not lower it. */
    private long last = -1;

    /** The last index of the newest segment this journal destroyed, or -1. */
    private long destroyedThrough = -1;

    /** The first write or fsync that failed; once set, nothing more is written. */
    private IOException failed;

    private boolean closed;

    private PayloadJournal(Path dir, long rollBytes, Fsync fsync) {
        this.dir = dir;
        this.rollBytes = rollBytes;
        this.fsync = fsync;
    }

    /**
     * Opens the journal in {@code dir}, creating the folder if needed, and recovers what is there
     * (see {@link PayloadJournalRecovery}). Every recovered segment is closed: the first append
     * starts a new one.
     *
     * @throws CorruptFileException when a file is damaged beyond a torn tail, naming it
     */
    static PayloadJournal open(Path dir) throws IOException {
        return open(dir, ROLL_BYTES, FORCE);
    }

    /** {@link #open(Path)} rolling at {@code rollBytes} and forcing files with {@code fsync}. */
    static PayloadJournal open(Path dir, long rollBytes, Fsync fsync) throws IOException {
        if (rollBytes <= 0) {
            throw new IllegalArgumentException("rollBytes must be > 0, got " + rollBytes);
        }
        Files.createDirectories(dir);
        PayloadJournal journal = new PayloadJournal(dir, rollBytes, fsync);
        for (JournalSegment seg : PayloadJournalRecovery.recover(dir, fsync)) {
            journal.segments.put(seg.first(), seg);
            journal.last = seg.last();
        }
        return journal;
    }

    /**
     * Appends {@code payload} as the entry at {@code index}; not durable until {@link #flush}.
     *
     * @throws IllegalArgumentException when {@code index} is negative or not greater than the last
     *     index appended
     */
    synchronized void append(long index, byte[] payload) throws IOException {
        Objects.requireNonNull(payload, "payload");
        usable();
        if (index < 0) {
            throw new IllegalArgumentException("append: expected an index >= 0, got " + index);
        }
        if (index <= last) {
            throw new IllegalArgumentException(
                    "append: expected an index > " + last + " (the last appended), got " + index);
        }
        if (payload.length > JournalSegmentRecords.MAX_PAYLOAD) {
            throw new IllegalArgumentException(
                    "append: expected a payload of at most "
                            + JournalSegmentRecords.MAX_PAYLOAD
                            + " bytes, got "
                            + payload.length);
        }
        if (open != null && open.size() >= rollBytes) {
            closeOpen();
        }
        if (open == null) {
            startSegment(index);
        }
        byte[] record = JournalSegmentRecords.seal(cipher, open.key(), random, index, payload);
        long offset = open.size();
        try {
            ByteBuffer buf = ByteBuffer.wrap(record);
            while (buf.hasRemaining()) {
                open.channel().write(buf, offset + buf.position());
            }
        } catch (IOException e) {
            throw fail(open.file(), "appending to", e);
        }
        open.add(index, record.length);
        last = index;
    }

    /** Forces the open segment: every append before it is durable once it returns. */
    synchronized void flush() throws IOException {
        usable();
        if (open != null) {
            force(open);
        }
    }

    /**
     * The payload at {@code index}: empty when it was never written, was truncated, or its
     * segment's key is destroyed.
     *
     * @throws CorruptFileException when the record is held but damaged or does not decrypt
     */
    synchronized Optional<byte[]> read(long index) throws IOException {
        notClosed();
        JournalSegment seg = holding(index);
        if (seg == null) {
            return Optional.empty();
        }
        byte[] record = readRecord(seg, index);
        return Optional.of(
                JournalSegmentRecords.open(cipher, seg.key(), seg.file(), index, record));
    }

    /**
     * Whether the entry at {@code index} decrypts now under its segment's key as it is on disk
     * (read from the key file, not from memory): false when the entry is not held or its key file
     * is gone or zeroed. A check that can fail, for a forget's verification.
     *
     * @throws CorruptFileException when the record is held, its key file present, and it does not
     *     decrypt
     */
    synchronized boolean decryptable(long index) throws IOException {
        notClosed();
        JournalSegment seg = holding(index);
        if (seg == null) {
            return false;
        }
        byte[] key = JournalKeyFile.read(seg.keyFile());
        if (key == null) {
            return false;
        }
        try {
            byte[] plain =
                    JournalSegmentRecords.open(
                            cipher, key, seg.file(), index, readRecord(seg, index));
            Arrays.fill(plain, (byte) 0);
            return true;
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    /**
     * Drops every entry at or after {@code fromIndex}: whole segments are removed (key zeroed
     * first), and the segment holding {@code fromIndex} is cut at that record and forced. Appends
     * continue after the last entry left.
     *
     * @throws IllegalArgumentException when {@code fromIndex} reaches into destroyed entries, which
     *     were committed and cannot be truncated
     */
    synchronized void truncate(long fromIndex) throws IOException {
        usable();
        if (fromIndex <= destroyedThrough) {
            throw new IllegalArgumentException(
                    "truncate: expected an index > "
                            + destroyedThrough
                            + " (entries through it are destroyed, so committed), got "
                            + fromIndex);
        }
        boolean removed = false;
        // Newest first, so a crash leaves the journal a prefix of what it was.
        while (!segments.isEmpty() && segments.lastKey() >= fromIndex) {
            JournalSegment seg = segments.lastEntry().getValue();
            forget(seg);
            try {
                seg.deleteFiles(fsync);
            } catch (IOException e) {
                throw fail(seg.file(), "removing", e);
            }
            removed = true;
        }
        if (!segments.isEmpty() && segments.lastEntry().getValue().last() >= fromIndex) {
            JournalSegment seg = segments.lastEntry().getValue();
            int position = seg.firstAtOrAfter(fromIndex);
            long offset = seg.offset(position);
            try {
                if (seg == open) {
                    open.channel().truncate(offset);
                    fsync.force(open.channel(), open.file());
                } else {
                    try (FileChannel ch = FileChannel.open(seg.file(), StandardOpenOption.WRITE)) {
                        ch.truncate(offset);
                        fsync.force(ch, seg.file());
                    }
                }
            } catch (IOException e) {
                throw fail(seg.file(), "cutting", e);
            }
            seg.cut(position);
        }
        if (removed) {
            syncDirectory();
        }
        if (last >= fromIndex) {
            last = segments.isEmpty() ? destroyedThrough : segments.lastEntry().getValue().last();
        }
    }

    /**
     * Closes the open segment (forced); the next append starts a new segment under a fresh key. A
     * no-op when no segment is open.
     */
    synchronized void roll() throws IOException {
        usable();
        if (open != null) {
            closeOpen();
        }
    }

    /**
     * Destroys every segment whose entries are all at or before {@code index}, rolling the open
     * segment first when that holds for it too: every such key is overwritten with zeros in place
     * and forced, then the key files and segments are deleted and the directory forced.
     *
     * @return how many segments were destroyed
     */
    synchronized int destroyThrough(long index) throws IOException {
        usable();
        if (open != null && open.last() <= index) {
            closeOpen();
        }
        List<JournalSegment> doomed = new ArrayList<>();
        for (JournalSegment seg : segments.values()) {
            if (seg == open || seg.last() > index) {
                break;
            }
            doomed.add(seg);
        }
        // Out of reach before the disk is touched: should a step below fail, no read may decrypt
        // with the key still in memory.
        for (JournalSegment seg : doomed) {
            forget(seg);
            destroyedThrough = Math.max(destroyedThrough, seg.last());
        }
        try {
            // 1. Every key zeroed and forced before any deletion: a crash then leaves zeroed keys,
            //    or no key for the oldest segments only, both of which open() reads as destroyed.
            for (JournalSegment seg : doomed) {
                JournalKeyFile.zero(seg.keyFile(), fsync);
            }
            // 2. The key files, then the ciphertext without key, oldest first.
            for (JournalSegment seg : doomed) {
                Files.deleteIfExists(seg.keyFile());
                Files.deleteIfExists(seg.file());
            }
        } catch (IOException e) {
            throw fail(dir, "destroying segments in", e);
        }
        // 3. The deletions made durable.
        if (!doomed.isEmpty()) {
            syncDirectory();
        }
        return doomed.size();
    }

    /** Each live segment as "first..last" (the open one marked), oldest first: for messages. */
    synchronized List<String> ranges() {
        List<String> out = new ArrayList<>();
        for (JournalSegment seg : segments.values()) {
            out.add(seg.first() + ".." + seg.last() + (seg == open ? " (open)" : ""));
        }
        return out;
    }

    /** The lowest index held (its key alive), or 0 when none is. */
    synchronized long firstIndex() {
        return segments.isEmpty() ? 0 : segments.firstKey();
    }

    /**
     * The highest index appended and not truncated, or 0 when there is none. A destroy does not
     * lower it; after a reopen it is the highest index held.
     */
    synchronized long lastIndex() {
        return Math.max(last, 0);
    }

    /** Every file in the journal's folder, sorted: what a forget's byte scan reads. */
    synchronized List<Path> files() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(Files::isRegularFile).sorted().toList();
        } catch (IOException e) {
            throw IoErrors.naming(dir, "listing", e);
        }
    }

    /**
     * Forces the open segment (unless the journal failed), closes every file and zeroes the keys
     * held in memory.
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        IOException first = null;
        if (open != null && failed == null) {
            try {
                fsync.force(open.channel(), open.file());
            } catch (IOException e) {
                first = IoErrors.naming(open.file(), "syncing", e);
                failed = first;
            }
        }
        for (JournalSegment seg : segments.values()) {
            try {
                seg.closeChannel();
            } catch (IOException e) {
                if (first == null) {
                    first = IoErrors.naming(seg.file(), "closing", e);
                }
            }
            seg.zeroKey();
        }
        segments.clear();
        open = null;
        reading = null;
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "PayloadJournal[" + dir + "]";
    }

    private void startSegment(long index) throws IOException {
        JournalSegment seg = new JournalSegment(dir, index);
        byte[] key = null;
        try {
            key = JournalKeyFile.create(seg.keyFile(), random, fsync);
            seg.setChannel(
                    FileChannel.open(
                            seg.file(),
                            StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.READ,
                            StandardOpenOption.WRITE));
        } catch (IOException e) {
            if (key != null) {
                Arrays.fill(key, (byte) 0);
            }
            throw fail(seg.file(), "creating", e);
        }
        seg.setKey(key);
        segments.put(index, seg);
        open = seg;
        // The key's rename and the segment's creation durable before the first record.
        syncDirectory();
    }

    /** Forces the open segment and closes it. */
    private void closeOpen() throws IOException {
        JournalSegment seg = open;
        force(seg);
        open = null;
        try {
            seg.closeChannel();
        } catch (IOException e) {
            throw fail(seg.file(), "closing", e);
        }
    }

    private void force(JournalSegment seg) throws IOException {
        try {
            fsync.force(seg.channel(), seg.file());
        } catch (IOException e) {
            throw fail(seg.file(), "syncing", e);
        }
    }

    private void syncDirectory() throws IOException {
        try {
            ChecksummedFiles.fsyncDirectory(dir);
        } catch (IOException e) {
            throw fail(dir, "syncing the directory", e);
        }
    }

    /** Takes {@code seg} out of the bookkeeping: its channel closed, its key zeroed in memory. */
    private void forget(JournalSegment seg) throws IOException {
        segments.remove(seg.first());
        if (seg == open) {
            open = null;
        }
        if (seg == reading) {
            reading = null;
        }
        seg.zeroKey();
        try {
            seg.closeChannel();
        } catch (IOException e) {
            throw fail(seg.file(), "closing", e);
        }
    }

    /** The segment holding a record at {@code index}, or null. */
    private JournalSegment holding(long index) {
        Map.Entry<Long, JournalSegment> e = segments.floorEntry(index);
        if (e == null || e.getValue().position(index) < 0) {
            return null;
        }
        return e.getValue();
    }

    private byte[] readRecord(JournalSegment seg, long index) throws IOException {
        try {
            return seg.readRecord(readChannel(seg), index);
        } catch (CorruptFileException e) {
            throw e;
        } catch (IOException e) {
            throw IoErrors.naming(seg.file(), "reading", e);
        }
    }

    /** The open segment's channel, or a read channel, at most one closed segment's at a time. */
    private FileChannel readChannel(JournalSegment seg) throws IOException {
        if (seg.channel() != null) {
            return seg.channel();
        }
        if (reading != null) {
            reading.closeChannel();
        }
        seg.setChannel(FileChannel.open(seg.file(), StandardOpenOption.READ));
        reading = seg;
        return seg.channel();
    }

    /** Records the first failure and returns the exception to throw, naming the file. */
    private IOException fail(Path file, String doing, IOException e) {
        IOException named = IoErrors.naming(file, doing, e);
        if (failed == null) {
            failed = named;
        }
        return named;
    }

    private void usable() {
        notClosed();
        if (failed != null) {
            throw new IllegalStateException(
                    "payload journal "
                            + dir
                            + " failed earlier and takes nothing more until reopened; first"
                            + " failure: "
                            + failed.getMessage(),
                    failed);
        }
    }

    private void notClosed() {
        if (closed) {
            throw new IllegalStateException("payload journal " + dir + " is closed");
        }
    }
}
