package dev.nepenthe.ivfpq;

import java.util.Arrays;

/**
 * The index's own copy of every live prepared vector, in one contiguous float block: re-rank
 * and retrain read full vectors from here. Live vectors occupy slots {@code [0, size)}; removal
 * moves the last slot into the hole and zeroes the vacated one, so no removed vector's bytes stay.
 */
final class VectorStore {
    private final int dim;
    private float[] block;
    private int[] slotToOrd;
    private int[] ordToSlot; // -1 where the ordinal is not live
    private int size;

    VectorStore(int dim) {
        this.dim = dim;
        this.block = new float[16 * dim];
        this.slotToOrd = new int[16];
        this.ordToSlot = new int[16];
        Arrays.fill(ordToSlot, -1);
    }

    int size() {
        return size;
    }

    boolean contains(int ord) {
        return ord >= 0 && ord < ordToSlot.length && ordToSlot[ord] >= 0;
    }

    /** The slot of a live ordinal, or -1. */
    int slotOf(int ord) {
        return ord >= 0 && ord < ordToSlot.length ? ordToSlot[ord] : -1;
    }

    int ordinalAt(int slot) {
        return slotToOrd[slot];
    }

    /** Offset of the vector of a slot in {@link #block()}. */
    int offset(int slot) {
        return slot * dim;
    }

    /** The block (slots {@code [0, size)} live, the rest zero). Callers must not write. */
    float[] block() {
        return block;
    }

    /** One past the largest ordinal this store has room for (a bound for ordinal-indexed arrays). */
    int ordinalCapacity() {
        return ordToSlot.length;
    }

    void add(int ord, float[] prepared) {
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

    /** Removes a live ordinal and zeroes its bytes. */
    void remove(int ord) {
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
    }

    /** Count of ordinals the map says are live (for the integrity check). */
    int liveInMap() {
        int live = 0;
        for (int s : ordToSlot) {
            if (s >= 0) {
                live++;
            }
        }
        return live;
    }

    /** True when every slot maps back to its ordinal and vice versa. */
    boolean mapsAgree() {
        for (int slot = 0; slot < size; slot++) {
            int ord = slotToOrd[slot];
            if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != slot) {
                return false;
            }
        }
        return liveInMap() == size;
    }

    /** Number of non-zero floats beyond the live slots. */
    long nonZeroFreedFloats() {
        long n = 0;
        for (int i = size * dim; i < block.length; i++) {
            if (block[i] != 0f) {
                n++;
            }
        }
        return n;
    }
}
