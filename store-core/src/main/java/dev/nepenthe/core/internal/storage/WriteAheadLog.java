package dev.nepenthe.core.internal.storage;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.Durability;
import dev.nepenthe.core.FileTooNewException;
import dev.nepenthe.core.FileTooOldException;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.IoErrors;
import dev.nepenthe.core.internal.io.TestPoints;
import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * A write-ahead log in generations ({@code wal-<generation>.log}). Each file has a header (magic,
 * format name, version, generation) and then frames {@code [length][crc32c][body]}, one per {@link
 * #append} call: the body is {@code [count]} then {@code [length][payload]} per entry, so the
 * checksum covers a batch whole and recovery applies all of its entries or none (format version 1,
 * still read, had one checksummed frame per entry).
 *
 * <p>Durability: {@link #append} returns a position; {@link #sync} makes everything up to it
 * durable. Under {@link Durability#SYNC} the caller acknowledges only after {@code sync}; one fsync
 * covers every writer that appended before it (group commit).
 *
 * <p>Recovery ({@link #replay}): a cut-short entry at the end of the newest generation is a torn
 * tail from a crash mid-append; it is dropped, reported, and the file truncated. Anything else that
 * does not verify is corruption and fails, naming the file and offset.
 *
 * <p>Checkpoints call {@link #rotate} and, once the entries of older generations are safely
 * elsewhere, {@link #deleteBefore}: old generations are deleted whole.
 *
 * <p>Failure: a write, fsync or rotation that fails leaves the log failed for good. An fsync is
 * never retried (after a failed one the kernel may have dropped the dirty pages and a second fsync
 * would answer for nothing), and nothing is appended after bytes that may be torn; every later call
 * throws, naming the first failure. The store reopens to recover: replay drops the torn frame,
 * which was never acknowledged.
 */
public final class WriteAheadLog implements Closeable {

    static final String FORMAT = "nepenthe-wal";
    static final int VERSION = 2;

    /** The version with one frame per entry, read but no longer written. */
    static final int VERSION_ENTRY_FRAMES = 1;

    private static final int MAGIC = 0x4E50574C; // "NPWL"
    private static final System.Logger LOG = System.getLogger(WriteAheadLog.class.getName());

    /** What recovery found. */
    public record RecoveryReport(
            int generations, long entries, long tornBytesDropped, Path tornFile) {}

    /** Receives replayed entries in log order. */
    @FunctionalInterface
    public interface EntryConsumer {
        void accept(long generation, byte[] payload) throws IOException;
    }

    private final Path dir;
    private final Durability durability;

    /** The store's test points: crash points after appends, syncs, rotations and deletions. */
    private final TestPoints points;

    private final Object syncLock = new Object();
    private FileChannel channel;
    private long generation;

    /** Bytes written to the current generation; guarded by this. */
    private long written;

    /** Bytes of the current generation known durable; guarded by syncLock. */
    private volatile long synced;

    /** The first write, fsync or rotation that failed; once set, the log takes nothing more. */
    private volatile IOException failed;

    private WriteAheadLog(Path dir, Durability durability, TestPoints points) {
        this.dir = dir;
        this.durability = durability;
        this.points = points;
    }

    /**
     * Opens the log in {@code dir}, replaying every entry into {@code consumer} first (so the
     * caller rebuilds its state before accepting writes), and starts a new generation.
     */
    public static WriteAheadLog open(
            Path dir, Durability durability, EntryConsumer consumer, RecoveryReport[] report)
            throws IOException {
        return open(dir, durability, consumer, report, CrashPoints.bound());
    }

    /**
     * {@link #open(Path, Durability, EntryConsumer, RecoveryReport[])} reporting the log's crash
     * points to {@code points}, the store's.
     */
    public static WriteAheadLog open(
            Path dir,
            Durability durability,
            EntryConsumer consumer,
            RecoveryReport[] report,
            TestPoints points)
            throws IOException {
        Files.createDirectories(dir);
        WriteAheadLog wal = new WriteAheadLog(dir, durability, points);
        RecoveryReport r = wal.replay(consumer);
        if (report != null) {
            report[0] = r;
        }
        List<Long> gens = wal.generations();
        wal.startGeneration(gens.isEmpty() ? 1 : gens.get(gens.size() - 1) + 1);
        return wal;
    }

    /** Generations present on disk, ascending. */
    public List<Long> generations() throws IOException {
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "wal-*.log")) {
            for (Path f : files) {
                String n = f.getFileName().toString();
                try {
                    out.add(Long.parseLong(n.substring(4, n.length() - 4)));
                } catch (NumberFormatException e) {
                    throw new CorruptFileException(
                            f, FORMAT + ": file name does not carry a generation number");
                }
            }
        }
        out.sort(null);
        return out;
    }

    private Path file(long gen) {
        return dir.resolve(String.format("wal-%016d.log", gen));
    }

    private void startGeneration(long gen) throws IOException {
        Path f = file(gen);
        FileChannel ch =
                FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            ByteBuffer h = header(gen);
            while (h.hasRemaining()) {
                ch.write(h);
            }
            ch.force(true);
            ChecksummedFiles.fsyncDirectory(dir);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        this.channel = ch;
        this.generation = gen;
        this.written = ch.position();
        this.synced = written;
    }

    private static ByteBuffer header(long gen) {
        byte[] name = FORMAT.getBytes(StandardCharsets.UTF_8);
        ByteBuffer h = ByteBuffer.allocate(4 + 2 + name.length + 4 + 8 + 4);
        h.putInt(MAGIC).putShort((short) name.length).put(name).putInt(VERSION).putLong(gen);
        CRC32C crc = new CRC32C();
        crc.update(h.array(), 0, h.position());
        h.putInt((int) crc.getValue());
        return h.flip();
    }

    /** The current generation number. */
    public synchronized long generation() {
        return generation;
    }

    /**
     * Appends one entry and returns its end position in the current generation, for {@link #sync}.
     * Not durable until synced.
     */
    public synchronized long append(byte[] payload) throws IOException {
        return append(List.of(payload));
    }

    /**
     * Appends several entries as one frame, which recovery applies whole or not at all; returns the
     * frame's end position.
     */
    public synchronized long append(List<byte[]> payloads) throws IOException {
        ensureUsable();
        int body = 4;
        for (byte[] p : payloads) {
            body += 4 + p.length;
        }
        ByteBuffer buf = ByteBuffer.allocate(8 + body);
        buf.position(8);
        buf.putInt(payloads.size());
        for (byte[] p : payloads) {
            buf.putInt(p.length).put(p);
        }
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 8, body);
        buf.putInt(0, body).putInt(4, (int) crc.getValue());
        buf.flip();
        try {
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
        } catch (IOException | RuntimeException e) {
            throw fail(e, "appending to");
        }
        written += buf.limit();
        points.reached("wal.appended");
        return written;
    }

    /** Throws if an earlier write, fsync or rotation failed. */
    private void ensureUsable() throws IOException {
        IOException f = failed;
        if (f != null) {
            throw new IOException(
                    "write-ahead log "
                            + dir
                            + " failed earlier ("
                            + f.getMessage()
                            + "); it takes no more writes until the store is reopened",
                    f);
        }
    }

    /**
     * Marks the log failed for good; returns the failure, naming the file, as an IOException to
     * throw.
     */
    private IOException fail(Throwable e, String doing) {
        IOException io =
                e instanceof IOException x
                        ? IoErrors.naming(file(generation), doing, x)
                        : new IOException(doing + " write-ahead log " + dir + " failed: " + e, e);
        synchronized (this) {
            if (failed == null) {
                failed = io;
            }
        }
        return io;
    }

    /** The failure that stopped this log, or null. */
    public IOException failure() {
        return failed;
    }

    /**
     * Makes everything up to {@code position} of the current generation durable (no-op under {@link
     * Durability#ASYNC}). A writer that finds its position already covered by another writer's
     * fsync returns at once.
     */
    public void sync(long position) throws IOException {
        if (durability == Durability.ASYNC || synced >= position) {
            return;
        }
        synchronized (syncLock) {
            if (synced >= position) {
                return;
            }
            // A writer that waited here behind a failed fsync must not fsync again.
            ensureUsable();
            FileChannel ch;
            long upTo;
            synchronized (this) {
                ch = channel;
                upTo = written;
            }
            try {
                ch.force(false);
            } catch (IOException | RuntimeException e) {
                throw fail(e, "syncing");
            }
            synced = upTo;
            points.reached("wal.synced");
        }
    }

    /**
     * Starts a new generation and returns its number; older ones stay until {@link #deleteBefore}.
     */
    public long rotate() throws IOException {
        synchronized (syncLock) {
            synchronized (this) {
                ensureUsable();
                try {
                    channel.force(false);
                    channel.close();
                    startGeneration(generation + 1);
                } catch (IOException | RuntimeException e) {
                    throw fail(e, "rotating");
                }
                points.reached("wal.rotated");
                return generation;
            }
        }
    }

    /** Deletes every generation older than {@code gen} (their entries live elsewhere now). */
    public synchronized void deleteBefore(long gen) throws IOException {
        boolean any = false;
        for (long g : generations()) {
            if (g < gen && g != generation) {
                Files.delete(file(g));
                any = true;
            }
        }
        if (any) {
            ChecksummedFiles.fsyncDirectory(dir);
            points.reached("wal.deleted-old");
        }
    }

    private RecoveryReport replay(EntryConsumer consumer) throws IOException {
        List<Long> gens = generations();
        long entries = 0;
        long torn = 0;
        Path tornFile = null;
        for (int gi = 0; gi < gens.size(); gi++) {
            long gen = gens.get(gi);
            Path f = file(gen);
            boolean newest = gi == gens.size() - 1;
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(f);
            } catch (IOException e) {
                throw IoErrors.naming(f, "reading", e);
            }
            int[] header = readHeader(f, bytes, gen, newest);
            int pos = header[0];
            boolean batchFrames = header[1] >= VERSION;
            if (pos < 0) {
                // A newest generation whose header never reached the disk holds no entries.
                torn = bytes.length;
                tornFile = f;
                Files.delete(f);
                LOG.log(
                        Level.WARNING,
                        "{0}: dropped a generation whose header was cut short ({1} bytes)",
                        f,
                        bytes.length);
                break;
            }
            ByteBuffer in = ByteBuffer.wrap(bytes);
            while (pos < bytes.length) {
                int remaining = bytes.length - pos;
                int len = remaining >= 8 ? in.getInt(pos) : -1;
                boolean complete = remaining >= 8 && len >= 0 && len <= remaining - 8;
                boolean valid = false;
                if (complete) {
                    CRC32C crc = new CRC32C();
                    crc.update(bytes, pos + 8, len);
                    valid = (int) crc.getValue() == in.getInt(pos + 4);
                }
                if (valid) {
                    if (batchFrames) {
                        entries += replayFrame(f, bytes, pos + 8, len, gen, consumer);
                    } else {
                        byte[] payload = new byte[len];
                        System.arraycopy(bytes, pos + 8, payload, 0, len);
                        consumer.accept(gen, payload);
                        entries++;
                    }
                    pos += 8 + len;
                    continue;
                }
                boolean endsTheFile = !complete || pos + 8 + len == bytes.length;
                if (newest && endsTheFile) {
                    torn = remaining;
                    tornFile = f;
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        ch.truncate(pos);
                        ch.force(true);
                    }
                    LOG.log(
                            Level.WARNING,
                            "{0}: dropped a torn tail of {1} bytes at offset {2} (a crash during an"
                                    + " append)",
                            f,
                            remaining,
                            pos);
                    break;
                }
                throw new CorruptFileException(
                        f,
                        FORMAT
                                + ": entry at offset "
                                + pos
                                + " does not verify"
                                + (newest
                                        ? " and valid data follows it"
                                        : " in a generation that was complete")
                                + " (hardware problem or the file was modified?)");
            }
        }
        return new RecoveryReport(gens.size(), entries, torn, tornFile);
    }

    /**
     * Hands a verified frame's entries to the consumer (all of them: the checksum vouched for the
     * whole batch); returns how many.
     */
    private static int replayFrame(
            Path f, byte[] bytes, int start, int len, long gen, EntryConsumer consumer)
            throws IOException {
        ByteBuffer in = ByteBuffer.wrap(bytes, start, len).slice();
        int count = len >= 4 ? in.getInt() : -1;
        if (count < 0) {
            throw new CorruptFileException(
                    f,
                    FORMAT
                            + ": frame at offset "
                            + (start - 8)
                            + " declares "
                            + count
                            + " entries (expected 0 or more)");
        }
        List<byte[]> payloads = new ArrayList<>(Math.min(count, len / 4));
        for (int i = 0; i < count; i++) {
            int n = in.remaining() >= 4 ? in.getInt() : -1;
            if (n < 0 || n > in.remaining()) {
                throw new CorruptFileException(
                        f,
                        FORMAT
                                + ": frame at offset "
                                + (start - 8)
                                + ": entry "
                                + i
                                + " of "
                                + count
                                + " runs past the frame (its checksum verified: a writer bug?)");
            }
            byte[] p = new byte[n];
            in.get(p);
            payloads.add(p);
        }
        if (in.hasRemaining()) {
            throw new CorruptFileException(
                    f,
                    FORMAT
                            + ": frame at offset "
                            + (start - 8)
                            + " has "
                            + in.remaining()
                            + " bytes after its "
                            + count
                            + " entries");
        }
        for (byte[] p : payloads) {
            consumer.accept(gen, p);
        }
        return count;
    }

    /**
     * Position after the header and the file's version; the position is -1 if the newest file's
     * header is cut short.
     */
    private static int[] readHeader(Path f, byte[] bytes, long gen, boolean newest)
            throws IOException {
        int expected = header(gen).remaining();
        if (bytes.length < expected) {
            if (newest) {
                return new int[] {-1, VERSION};
            }
            throw new CorruptFileException(f, FORMAT + ": header is truncated");
        }
        ByteBuffer h = ByteBuffer.wrap(bytes);
        if (h.getInt() != MAGIC) {
            throw new CorruptFileException(f, FORMAT + ": bad header magic (not a Nepenthe log?)");
        }
        int nameLen = h.getShort() & 0xFFFF;
        if (nameLen != FORMAT.length()) {
            throw new CorruptFileException(f, "expected a '" + FORMAT + "' file, got another kind");
        }
        h.position(h.position() + nameLen);
        int version = h.getInt();
        long storedGen = h.getLong();
        int end = h.position();
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, end);
        if ((int) crc.getValue() != h.getInt()) {
            throw new CorruptFileException(f, FORMAT + ": header checksum failed");
        }
        if (version < VERSION_ENTRY_FRAMES) {
            throw new FileTooOldException(f, FORMAT, version, VERSION_ENTRY_FRAMES, VERSION);
        }
        if (version > VERSION) {
            throw new FileTooNewException(f, FORMAT, version, VERSION_ENTRY_FRAMES, VERSION);
        }
        if (storedGen != gen) {
            throw new CorruptFileException(
                    f,
                    FORMAT + ": header says generation " + storedGen + ", file name says " + gen);
        }
        return new int[] {h.position(), version};
    }

    @Override
    public void close() throws IOException {
        synchronized (syncLock) {
            synchronized (this) {
                if (channel == null || !channel.isOpen()) {
                    return;
                }
                if (failed != null) {
                    channel.close(); // no fsync after a failure: it would answer for nothing
                    return;
                }
                try {
                    channel.force(false);
                } finally {
                    channel.close();
                }
            }
        }
    }
}
