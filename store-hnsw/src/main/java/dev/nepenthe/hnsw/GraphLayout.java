package dev.nepenthe.hnsw;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The read-only view a search walks: the graph's arrays at one capacity. Its methods are the ones
 * {@link HnswSearcher} needs, bounds-checked where a shared upper list may name a slot from a newer
 * layout. Scores come from {@link #scorers()}, made over this layout's vectors, so a walk scores
 * the same snapshot whose lists it follows.
 */
final class GraphLayout {
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle BYTES = MethodHandles.arrayElementVarHandle(byte[].class);

    final int capacity;
    private final int stride0;
    private final int strideUp;
    private final ScorerSupplier scorers;
    private final ScorerSupplier searchScorers;
    private final int[] level0;
    private final int[][] upper;
    private final byte[] states;
    private final int[] slotToOrd;
    private final int[] freedAt;

    /**
     * @param scorers exact scorers over this capacity's vectors
     * @param searchScorers the scorers a search walks with: over the codes in a quantized graph,
     *     else {@code scorers}
     */
    GraphLayout(
            int capacity,
            int stride0,
            int strideUp,
            ScorerSupplier scorers,
            ScorerSupplier searchScorers,
            int[] level0,
            int[][] upper,
            byte[] states,
            int[] slotToOrd,
            int[] freedAt) {
        this.capacity = capacity;
        this.stride0 = stride0;
        this.strideUp = strideUp;
        this.scorers = scorers;
        this.searchScorers = searchScorers;
        this.level0 = level0;
        this.upper = upper;
        this.states = states;
        this.slotToOrd = slotToOrd;
        this.freedAt = freedAt;
    }

    /**
     * The exact scorers of this layout's vectors: building, repairing, exact scans and the re-rank
     * of a quantized search score with these.
     */
    ScorerSupplier scorers() {
        return scorers;
    }

    /**
     * The scorers a search walks with: over the codes in a quantized graph (not exact: the caller
     * re-ranks with {@link #scorers()} before returning a score), else {@link #scorers()}.
     */
    ScorerSupplier searchScorers() {
        return searchScorers;
    }

    /** The array holding the list, or null when the slot has no such layer (any more). */
    int[] listArray(int slot, int level) {
        if (level == 0) {
            return level0;
        }
        int[] up = upper[slot];
        return up != null && (level - 1) * strideUp < up.length ? up : null;
    }

    int listBase(int slot, int level) {
        return level == 0 ? slot * stride0 : (level - 1) * strideUp;
    }

    boolean isLive(int slot) {
        return (byte) BYTES.getAcquire(states, slot) == HnswGraph.LIVE;
    }

    int ordinal(int slot) {
        return slotToOrd[slot];
    }

    /**
     * Whether a slot scored since the search read {@code startEpoch} still holds what was scored:
     * live and not freed since. The fence keeps the caller's earlier reads of the slot's vector
     * before the stamp is read.
     */
    boolean unchangedSince(int slot, int startEpoch) {
        VarHandle.loadLoadFence();
        return isLive(slot) && (int) INTS.getAcquire(freedAt, slot) <= startEpoch;
    }
}
