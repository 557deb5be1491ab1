package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.internal.memory.NativeMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * The stored records' vectors by ordinal, off the Java heap: native chunks of a fixed number of
 * rows, allocated as ordinals reach them and never moved, so a grown collection leaves no stale
 * copy of a vector behind (a grown array would, until the collector reuses it) and has no
 * 2^31-float bound.
 *
 * <p>One writer at a time (the collection's writer mutex); reads take no lock and may race a write
 * to the same row. The column cannot tell a torn read: {@link RecordCatalogue} validates each read
 * against its entry, which a writer unlinks before it changes the row.
 */
final class VectorColumn {

    /** Bytes per chunk at most: chunks stay few, and a small collection stays small. */
    private static final long CHUNK_BYTES = 1L << 21;

    /**
     * Rows per chunk at most, so low dimensions do not allocate megabytes for a handful of records.
     */
    private static final int CHUNK_ROWS = 1024;

    private final int dimension;
    private final long rowBytes;
    private final int shift;
    private final int mask;

    /** Chunks by {@code ordinal >>> shift}; replaced whole (a longer copy) when one is added. */
    private volatile MemorySegment[] chunks = new MemorySegment[0];

    VectorColumn(int dimension) {
        if (dimension <= 0) {
            throw new IllegalArgumentException("expected a positive dimension, got " + dimension);
        }
        this.dimension = dimension;
        this.rowBytes = dimension * (long) Float.BYTES;
        int rows =
                Integer.highestOneBit(
                        (int) Math.max(16, Math.min(CHUNK_ROWS, CHUNK_BYTES / rowBytes)));
        this.shift = Integer.numberOfTrailingZeros(rows);
        this.mask = rows - 1;
    }

    int dimension() {
        return dimension;
    }

    /** Writer: stores a copy of {@code v} (of the column's dimension) at {@code ordinal}. */
    void set(int ordinal, float[] v) {
        checkDimension(v);
        MemorySegment.copy(
                v, 0, chunkFor(ordinal), ValueLayout.JAVA_FLOAT, offset(ordinal), dimension);
    }

    /**
     * Writer: allocates the chunks for every ordinal below {@code rows} now, on every core (a
     * chunk's zeroing is its pages' first touch, which at an open of a million rows of 384 floats
     * took seconds on one thread), so that {@link #setReserved} may then run on several threads at
     * once.
     */
    void reserve(int rows) {
        MemorySegment[] cs = chunks;
        int need = rows <= 0 ? 0 : ((rows - 1) >>> shift) + 1;
        if (need <= cs.length) {
            return;
        }
        MemorySegment[] grown = Arrays.copyOf(cs, need);
        long chunkBytes = (mask + 1) * rowBytes;
        long slabBytes = (need - cs.length) * chunkBytes;
        if (slabBytes >= NativeMemory.HUGE_PAGE && NativeMemory.mapsHugePages()) {
            // One mapped region sliced into the chunks: its huge pages span chunk boundaries,
            // which a chunk of 1.5 MiB (1,024 rows of 384 floats) on its own could not use, and
            // the kernel zeroes each page as the loaders (on every core) first write it. The
            // region lives until its last chunk is unreachable.
            MemorySegment slab = NativeMemory.allocate(slabBytes);
            for (int i = cs.length; i < need; i++) {
                grown[i] = slab.asSlice((i - cs.length) * chunkBytes, chunkBytes);
            }
        } else {
            IntStream.range(cs.length, need).parallel().forEach(i -> grown[i] = allocateChunk());
        }
        chunks = grown;
    }

    /**
     * Stores a copy of {@code v} at {@code ordinal}, whose chunk {@link #reserve} allocated: safe
     * on several threads at once for distinct ordinals, while nothing grows the column.
     *
     * @throws IllegalStateException if the ordinal's chunk was not reserved
     */
    void setReserved(int ordinal, float[] v) {
        checkDimension(v);
        MemorySegment[] cs = chunks;
        int c = ordinal >>> shift;
        if (c >= cs.length) {
            throw new IllegalStateException("ordinal " + ordinal + " is beyond the reserved rows");
        }
        MemorySegment.copy(v, 0, cs[c], ValueLayout.JAVA_FLOAT, offset(ordinal), dimension);
    }

    /** Writer: zeros the row at {@code ordinal} (its record is gone; its floats must not stay). */
    void clear(int ordinal) {
        MemorySegment[] cs = chunks;
        int c = ordinal >>> shift;
        if (c < cs.length) {
            cs[c].asSlice(offset(ordinal), rowBytes).fill((byte) 0);
        }
    }

    /** Zeros every row (the column is being given up and its floats must not stay). */
    void wipe() {
        for (MemorySegment c : chunks) {
            c.fill((byte) 0);
        }
    }

    /**
     * Copies the row at {@code ordinal} into {@code out}. A row never written reads as zeros. The
     * caller validates the read (see the class comment).
     */
    void read(int ordinal, float[] out) {
        MemorySegment[] cs = chunks;
        int c = ordinal >>> shift;
        if (c >= cs.length) {
            Arrays.fill(out, 0, dimension, 0f);
            return;
        }
        MemorySegment.copy(cs[c], ValueLayout.JAVA_FLOAT, offset(ordinal), out, 0, dimension);
    }

    /** Native bytes the column holds. */
    long bytes() {
        return chunks.length * ((long) (mask + 1) * rowBytes);
    }

    private long offset(int ordinal) {
        return (ordinal & mask) * rowBytes;
    }

    private void checkDimension(float[] v) {
        if (v.length != dimension) {
            throw new IllegalArgumentException(
                    "expected a vector of dimension " + dimension + ", got " + v.length);
        }
    }

    /** A chunk, zeroed by the allocation; released by the collector once the column is gone. */
    private MemorySegment allocateChunk() {
        return Arena.ofAuto().allocate((mask + 1) * rowBytes, 64);
    }

    private MemorySegment chunkFor(int ordinal) {
        MemorySegment[] cs = chunks;
        int c = ordinal >>> shift;
        if (c >= cs.length) {
            MemorySegment[] grown = Arrays.copyOf(cs, c + 1);
            for (int i = cs.length; i <= c; i++) {
                grown[i] = allocateChunk();
            }
            chunks = grown;
            cs = grown;
        }
        return cs[c];
    }
}
