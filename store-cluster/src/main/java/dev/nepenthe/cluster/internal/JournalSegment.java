package dev.nepenthe.cluster.internal;

import dev.nepenthe.core.CorruptFileException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * One journal segment as the journal keeps it in memory: its two files, its key while the key
 * lives, and where each of its records starts, so that a read is one positional read. Indexes grow
 * within a segment, so finding a record is a binary search over a primitive array (a segment may
 * hold a million small records; boxed maps would cost tens of bytes each).
 *
 * <p>Not thread-safe: the journal's lock guards it.
 */
final class JournalSegment {

    /** The file names' prefix. */
    static final String PREFIX = "seg-";

    /** The segment file's suffix. */
    static final String DATA_SUFFIX = ".jnl";

    /** The key file's suffix. */
    static final String KEY_SUFFIX = ".key";

    private final long first;
    private final Path file;
    private final Path keyFile;
    private byte[] key;
    private long[] indexes = new long[16];
    private long[] offsets = new long[16];
    private int count;

    /** Bytes of whole records, which is where the next record goes. */
    private long size;

    /** Open for appends (the journal's open segment) or for reads; null when neither. */
    private FileChannel channel;

    JournalSegment(Path dir, long first) {
        this.first = first;
        this.file = dir.resolve(baseName(first) + DATA_SUFFIX);
        this.keyFile = dir.resolve(baseName(first) + KEY_SUFFIX);
    }

    /** {@code seg-<first index, 20 digits>}, so names sort as indexes do. */
    static String baseName(long first) {
        return String.format("%s%020d", PREFIX, first);
    }

    long first() {
        return first;
    }

    Path file() {
        return file;
    }

    Path keyFile() {
        return keyFile;
    }

    /** The live key; the caller must not keep or change it. */
    byte[] key() {
        if (key == null) {
            throw new IllegalStateException("the key of " + file + " is destroyed");
        }
        return key;
    }

    void setKey(byte[] key) {
        this.key = key;
    }

    /** Overwrites the in-memory key with zeros and forgets it. */
    void zeroKey() {
        if (key != null) {
            Arrays.fill(key, (byte) 0);
            key = null;
        }
    }

    int count() {
        return count;
    }

    long size() {
        return size;
    }

    /** The last record's index; the segment must hold one. */
    long last() {
        if (count == 0) {
            throw new IllegalStateException(file + " holds no record");
        }
        return indexes[count - 1];
    }

    /** Records a record of {@code length} bytes written at {@link #size()}. */
    void add(long index, long length) {
        if (count == indexes.length) {
            indexes = Arrays.copyOf(indexes, count * 2);
            offsets = Arrays.copyOf(offsets, count * 2);
        }
        indexes[count] = index;
        offsets[count] = size;
        count++;
        size += length;
    }

    /** The position of the record with {@code index}, or -1 when the segment has none. */
    int position(long index) {
        int i = Arrays.binarySearch(indexes, 0, count, index);
        return i >= 0 ? i : -1;
    }

    /**
     * The position of the first record whose index is {@code >= index} ({@link #count()} if none).
     */
    int firstAtOrAfter(long index) {
        int i = Arrays.binarySearch(indexes, 0, count, index);
        return i >= 0 ? i : -i - 1;
    }

    long offset(int position) {
        return offsets[position];
    }

    /** Where the record at {@code position} ends. */
    long end(int position) {
        return position + 1 < count ? offsets[position + 1] : size;
    }

    /** Forgets the records from {@code position} on; the caller cuts the file at {@code offset}. */
    void cut(int position) {
        size = offsets[position];
        count = position;
    }

    /**
     * The whole record holding {@code index}, read from {@code ch}; the segment must hold it.
     *
     * @throws CorruptFileException when the file ends before the record does
     */
    byte[] readRecord(FileChannel ch, long index) throws IOException {
        int position = position(index);
        long offset = offsets[position];
        byte[] record = new byte[Math.toIntExact(end(position) - offset)];
        ByteBuffer buf = ByteBuffer.wrap(record);
        while (buf.hasRemaining()) {
            if (ch.read(buf, offset + buf.position()) < 0) {
                throw new CorruptFileException(
                        file,
                        "payload journal: expected the record for index "
                                + index
                                + " to end at offset "
                                + (offset + record.length)
                                + ", the file ends at "
                                + (offset + buf.position())
                                + " (cut by something other than the journal?)");
            }
        }
        return record;
    }

    /**
     * Removes the segment's files, the key first overwritten with zeros and forced, then the
     * segment, then the key file: a crash between the steps leaves a zeroed key, which opening
     * reads as destroyed. For segments that are being dropped, not destroyed in a batch.
     */
    void deleteFiles(PayloadJournal.Fsync fsync) throws IOException {
        JournalKeyFile.zero(keyFile, fsync);
        Files.deleteIfExists(file);
        Files.deleteIfExists(keyFile);
    }

    FileChannel channel() {
        return channel;
    }

    void setChannel(FileChannel channel) {
        this.channel = channel;
    }

    /** Closes the channel, if any. */
    void closeChannel() throws IOException {
        FileChannel ch = channel;
        channel = null;
        if (ch != null) {
            ch.close();
        }
    }
}
