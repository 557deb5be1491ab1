package dev.nepenthe.testing.faults;

import dev.nepenthe.testing.faults.FaultPlan.Op;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A file channel that asks its {@link FaultPlan} before every write, read and fsync. Besides
 * throwing, a failed fsync undoes what this channel wrote since its last good one (see {@link
 * FaultPlan}). Memory-mapped regions are the real file's: a fault cannot reach them.
 */
final class FaultyFileChannel extends FileChannel {

    /** The bytes a write replaced, to put back if an fsync fails before the write is durable. */
    // Never compared or hashed, only replayed, so the array's identity equality does not matter.
    @SuppressWarnings("ArrayRecordComponent")
    private record Undo(long position, byte[] old, long sizeBefore) {}

    private final FileChannel in;
    private final FaultPlan plan;
    private final String file;
    private final boolean directory;
    private final Deque<Undo> unsynced = new ArrayDeque<>();

    FaultyFileChannel(FileChannel in, FaultPlan plan, String file, boolean directory) {
        this.in = in;
        this.plan = plan;
        this.file = file;
        this.directory = directory;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        plan.check(Op.READ, file, null);
        return in.read(dst);
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        plan.check(Op.READ, file, null);
        return in.read(dsts, offset, length);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        plan.check(Op.READ, file, null);
        return in.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return write(src, -1);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        plan.check(Op.WRITE, file, null);
        int n = plan.allowWrite(file, src.remaining());
        long at = position < 0 ? in.position() : position;
        remember(at, n);
        ByteBuffer part = src.duplicate();
        part.limit(part.position() + n);
        int written = position < 0 ? in.write(part) : in.write(part, position);
        src.position(src.position() + written);
        return written;
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long total = 0;
        for (int i = offset; i < offset + length; i++) {
            int want = srcs[i].remaining();
            int n = write(srcs[i]);
            total += n;
            if (n < want) {
                break;
            }
        }
        return total;
    }

    /** Keeps what a write of {@code n} bytes at {@code at} replaces. */
    private void remember(long at, int n) throws IOException {
        if (directory || n == 0) {
            return;
        }
        long size = in.size();
        int overlap = (int) Math.max(0, Math.min(at + n, size) - at);
        byte[] old = new byte[overlap];
        if (overlap > 0) {
            ByteBuffer b = ByteBuffer.wrap(old);
            while (b.hasRemaining() && in.read(b, at + b.position()) >= 0) {
                // positional reads until the overlap is read
            }
        }
        unsynced.push(new Undo(at, old, size));
    }

    @Override
    public void force(boolean metaData) throws IOException {
        try {
            plan.check(directory ? Op.DIRECTORY_FSYNC : Op.FSYNC, file, null);
        } catch (IOException e) {
            dropUnsynced();
            throw e;
        }
        in.force(metaData);
        unsynced.clear();
    }

    /** The page cache gave up on the dirty pages: the file is as its last good fsync left it. */
    private void dropUnsynced() throws IOException {
        long size = -1;
        while (!unsynced.isEmpty()) {
            Undo u = unsynced.pop();
            if (u.old().length > 0) {
                ByteBuffer b = ByteBuffer.wrap(u.old());
                while (b.hasRemaining()) {
                    in.write(b, u.position() + b.position());
                }
            }
            size = u.sizeBefore();
        }
        if (size >= 0 && in.size() > size) {
            in.truncate(size);
        }
        in.force(true);
    }

    @Override
    public long position() throws IOException {
        return in.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
        in.position(newPosition);
        return this;
    }

    @Override
    public long size() throws IOException {
        return in.size();
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        in.truncate(size);
        return this;
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target)
            throws IOException {
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(count, 1 << 16));
        long done = 0;
        while (done < count) {
            buf.clear().limit((int) Math.min(buf.capacity(), count - done));
            int n = read(buf, position + done);
            if (n <= 0) {
                break;
            }
            buf.flip();
            while (buf.hasRemaining()) {
                target.write(buf);
            }
            done += n;
        }
        return done;
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count)
            throws IOException {
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(Math.max(count, 1), 1 << 16));
        long done = 0;
        while (done < count) {
            buf.clear().limit((int) Math.min(buf.capacity(), count - done));
            int n = src.read(buf);
            if (n <= 0) {
                break;
            }
            buf.flip();
            while (buf.hasRemaining()) {
                write(buf, position + done + buf.position());
            }
            done += n;
        }
        return done;
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
        return in.map(mode, position, size);
    }

    @Override
    public MemorySegment map(MapMode mode, long offset, long size, Arena arena) throws IOException {
        return in.map(mode, offset, size, arena);
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) throws IOException {
        return in.lock(position, size, shared);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
        return in.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException {
        in.close();
    }
}
