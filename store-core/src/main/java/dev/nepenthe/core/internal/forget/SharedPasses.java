package dev.nepenthe.core.internal.forget;

import java.util.concurrent.atomic.AtomicLong;

/**
 * How many shared passes the forget worker ran in this JVM, for tests and benchmarks: a cleanup
 * removal (one journal entry, index removal with repair, segment rewrite and text delete for every
 * record a batch removed from a collection) and a verification check (one integrity check, and one
 * text-index walk, for every record a batch removed from a collection). Readers take the difference
 * around their own forgets. Not for production use.
 */
public final class SharedPasses {

    private static final AtomicLong REMOVALS = new AtomicLong();
    private static final AtomicLong CHECKS = new AtomicLong();
    private static final AtomicLong BATCHED = new AtomicLong();

    private SharedPasses() {}

    /** Cleanup removals run so far, one per collection per batch that removed something there. */
    public static long removals() {
        return REMOVALS.get();
    }

    /**
     * Shared verification checks run so far, one per collection per batch that removed something
     * there.
     */
    public static long checks() {
        return CHECKS.get();
    }

    /** Operations cleaned up so far (each counted once per cleanup it took part in). */
    public static long operationsCleaned() {
        return BATCHED.get();
    }

    static void removal() {
        REMOVALS.incrementAndGet();
    }

    static void check() {
        CHECKS.incrementAndGet();
    }

    static void cleaned(int operations) {
        BATCHED.addAndGet(operations);
    }
}
