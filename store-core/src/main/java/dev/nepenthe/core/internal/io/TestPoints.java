package dev.nepenthe.core.internal.io;

import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One store's test points: named moments at which a test can look at, copy or stop the store, each
 * set on this store alone, as Lucene's {@code IndexWriter} test points belong to one writer. Two
 * stores open in one JVM (parallel tests) never see each other's hooks. Three kinds:
 *
 * <ul>
 *   <li>crash points in the middle of a durable write (after a log append, after an fsync, between
 *       a file's write and its rename, ...), at which a test copies the store's folders: the copy
 *       is exactly what a process killed at that moment leaves on disk (a killed process loses
 *       nothing it had handed to the kernel);
 *   <li>a forget phase ("after-mark", "cleanup-before-delete", ...) at which the forget worker
 *       stops dead, as a crash there would;
 *   <li>a pause after a search has read the index and before it reads the records, to slide a write
 *       between the two.
 * </ul>
 *
 * <p>With nothing set a point costs one volatile read. Not for production use: nothing outside
 * tests sets them.
 */
public final class TestPoints {

    /**
     * How tests outside the store facade's package find an open store's points: the facade
     * registers it when its class loads (internal code may not name the facade). Holds no store.
     */
    private static volatile Function<Object, TestPoints> storeLookup;

    private volatile Consumer<String> crashHook;
    private volatile String forgetStopAt;
    private volatile Runnable afterIndexSearch;

    /** Points with nothing set; every store and every storage used outside a store has its own. */
    public TestPoints() {}

    /** Registers how {@link #of} finds a store's points; called once by the store facade. */
    public static void registerStoreLookup(Function<Object, TestPoints> lookup) {
        storeLookup = lookup;
    }

    /**
     * The test points of an open store ({@code dev.nepenthe.core.Nepenthe}), for tests in other
     * packages.
     *
     * @throws IllegalArgumentException if {@code store} is not a store
     */
    public static TestPoints of(Object store) {
        Function<Object, TestPoints> lookup = storeLookup;
        if (lookup == null) {
            throw new IllegalStateException(
                    "no store facade registered its test points: expected a Nepenthe, got "
                            + (store == null ? "null" : store.getClass().getName()));
        }
        return lookup.apply(store);
    }

    /** Called by the storage code at each named crash point. */
    public void reached(String point) {
        Consumer<String> h = crashHook;
        if (h != null) {
            h.accept(point);
        }
    }

    /** Installs the test's crash-point hook (null removes it). */
    public void installCrashHook(Consumer<String> hook) {
        crashHook = hook;
    }

    /** The forget phase to stop at, or null for none. */
    public String forgetStopAt() {
        return forgetStopAt;
    }

    /** Makes the forget worker stop dead at {@code phase} (null for none). */
    public void stopForgetAt(String phase) {
        forgetStopAt = phase;
    }

    /** Called by a search after it read the index and before it reads the records. */
    public void searchedIndex() {
        Runnable r = afterIndexSearch;
        if (r != null) {
            r.run();
        }
    }

    /** Runs {@code pause} in every search after it read the index (null removes it). */
    public void afterIndexSearch(Runnable pause) {
        afterIndexSearch = pause;
    }
}
