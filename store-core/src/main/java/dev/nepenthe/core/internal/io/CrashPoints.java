package dev.nepenthe.core.internal.io;

import java.util.function.Consumer;

/**
 * Named moments in the middle of a durable write (after a log append, after an fsync, between a
 * file's write and its rename, ...) at which a test can stop the world and copy the store's
 * folders: the copy is exactly what a process killed at that moment leaves on disk (a killed
 * process loses nothing it had handed to the kernel). Lucene's {@code IndexWriter} test points
 * serve the same purpose. With no hook installed a point costs one volatile read.
 */
public final class CrashPoints {

    private static volatile Consumer<String> hook;

    private CrashPoints() {}

    /** Called by the storage code at each named moment. */
    public static void reached(String point) {
        Consumer<String> h = hook;
        if (h != null) {
            h.accept(point);
        }
    }

    /** Installs the test's hook (null removes it). Not for production use. */
    public static void install(Consumer<String> h) {
        hook = h;
    }
}
