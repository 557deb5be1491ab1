package dev.nepenthe.core.forget;

/**
 * How completely a surface can erase what it derived from a record.
 *
 * <ul>
 *   <li>{@code PHYSICAL}: the bytes are removed (or made unreadable by destroying their key) and a
 *       check proves it.
 *   <li>{@code REBUILD_REQUIRED}: the surface can only be cleaned by rebuilding it; until its purge
 *       has rebuilt it, it blocks sealing.
 *   <li>{@code LOGICAL_ONLY}: the surface can hide the record but not remove it; it always blocks
 *       sealing and says so.
 * </ul>
 */
public enum ErasureClass {
    /** Bytes removed (or their key destroyed), and a check proves it. */
    PHYSICAL,
    /** Cleaned only by a rebuild; blocks sealing until its purge has rebuilt it. */
    REBUILD_REQUIRED,
    /** Can hide but not remove; always blocks sealing. */
    LOGICAL_ONLY
}
