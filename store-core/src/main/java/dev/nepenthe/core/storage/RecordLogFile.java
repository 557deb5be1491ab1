package dev.nepenthe.core.storage;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.io.ChecksummedFiles;
import dev.nepenthe.core.io.CorruptFileException;
import dev.nepenthe.core.io.FileTooNewException;
import dev.nepenthe.core.io.FileTooOldException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * An append-only file of checksummed record entries: {@code [length][crc32c][payload]} after a
 * header (magic, format name, version). Every batch is fsynced before {@link #append} returns.
 *
 * <p>Recovery: an entry cut short at the end of the file (a crash mid-append) is a torn tail:
 * it is dropped, logged with its size, and the file truncated to the last whole entry. A bad
 * entry with valid data after it is corruption and fails loudly, naming the file.
 */
public final class RecordLogFile implements RecordLog {

    static final String FORMAT = "nepenthe-record-log";
    static final int VERSION = 1;
    private static final int MAGIC = 0x4E504C47; // "NPLG"
    private static final System.Logger LOG = System.getLogger(RecordLogFile.class.getName());

    private final Path file;
    private FileChannel channel;

    public RecordLogFile(Path file) throws IOException {
        this.file = file;
        if (!Files.exists(file)) {
            writeFresh(file, List.of());
        }
        this.channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        channel.position(channel.size());
    }

    @Override
    public synchronized void append(List<VectorRecord> batch) throws IOException {
        if (batch.isEmpty()) {
            return;
        }
        ByteBuffer buf = ByteBuffer.wrap(encodeEntries(batch));
        while (buf.hasRemaining()) {
            channel.write(buf);
        }
        channel.force(false);
    }

    @Override
    public synchronized void rewrite(Collection<VectorRecord> live) throws IOException {
        channel.close();
        writeFresh(file, live);
        channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        channel.position(channel.size());
    }

    @Override
    public synchronized List<VectorRecord> replay() throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        int headerEnd = readHeader(in);
        List<VectorRecord> out = new ArrayList<>();
        int pos = headerEnd;
        while (pos < bytes.length) {
            int remaining = bytes.length - pos;
            if (remaining < 8) {
                truncateTornTail(pos, remaining);
                break;
            }
            int len = in.getInt(pos);
            int crc = in.getInt(pos + 4);
            if (len < 0 || len > remaining - 8) {
                if (len < 0) {
                    throw new CorruptFileException(file, FORMAT + ": entry at offset " + pos + " has negative length " + len);
                }
                truncateTornTail(pos, remaining);
                break;
            }
            CRC32C c = new CRC32C();
            c.update(bytes, pos + 8, len);
            if ((int) c.getValue() != crc) {
                if (pos + 8 + len == bytes.length) {
                    truncateTornTail(pos, remaining);
                    break;
                }
                throw new CorruptFileException(file, FORMAT + ": checksum failed for the entry at offset " + pos
                        + " with " + (bytes.length - pos - 8 - len) + " bytes after it (hardware problem or the file was modified?)");
            }
            try {
                out.add(RecordCodec.read(new DataInputStream(new ByteArrayInputStream(bytes, pos + 8, len))));
            } catch (IOException | RuntimeException e) {
                throw new CorruptFileException(file, FORMAT + ": entry at offset " + pos + " has a valid checksum"
                        + " but does not decode", e);
            }
            pos += 8 + len;
        }
        return out;
    }

    private void truncateTornTail(int pos, int dropped) throws IOException {
        LOG.log(Level.WARNING, "{0}: dropping a torn tail of {1} bytes at offset {2} (a crash during an append)",
                file, dropped, pos);
        channel.truncate(pos);
        channel.force(true);
        channel.position(pos);
    }

    private int readHeader(ByteBuffer in) throws IOException {
        try {
            int magic = in.getInt();
            if (magic != MAGIC) {
                throw new CorruptFileException(file, FORMAT + ": header magic expected 0x" + Integer.toHexString(MAGIC)
                        + ", got 0x" + Integer.toHexString(magic) + " (not a Nepenthe record log?)");
            }
            int nameLen = in.getShort() & 0xFFFF;
            byte[] name = new byte[nameLen];
            in.get(name);
            String actual = new String(name, StandardCharsets.UTF_8);
            if (!actual.equals(FORMAT)) {
                throw new CorruptFileException(file, "expected a '" + FORMAT + "' file, got a '" + actual + "' file");
            }
            int version = in.getInt();
            if (version < VERSION) {
                throw new FileTooOldException(file, FORMAT, version, VERSION, VERSION);
            }
            if (version > VERSION) {
                throw new FileTooNewException(file, FORMAT, version, VERSION, VERSION);
            }
            in.position(in.position() + 16);
            return in.position();
        } catch (java.nio.BufferUnderflowException e) {
            throw new CorruptFileException(file, FORMAT + ": header is truncated", e);
        }
    }

    private static byte[] encodeEntries(Collection<VectorRecord> records) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        ByteArrayOutputStream one = new ByteArrayOutputStream();
        for (VectorRecord r : records) {
            one.reset();
            RecordCodec.write(new DataOutputStream(one), r);
            byte[] payload = one.toByteArray();
            CRC32C c = new CRC32C();
            c.update(payload);
            out.writeInt(payload.length);
            out.writeInt((int) c.getValue());
            out.write(payload);
        }
        return bytes.toByteArray();
    }

    /** Writes a complete log holding {@code records} next to {@code target}, then renames it over. */
    private static void writeFresh(Path target, Collection<VectorRecord> records) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        DataOutputStream h = new DataOutputStream(header);
        h.writeInt(MAGIC);
        byte[] name = FORMAT.getBytes(StandardCharsets.UTF_8);
        h.writeShort(name.length);
        h.write(name);
        h.writeInt(VERSION);
        h.write(ChecksummedFiles.newFileId());
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (ByteBuffer b : new ByteBuffer[] {ByteBuffer.wrap(header.toByteArray()), ByteBuffer.wrap(encodeEntries(records))}) {
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
            ch.force(true);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        ChecksummedFiles.fsyncDirectory(target.toAbsolutePath().getParent());
    }

    @Override
    public synchronized void close() throws IOException {
        channel.close();
    }
}
