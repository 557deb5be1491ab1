package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.index.IntegrityReport;
import java.util.Arrays;

/**
 * An index's own copy of every live (prepared) vector, in one contiguous float block, for indexes
 * that score by scanning (the exact index) or read full vectors back (IVF-PQ's re-rank and
 * retrain). Live vectors occupy slots {@code [0, size)}, back to back, so a scan is one
 * batch-scoring pass. Removal moves the last slot into the hole and zeroes the vacated one, so no
 * removed vector's bytes stay in the block.
 *
 * <p>Not thread-safe: the owning index guards it with its own lock.
 */
public final class SwapRemoveVectors {
    private final int dim;
    private float[] block;
    private int[] slotToOrd;
    private int[] ordToSlot; // -1 where the ordinal is not live
    private int size;

    public SwapRemoveVectors(int dim) {
        if (dim <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dim);
        }
        this.dim = dim;
        this.block = new float[16 * dim];
        this.slotToOrd = new int[16];
        this.ordToSlot = new int[16];
        Arrays.fill(ordToSlot, -1);
    }

    public int size() {
        return size;
    }

    public boolean contains(int ord) {
        return ord >= 0 && ord < ordToSlot.length && ordToSlot[ord] >= 0;
    }

    /** The slot of a live ordinal, or -1. */
    public int slotOf(int ord) {
        return ord >= 0 && ord < ordToSlot.length ? ordToSlot[ord] : -1;
    }

    public int ordinalAt(int slot) {
        return slotToOrd[slot];
    }

    /** Offset of the vector of a slot in {@link #block()}. */
    public int offset(int slot) {
        return slot * dim;
    }

    /** The block (slots {@code [0, size)} live, the rest zero). Callers must not write. */
    public float[] block() {
        return block;
    }

    /**
     * One past the largest ordinal this store has room for (a bound for ordinal-indexed arrays).
     */
    public int ordinalCapacity() {
        return ordToSlot.length;
    }

    /**
     * Appends a vector (copied) for an ordinal that is not live.
     *
     * @throws IllegalArgumentException if the ordinal is negative or already live
     */
    public void add(int ord, float[] prepared) {
        if (ord < 0 || contains(ord)) {
            throw new IllegalArgumentException(
                    "ordinal "
                            + ord
                            + ": expected a non-negative ordinal that is not live, got "
                            + (ord < 0 ? "a negative one" : "one already live"));
        }
        if (size == slotToOrd.length) {
            int cap = slotToOrd.length + (slotToOrd.length >> 1) + 1;
            block = Arrays.copyOf(block, Math.multiplyExact(cap, dim));
            slotToOrd = Arrays.copyOf(slotToOrd, cap);
        }
        if (ord >= ordToSlot.length) {
            int old = ordToSlot.length;
            ordToSlot = Arrays.copyOf(ordToSlot, Math.max(ord + 1, old + (old >> 1)));
            Arrays.fill(ordToSlot, old, ordToSlot.length, -1);
        }
        System.arraycopy(prepared, 0, block, size * dim, dim);
        slotToOrd[size] = ord;
        ordToSlot[ord] = size;
        size++;
    }

    /** Removes an ordinal and zeroes the bytes it vacates; returns false if it was not live. */
    public boolean remove(int ord) {
        if (!contains(ord)) {
            return false;
        }
        int slot = ordToSlot[ord];
        int last = size - 1;
        if (slot != last) {
            System.arraycopy(block, last * dim, block, slot * dim, dim);
            int moved = slotToOrd[last];
            slotToOrd[slot] = moved;
            ordToSlot[moved] = slot;
        }
        Arrays.fill(block, last * dim, (last + 1) * dim, 0f);
        slotToOrd[last] = 0;
        ordToSlot[ord] = -1;
        size = last;
        return true;
    }

    /**
     * The store's part of an integrity check: every slot maps back to its ordinal ({@code
     * slot-map-mismatch}), every live ordinal to its slot ({@code ordinal-map-dangling}), and
     * nothing beyond the live slots is non-zero ({@code freed-slot-not-zeroed}).
     */
    public void check(IntegrityReport.Builder r) {
        r.expect("slot-map-mismatch")
                .expect("ordinal-map-dangling")
                .expect("freed-slot-not-zeroed");
        for (int slot = 0; slot < size; slot++) {
            int ord = slotToOrd[slot];
            if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != slot) {
                r.violation("slot-map-mismatch", "slot " + slot + " names ordinal " + ord);
            }
        }
        int live = 0;
        for (int ord = 0; ord < ordToSlot.length; ord++) {
            int slot = ordToSlot[ord];
            if (slot >= 0) {
                live++;
                if (slot >= size || slotToOrd[slot] != ord) {
                    r.violation(
                            "ordinal-map-dangling", "ordinal " + ord + " points at slot " + slot);
                }
            }
        }
        long dirty = nonZeroFreedFloats();
        if (dirty > 0) {
            r.violation(
                    "freed-slot-not-zeroed",
                    dirty + " non-zero floats beyond the " + size + " live slots");
        }
        r.checked("slots", size)
                .checked("ordinals", live)
                .checked("freed-floats", block.length - (long) size * dim);
    }

    /** True when every slot maps back to its ordinal and vice versa. */
    public boolean mapsAgree() {
        int live = 0;
        for (int s : ordToSlot) {
            if (s >= 0) {
                live++;
            }
        }
        for (int slot = 0; slot < size; slot++) {
            int ord = slotToOrd[slot];
            if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != slot) {
                return false;
            }
        }
        return live == size;
    }

    /** Number of non-zero floats beyond the live slots. */
    public long nonZeroFreedFloats() {
        long n = 0;
        for (int i = size * dim; i < block.length; i++) {
            if (block[i] != 0f) {
                n++;
            }
        }
        return n;
    }
}
