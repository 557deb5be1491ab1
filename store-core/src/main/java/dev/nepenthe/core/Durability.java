package dev.nepenthe.core;

/**
 * When a write is acknowledged.
 *
 * <ul>
 *   <li>{@link #SYNC} (default): after the log is fsynced. Concurrent writers share one fsync
 *       (group commit): whoever syncs first covers everything appended before it.
 *   <li>{@link #ASYNC}: after the bytes reach the operating system. A crash of the process loses
 *       nothing; a crash of the machine may lose the last writes. For bulk loads and tests.
 * </ul>
 */
public enum Durability {
    /** Acknowledge a write once the log is fsynced (shared by concurrent writers). */
    SYNC,
    /**
     * Acknowledge a write once the log's bytes are handed to the operating system, with no fsync.
     */
    ASYNC
}
