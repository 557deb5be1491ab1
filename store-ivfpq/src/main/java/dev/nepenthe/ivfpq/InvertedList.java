package dev.nepenthe.ivfpq;

import java.util.Arrays;

/**
 * One inverted list: its members' ordinals and their m-byte PQ codes, back to back in entry order.
 * Removal moves the last entry into the hole and zeroes the vacated entry, so the list holds no
 * byte of a removed member and scans stay one contiguous pass.
 */
final class InvertedList {
    private final int m;
    private int[] ords;
    private byte[] codes;
    private int size;

    InvertedList(int m) {
        this.m = m;
        this.ords = new int[4];
        this.codes = new byte[4 * m];
    }

    int size() {
        return size;
    }

    int ordinalAt(int pos) {
        return ords[pos];
    }

    /** Offset of entry {@code pos}'s code in {@link #codes()}. */
    int codeOffset(int pos) {
        return pos * m;
    }

    /**
     * The code block (entries {@code [0, size)} are live; the rest is zero). Callers must not
     * write.
     */
    byte[] codes() {
        return codes;
    }

    /** Appends an entry and returns its position. */
    int append(int ordinal, byte[] code, int codeOff) {
        if (size == ords.length) {
            int cap = ords.length + (ords.length >> 1) + 1;
            ords = Arrays.copyOf(ords, cap);
            codes = Arrays.copyOf(codes, cap * m);
        }
        ords[size] = ordinal;
        System.arraycopy(code, codeOff, codes, size * m, m);
        return size++;
    }

    /**
     * Removes the entry at {@code pos} by moving the last entry into it.
     *
     * @return the ordinal that now sits at {@code pos} (and must have its position updated), or -1
     *     if the removed entry was the last
     */
    int removeAt(int pos) {
        int last = size - 1;
        int moved = -1;
        if (pos != last) {
            moved = ords[last];
            ords[pos] = moved;
            System.arraycopy(codes, last * m, codes, pos * m, m);
        }
        ords[last] = 0;
        Arrays.fill(codes, last * m, (last + 1) * m, (byte) 0);
        size = last;
        return moved;
    }

    /** Replaces the code of the entry at {@code pos} (re-encoding after a retrain). */
    void setCode(int pos, byte[] code, int codeOff) {
        System.arraycopy(code, codeOff, codes, pos * m, m);
    }

    /**
     * The code block for rewriting entries {@code [0, size)} in place (re-encoding a whole list);
     * bytes beyond the live entries must stay zero.
     */
    byte[] writableCodes() {
        return codes;
    }

    /** Replaces byte {@code j} of the code at {@code pos} (re-encoding one subspace). */
    void setCodeByte(int pos, int j, byte b) {
        codes[pos * m + j] = b;
    }

    /** Number of non-zero bytes beyond the live entries: freed space must be all zero. */
    long nonZeroFreedBytes() {
        long n = 0;
        for (int i = size; i < ords.length; i++) {
            if (ords[i] != 0) {
                n++;
            }
        }
        for (int i = size * m; i < codes.length; i++) {
            if (codes[i] != 0) {
                n++;
            }
        }
        return n;
    }

    /** The ordinal array including its free capacity (tests scan it for removed ordinals). */
    int[] rawOrdinals() {
        return ords;
    }

    /** Bytes held by this list's arrays (capacity, not just live entries). */
    long bytesAllocated() {
        return 4L * ords.length + codes.length;
    }
}
