package dev.nepenthe.core.internal.io;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.FileTooNewException;
import dev.nepenthe.core.FileTooOldException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.zip.CRC32C;

/**
 * The envelope every Nepenthe file has: a header (magic, format name, version, 16-byte file id) and
 * a footer (magic, CRC32C of everything before the footer). Files are written to a temporary
 * sibling, fsynced, renamed into place and the directory fsynced, so a crash leaves either the old
 * file or the new one, never a mix.
 *
 * <p>Readers check the footer before parsing anything, then the header, and fail with {@link
 * CorruptFileException}, {@link FileTooOldException} or {@link FileTooNewException} naming the
 * file.
 */
public final class ChecksummedFiles {

    static final int HEADER_MAGIC = 0x4E505448; // "NPTH"
    static final int FOOTER_MAGIC = ~HEADER_MAGIC;

    /** Footer: magic (4) + checksum (8). */
    static final int FOOTER_LENGTH = 12;

    private ChecksummedFiles() {}

    /** Body writer handed to {@link #write}. */
    @FunctionalInterface
    public interface BodyWriter {
        void write(DataOutputStream out) throws IOException;
    }

    /** Body reader handed to {@link #read}; must consume the body exactly. */
    @FunctionalInterface
    public interface BodyReader<T> {
        T read(DataInputStream in, int version) throws IOException;
    }

    /** {@link #write(Path, String, int, byte[], BodyWriter)} under a fresh file id. */
    public static void write(Path file, String format, int version, BodyWriter body)
            throws IOException {
        write(file, format, version, newFileId(), body);
    }

    /** {@link #write(Path, String, int, byte[], BodyWriter, TestPoints)} under a fresh file id. */
    public static void write(
            Path file, String format, int version, BodyWriter body, TestPoints points)
            throws IOException {
        write(file, format, version, newFileId(), body, points);
    }

    /**
     * Writes {@code file} atomically: header, body, footer into {@code file.tmp}, fsync, rename
     * over {@code file}, fsync the directory.
     */
    public static void write(Path file, String format, int version, byte[] fileId, BodyWriter body)
            throws IOException {
        write(file, format, version, fileId, body, CrashPoints.bound());
    }

