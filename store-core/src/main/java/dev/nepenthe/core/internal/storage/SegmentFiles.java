package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * An immutable segment: every live sealed record of one shard bucket at a checkpoint, in a
 * checksummed file. A bucket is rewritten whole (a new file) when it changes; the old file is
 * deleted once the manifest names the new one.
 */
final class SegmentFiles {
    static final String FORMAT = "nepenthe-segment";
    static final int VERSION = 1;

    private SegmentFiles() {}

    /** Where the first copy starts: after the file's header, the bucket and the count. */
    static final long FIRST_COPY = ChecksummedFiles.bodyOffset(FORMAT) + 8;

    /** A copy's bytes before its sealed bytes: ordinal, version, two hashes, length. */
    private static final int COPY_HEADER = 4 + 8 + 2 * KeyedHash.LENGTH + 4;

    /** The bytes one copy of {@code sealedLength} sealed bytes takes in a segment. */
    static long copyLength(int sealedLength) {
        return COPY_HEADER + (long) sealedLength;
    }

    private static final ValueLayout.OfInt INT =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /**
     * Reads the one copy that starts at {@code offset} of a segment (mapped whole) whose checksum
     * an open or a checkpoint already verified; the sealed bytes' own tag authenticates them again
     * when they are opened. Fails, naming the file, when the copy there is not at ordinal {@code
     * ordinal} or its length runs past the end.
     */
    static SealedRecord readAt(MemorySegment segment, Path file, long offset, int ordinal)
            throws IOException {
        long end = ChecksummedFiles.bodyEnd(segment.byteSize());
        if (offset < FIRST_COPY || offset + COPY_HEADER > end) {
            throw new CorruptFileException(
                    file,
                    FORMAT
                            + ": a copy at offset "
                            + offset
                            + " lies outside the body (ends at "
                            + end
                            + "); the file is shorter than when it was opened");
        }
        int at = segment.get(INT, offset);
        long seq = segment.get(LONG, offset + 4);
        byte[] subject = new byte[KeyedHash.LENGTH];
        byte[] record = new byte[KeyedHash.LENGTH];
        MemorySegment.copy(
                segment, ValueLayout.JAVA_BYTE, offset + 12, subject, 0, KeyedHash.LENGTH);
        MemorySegment.copy(
                segment,
                ValueLayout.JAVA_BYTE,
                offset + 12 + KeyedHash.LENGTH,
                record,
                0,
                KeyedHash.LENGTH);
        int len = segment.get(INT, offset + 12 + 2L * KeyedHash.LENGTH);
        if (at != ordinal
                || len < 0
                || len > SealedRecord.MAX_SEALED
                || offset + copyLength(len) > end) {
            throw new CorruptFileException(
                    file,
                    FORMAT
                            + ": expected the copy of ordinal "
                            + ordinal
                            + " at offset "
                            + offset
                            + ", found ordinal "
                            + at
                            + " with "
                            + len
                            + " sealed bytes");
        }
        byte[] sealed = new byte[len];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset + COPY_HEADER, sealed, 0, len);
        return new SealedRecord(
                at, seq, new KeyedHash.Hash(subject), new KeyedHash.Hash(record), sealed);
    }

    static String name(int bucket, long id) {
        return String.format("b%04d-%012d.seg", bucket, id);
    }

    static void write(Path file, int bucket, Collection<SealedRecord> records) throws IOException {
        write(file, bucket, records, CrashPoints.bound());
    }

    /** Writes a segment file, reporting crash points to {@code points}, the store's. */
    static void write(Path file, int bucket, Collection<SealedRecord> records, TestPoints points)
            throws IOException {
        ChecksummedFiles.write(
                file,
                FORMAT,
                VERSION,
                out -> {
                    out.writeInt(bucket);
                    out.writeInt(records.size());
                    for (SealedRecord r : records) {
                        r.write(out);
                    }
                },
                points);
    }

    /** What {@link #forEach} hands each stored copy to. */
    interface Visitor {
        /**
         * One stored copy: its header (a record whose {@code sealed} is empty), its sealed bytes in
         * the first {@code length} bytes of {@code sealed} (a buffer the next copy reuses), and
         * where the copy starts in the file (for {@link #readAt}).
         */
        void accept(SealedRecord header, byte[] sealed, int length, long offset) throws IOException;
    }

    /**
     * Reads a segment's copies one after the other into one buffer, handing each to {@code visitor}
     * as it is read: what an open does, without a segment's worth of sealed arrays on the heap (a
     * quarter of an open's allocation in a profile at 300k records, live until the segment was
     * opened, so a collection meanwhile copied them).
     *
     * @return how many copies were read
     */
    static int forEach(Path file, int expectedBucket, Visitor visitor) throws IOException {
        return readSegment(
                file,
                expectedBucket,
                (in, n) -> {
                    byte[] sealed = new byte[4096];
                    byte[] hash = new byte[KeyedHash.LENGTH];
                    // A segment lists its copies by ordinal, so a subject's records written
                    // together sit together: they share one subject hash, which the storage keeps
                    // per live record.
                    byte[] lastSubjectBytes = new byte[KeyedHash.LENGTH];
                    KeyedHash.Hash lastSubject = null;
                    long offset = FIRST_COPY;
                    for (int i = 0; i < n; i++) {
                        int ordinal = in.readInt();
                        long seq = in.readLong();
                        in.readFully(hash);
                        if (lastSubject == null || !Arrays.equals(hash, lastSubjectBytes)) {
                            lastSubject = new KeyedHash.Hash(hash);
                            System.arraycopy(hash, 0, lastSubjectBytes, 0, hash.length);
                        }
                        KeyedHash.Hash subject = lastSubject;
                        in.readFully(hash);
                        KeyedHash.Hash record = new KeyedHash.Hash(hash);
                        int len = SealedRecord.readLength(in, ordinal);
                        if (sealed.length < len) {
                            sealed = new byte[Math.max(len, 2 * sealed.length)];
                        }
                        in.readFully(sealed, 0, len);
                        visitor.accept(
                                new SealedRecord(
                                        ordinal, seq, subject, record, SealedRecord.NO_BYTES),
                                sealed,
                                len,
                                offset);
                        offset += copyLength(len);
                    }
                    return n;
                });
    }

    /** What reads a segment's copies, given how many there are. */
    private interface CopiesReader<T> {
        T read(DataInputStream in, int count) throws IOException;
    }

    /** Reads a segment file of bucket {@code expectedBucket}, its header checked. */
    private static <T> T readSegment(Path file, int expectedBucket, CopiesReader<T> copies)
            throws IOException {
        return ChecksummedFiles.read(
                file,
                FORMAT,
                VERSION,
                VERSION,
                (in, v) -> copies.read(in, header(in, expectedBucket)));
    }

    private static int header(DataInput in, int expectedBucket) throws IOException {
        int bucket = in.readInt();
        if (bucket != expectedBucket) {
            throw new IllegalArgumentException(
                    "segment holds bucket " + bucket + ", manifest expects " + expectedBucket);
        }
        int n = in.readInt();
        if (n < 0) {
            throw new IllegalArgumentException("negative record count " + n);
        }
        return n;
    }

    static List<SealedRecord> read(Path file, int expectedBucket) throws IOException {
        return readSegment(
                file,
                expectedBucket,
                (in, n) -> {
                    List<SealedRecord> out = new ArrayList<>(Math.min(n, 1 << 16));
                    for (int i = 0; i < n; i++) {
                        out.add(SealedRecord.read(in));
                    }
                    return out;
                });
    }
}
