package dev.nepenthe.cluster.internal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The last log entry this replica's store applied (term and index), forced after every entry: on a
 * restart, Ratis replays the log past it and nothing at or before it runs again. A re-run could
 * bring a forgotten record back (an upsert replayed after a re-admission lifted its fence), so the
 * one entry a crash can leave half-counted is the one applied last, and every kind of entry is
 * harmless to apply twice on its own.
 */
final class AppliedIndex implements Closeable {

    private static final int SIZE = 20;

    private final Path file;
    private final FileChannel channel;
    private long term;
    private long index;

    private AppliedIndex(Path file, FileChannel channel, long term, long index) {
        this.file = file;
        this.channel = channel;
        this.term = term;
        this.index = index;
    }

    static AppliedIndex open(Path file) throws IOException {
        boolean existed = Files.exists(file);
        FileChannel c =
                FileChannel.open(
                        file,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
        if (!existed || c.size() == 0) {
            return new AppliedIndex(file, c, 0, 0);
        }
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        while (b.hasRemaining() && c.read(b, b.position()) > 0) {
            // read it all
        }
        b.flip();
        if (b.remaining() != SIZE) {
            c.close();
            throw new IOException(
                    file
                            + ": expected "
                            + SIZE
                            + " bytes (term, index, CRC32C), got "
                            + b.remaining());
        }
        long term = b.getLong();
        long index = b.getLong();
        int crc = b.getInt();
        if (crc != crc(term, index)) {
            c.close();
            throw new IOException(
                    file
                            + ": expected a CRC32C of "
                            + Integer.toHexString(crc(term, index))
                            + " over term and index, got "
                            + Integer.toHexString(crc));
        }
        return new AppliedIndex(file, c, term, index);
    }

    synchronized long term() {
        return term;
    }

    synchronized long index() {
        return index;
    }

    /** Records that entry (term, index) is applied, durably. A failed force is thrown. */
    synchronized void set(long term, long index) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.putLong(term).putLong(index).putInt(crc(term, index)).flip();
        while (b.hasRemaining()) {
            channel.write(b, b.position());
        }
        channel.force(false);
        this.term = term;
        this.index = index;
    }

    private static int crc(long term, long index) {
        CRC32C c = new CRC32C();
        c.update(ByteBuffer.allocate(16).putLong(term).putLong(index).flip());
        return (int) c.getValue();
    }

    Path file() {
        return file;
    }

    @Override
    public synchronized void close() throws IOException {
        channel.close();
    }
}