    /**
     * {@link #write(Path, String, int, byte[], BodyWriter)} reporting its crash points ({@code
     * file.written-before-rename}, {@code file.renamed}) to {@code points}, the store's.
     */
    public static void write(
            Path file,
            String format,
            int version,
            byte[] fileId,
            BodyWriter body,
            TestPoints points)
            throws IOException {
        if (fileId.length != 16) {
            throw new IllegalArgumentException("file id: expected 16 bytes, got " + fileId.length);
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch =
                FileChannel.open(
                        tmp,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING)) {
            CRC32C crc = new CRC32C();
            OutputStream raw = new ChecksummingOutput(ch, crc);
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(raw, 1 << 16));
            out.writeInt(HEADER_MAGIC);
            byte[] name = format.getBytes(StandardCharsets.UTF_8);
            out.writeShort(name.length);
            out.write(name);
            out.writeInt(version);
            out.write(fileId);
            body.write(out);
            out.flush();
            ByteBuffer footer = ByteBuffer.allocate(FOOTER_LENGTH);
            footer.putInt(FOOTER_MAGIC).putLong(crc.getValue()).flip();
            while (footer.hasRemaining()) {
                ch.write(footer);
            }
            ch.force(true);
        } catch (IOException | RuntimeException e) {
            throw discard(tmp, e, tmp, "writing");
        }
        points.reached("file.written-before-rename");
        try {
            try {
                Files.move(
                        tmp,
                        file,
                        StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            throw discard(tmp, e, file, "renaming " + tmp.getFileName() + " over");
        }
        // If this fails the new file is in place but its name may not be durable: the caller
        // must not acknowledge what it needs (the store goes read-only), and must not retry.
        fsyncDirectory(file.toAbsolutePath().getParent());
        points.reached("file.renamed");
    }

    /**
     * After a failed write or rename: removes the temporary file and returns the failure to throw,
     * an I/O error naming {@code file}.
     */
    private static IOException discard(Path tmp, Exception e, Path file, String doing) {
        try {
            Files.deleteIfExists(tmp);
        } catch (IOException suppressed) {
            e.addSuppressed(suppressed);
        }
        if (e instanceof IOException io) {
            return IoErrors.naming(file, doing, io);
        }
        throw (RuntimeException) e;
    }

    /**
     * Where the body of a file of {@code format} starts: after the header (magic, the format's
     * name, version, file id). For readers that come back later to one part of a file already
     * verified whole.
     */
    public static long bodyOffset(String format) {
        return 4L + 2 + format.getBytes(StandardCharsets.UTF_8).length + 4 + 16;
    }

    /** The bytes of a file before its footer (the header and the body). */
    public static long bodyEnd(long fileSize) {
        return fileSize - FOOTER_LENGTH;
    }

    /**
     * Reads and verifies {@code file}: footer magic and checksum first, then header magic, format
     * name and version range, then the body, which must be consumed exactly. The file is streamed
     * (checksummed in 1 MiB chunks, then parsed through a buffer), so files of any size load, 2 GiB
     * and beyond, and nothing is allocated from a length the checksum has not vouched for.
     */
    public static <T> T read(
            Path file, String format, int minVersion, int maxVersion, BodyReader<T> body)
            throws IOException {
        try {
            return readVerified(file, format, minVersion, maxVersion, body);
        } catch (CorruptFileException e) {
            throw e;
        } catch (IOException e) {
            throw IoErrors.naming(file, "reading", e);
        }
    }

    private static <T> T readVerified(
            Path file, String format, int minVersion, int maxVersion, BodyReader<T> body)
            throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            int minLength = 4 + 2 + 4 + 16 + FOOTER_LENGTH;
            if (size < minLength) {
                throw new CorruptFileException(
                        file,
                        format
                                + ": file is "
                                + size
                                + " bytes, shorter than the smallest valid file ("
                                + minLength
                                + "); truncated?");
            }
            long bodyEnd = size - FOOTER_LENGTH;
            ByteBuffer footer = ByteBuffer.allocate(FOOTER_LENGTH);
            readFully(ch, footer, bodyEnd);
            footer.flip();
            int footerMagic = footer.getInt();
            long expected = footer.getLong();
            if (footerMagic != FOOTER_MAGIC) {
                throw new CorruptFileException(
                        file,
                        format
                                + ": footer magic expected 0x"
                                + Integer.toHexString(FOOTER_MAGIC)
                                + ", got 0x"
                                + Integer.toHexString(footerMagic)
                                + " (file truncated or not a Nepenthe file?)");
            }
            long computed = checksum(ch, bodyEnd);
            if (computed != expected) {
                throw new CorruptFileException(
                        file,
                        format
                                + ": checksum failed, expected 0x"
                                + Long.toHexString(expected)
                                + ", computed 0x"
                                + Long.toHexString(computed)
                                + " (hardware problem or the file was modified?)");
            }
            RegionInput region = new RegionInput(ch, bodyEnd);
            DataInputStream in = new DataInputStream(new BufferedInputStream(region, 1 << 16));
            int magic = in.readInt();
            if (magic != HEADER_MAGIC) {
                throw new CorruptFileException(
                        file,
                        format
                                + ": header magic expected 0x"
                                + Integer.toHexString(HEADER_MAGIC)
                                + ", got 0x"
                                + Integer.toHexString(magic));
            }
            int nameLength = in.readUnsignedShort();
            if (nameLength > bodyEnd) {
                throw new CorruptFileException(
                        file, format + ": header name length " + nameLength + " is impossible");
            }
            byte[] name = new byte[nameLength];
            in.readFully(name);
            String actual = new String(name, StandardCharsets.UTF_8);
            if (!actual.equals(format)) {
                throw new CorruptFileException(
                        file, "expected a '" + format + "' file, got a '" + actual + "' file");
            }
            int version = in.readInt();
            if (version < minVersion) {
                throw new FileTooOldException(file, format, version, minVersion, maxVersion);
            }
            if (version > maxVersion) {
                throw new FileTooNewException(file, format, version, minVersion, maxVersion);
            }
            in.skipNBytes(16);
            T result;
            try {
                result = body.read(in, version);
            } catch (EOFException e) {
                throw new CorruptFileException(file, format + ": body ended early", e);
            } catch (RuntimeException e) {
                throw new CorruptFileException(
                        file, format + ": body is malformed: " + e.getMessage(), e);
            }
            long unread =
                    in.available(); // the buffer's bytes plus the region's, capped at 2^31 - 1
            if (unread != 0) {
                throw new CorruptFileException(
                        file,
                        format
                                + ": "
                                + unread
                                + " unread bytes after the body (misplaced footer?)");
            }
            return result;
        }
    }

    private static void readFully(FileChannel ch, ByteBuffer buf, long position)
            throws IOException {
        while (buf.hasRemaining()) {
            int n = ch.read(buf, position + buf.position());
            if (n < 0) {
                throw new EOFException();
            }
        }
    }

    /**
     * Direct buffers for {@link #checksum}, kept for the next file: an open reads hundreds of files
     * on a few threads, and a new 1 MiB buffer per file was memory the process had not touched
     * before, zeroed by the kernel (over 250 MiB at an open of a million records) and freed only
     * when the collector got to it. At most four are kept (a burst of readers beyond that allocates
     * and drops its own), and a kept buffer is zeroed: it holds no byte of the last file it read.
     */
    private static final BlockingQueue<ByteBuffer> CHECKSUM_BUFFERS = new ArrayBlockingQueue<>(4);

    /** CRC32C of the first {@code length} bytes, read in 1 MiB chunks. */
    private static long checksum(FileChannel ch, long length) throws IOException {
        ByteBuffer buf = CHECKSUM_BUFFERS.poll();
        if (buf == null) {
            buf = ByteBuffer.allocateDirect(1 << 20);
        }
        try {
            return checksum(ch, length, buf);
        } finally {
            MemorySegment.ofBuffer(buf.clear()).fill((byte) 0);
            CHECKSUM_BUFFERS.offer(buf);
        }
    }

    private static long checksum(FileChannel ch, long length, ByteBuffer buf) throws IOException {
        CRC32C crc = new CRC32C();
        for (long pos = 0; pos < length; ) {
            buf.clear().limit((int) Math.min(buf.capacity(), length - pos));
            int n = ch.read(buf, pos);
            if (n < 0) {
                throw new EOFException();
            }
            buf.flip();
            crc.update(buf);
            pos += n;
        }
        return crc.getValue();
    }

    /**
     * The bytes {@code [0, end)} of a channel as a stream (positional reads: no shared position).
     */
    private static final class RegionInput extends InputStream {
        private final FileChannel ch;
        private final long end;
        private long pos;

        RegionInput(FileChannel ch, long end) {
            this.ch = ch;
            this.end = end;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (pos >= end) {
                return -1;
            }
            int n = ch.read(ByteBuffer.wrap(b, off, (int) Math.min(len, end - pos)), pos);
            if (n < 0) {
                return -1;
            }
            pos += n;
            return n;
        }

        @Override
        public int available() {
            return (int) Math.min(Integer.MAX_VALUE, end - pos);
        }
    }

    /** A random 16-byte file id. */
    public static byte[] newFileId() {
        byte[] id = new byte[16];
        new SecureRandom().nextBytes(id);
        return id;
    }

    /**
     * fsync a directory so a rename or delete in it is durable. A failed fsync throws: the rename
     * it was to make durable may be lost, so nothing that needs it may be acknowledged. Only a
     * platform that cannot open a directory at all (Windows) skips it.
     */
    public static void fsyncDirectory(Path dir) throws IOException {
        FileChannel ch;
        try {
            ch = FileChannel.open(dir, StandardOpenOption.READ);
        } catch (IOException e) {
            if (!Files.isDirectory(dir)) {
                throw e;
            }
            return; // the file system refuses to open directories: there is no directory fsync to
            // make
        }
        try (ch) {
            ch.force(true);
        } catch (IOException e) {
            throw IoErrors.naming(dir, "fsync of the folder", e);
        }
    }

    /** Writes through to a channel while updating a checksum. */
    private static final class ChecksummingOutput extends OutputStream {
        private final FileChannel ch;
        private final CRC32C crc;

        ChecksummingOutput(FileChannel ch, CRC32C crc) {
            this.ch = ch;
            this.crc = crc;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            crc.update(b, off, len);
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
        }
    }
}
