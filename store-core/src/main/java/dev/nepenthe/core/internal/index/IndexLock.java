package dev.nepenthe.core.internal.index;

import java.io.IOException;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * An index's read-write lock, with the read-side idiom (lock, try, unlock in finally) written once
 * so that the many short readers of an index (size, contains, inspection) are one line each. Bodies
 * that mix locks, or take the write lock, use {@link #readLock()} and {@link #writeLock()} as
 * before.
 */
public final class IndexLock {
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    /** Something read under the lock that may fail with an {@link IOException}. */
    @FunctionalInterface
    public interface IoBody {
        /** Runs the body. */
        void run() throws IOException;
    }

    public Lock readLock() {
        return lock.readLock();
    }

    public Lock writeLock() {
        return lock.writeLock();
    }

    /** The value of {@code body}, computed under the read lock. */
    public <T> T read(Supplier<T> body) {
        lock.readLock().lock();
        try {
            return body.get();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** {@link #read} for an int. */
    public int readInt(IntSupplier body) {
        lock.readLock().lock();
        try {
            return body.getAsInt();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** {@link #read} for a boolean. */
    public boolean readBoolean(BooleanSupplier body) {
        lock.readLock().lock();
        try {
            return body.getAsBoolean();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** {@link #read} for a double. */
    public double readDouble(DoubleSupplier body) {
        lock.readLock().lock();
        try {
            return body.getAsDouble();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Runs {@code body} under the read lock (a check that fills a report). */
    public void readRun(Runnable body) {
        lock.readLock().lock();
        try {
            body.run();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Runs {@code body} under the read lock (a save, a stream write). */
    public void readIo(IoBody body) throws IOException {
        lock.readLock().lock();
        try {
            body.run();
        } finally {
            lock.readLock().unlock();
        }
    }
}
