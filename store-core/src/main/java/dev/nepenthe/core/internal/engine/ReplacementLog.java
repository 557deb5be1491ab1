package dev.nepenthe.core.internal.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The collection's most recent replacements, as ordinals: which ordinal each replaced record left
 * for which, and the stamp of the write. What a search reads to keep a record it found that a
 * replacement took away under it (see {@link CollectionSearch}): the old version's ordinal leads to
 * the new version's, so the search returns the new version instead of neither.
 *
 * <p>Holds ordinals and stamps only, never an id, so nothing of a record outlives it here. A ring
 * of {@value #CAPACITY} replacements, written by the collection's writer (under its mutex) and read
 * by any thread without a lock: a reader that finds the ring wrapped past what it needs is told so,
 * and falls back on running its search again.
 */
final class ReplacementLog {

    /** Replacements kept; a search overtaken by more replacements than this runs again instead. */
    static final int CAPACITY = 4096;

    private static final int MASK = CAPACITY - 1;

    /**
     * One replacement: the record at {@code from} was replaced by the one at {@code to} in write
     * {@code stamp}.
     */
    record Move(long stamp, int from, int to) {}

    private final AtomicLongArray stamps = new AtomicLongArray(CAPACITY);
    private final AtomicLongArray moves = new AtomicLongArray(CAPACITY);

    /** Replacements appended so far; the ring's slots below it are written (release/acquire). */
    private volatile long head;

    /** Appends a replacement; the writer's only. Published before the old version leaves reads. */
    void append(long stamp, int from, int to) {
        long h = head;
        int slot = (int) (h & MASK);
        stamps.set(slot, stamp);
        moves.set(slot, ((long) from << 32) | (to & 0xFFFFFFFFL));
        head = h + 1;
    }

    /**
     * The replacements of writes after stamp {@code after}, oldest first; null when some of them
     * may have been overwritten (more than {@value #CAPACITY} since).
     */
    List<Move> since(long after) {
        long h = head;
        long oldest = Math.max(0, h - CAPACITY);
        List<Move> out = new ArrayList<>();
        boolean reachedOlder = false;
        long lowestRead = h;
        for (long i = h - 1; i >= oldest; i--) {
            int slot = (int) (i & MASK);
            long stamp = stamps.get(slot);
            long move = moves.get(slot);
            lowestRead = i;
            if (stamp <= after) {
                reachedOlder = true;
                break;
            }
            out.add(new Move(stamp, (int) (move >>> 32), (int) move));
        }
        // A slot is rewritten by the append CAPACITY places after it, which starts once the head
        // has reached that place: if it has now, a slot read may hold a newer write's halves.
        // And a ring that never reached an older write may have dropped some of the newer ones.
        if (head - CAPACITY >= lowestRead || (!reachedOlder && oldest > 0)) {
            return null;
        }
        Collections.reverse(out);
        return out;
    }
}
