package dev.nepenthe.core.internal.store;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The data folder's {@code store.lock}, held while a store is open, so that two processes cannot
 * share a folder. Apart from the facade so that the lock's acquisition and release (and the refusal
 * that names the folder) are in one place.
 */
public final class StoreLock implements Closeable {

    private final FileChannel channel;
    private final FileLock lock;

    private StoreLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Takes the lock of {@code folder}.
     *
     * @throws IOException if another process holds it, or the lock file cannot be opened
     */
    public static StoreLock acquire(Path folder) throws IOException {
        FileChannel ch =
                FileChannel.open(
                        folder.resolve("store.lock"),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        if (lock == null) {
            ch.close();
            throw new IOException(
                    "store folder "
                            + folder
                            + " is in use by another process (store.lock is held)");
        }
        return new StoreLock(ch, lock);
    }

    /** Releases the lock. */
    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
