package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.memory.NativeMemory;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The compact layout of an HNSW graph, touched only through the named accessors below (the way
 * hnswlib reaches a node's record through {@code getDataByInternalId} and {@code get_linklist0}).
 *
 * <p>Everything is indexed by an internal <em>slot</em>; the index maps store ordinals to slots.
 *
 * <ul>
 *   <li>Vectors: slot {@code s} at float {@code [s*dim, (s+1)*dim)} of one float array on the heap,
 *       or, with {@link HnswParams.VectorStorage#OFF_HEAP}, of one native memory segment (floats in
 *       native byte order; offsets are longs, so no 2^31 bound), which counts against {@code
 *       -XX:MaxDirectMemorySize} (by default the maximum heap size) and which the garbage collector
 *       releases when grown out, as it would an array.
 *   <li>Codes, in a quantized graph only: one byte array, or with the vectors off the heap one
 *       native segment beside them; slot {@code s}'s {@link Int8Codes} entry at {@code [s*stride,
 *       (s+1)*stride)}, written with the vector and zeroed with it.
 *   <li>Layer-0 lists: one int array with a fixed stride of {@code 1 + maxDegree0} per slot: the
 *       count, then the neighbours.
 *   <li>Upper-layer lists: per slot, one int array holding its layers 1..level back to back, each
 *       with stride {@code 1 + maxDegree}. Few nodes have any, so they are allocated per node.
 *   <li>Reverse lists: per slot and layer, the slots whose list holds this slot. They make a
 *       removal exact: every in-link is found without a search or a scan.
 *   <li>Level and state per slot: {@link #FREE}, {@link #LIVE} or {@link #DELETING}.
 * </ul>
 *
 * <p>Concurrency contract. Searches take no lock: they read a {@link Layout}, the arrays as last
 * published, and never write anything shared. A writer stores the neighbours first and publishes
 * the count last with a release store; readers load the count with an acquire load, so a reader
 * that sees a count sees the vectors and neighbours written before it. A list rewritten in place
 * may be read half old, half new; positions beyond a shrunk count are overwritten with -1, which
 * readers skip. Writers serialise on {@link #lockFor(int)} per slot.
 *
 * <p>Growing copies the arrays into a new layout while no writer runs; a search still walking the
 * old one reads arrays no writer touches any more, except the per-node upper lists, which both
 * layouts share, so readers skip slots beyond their layout's capacity and lists beyond a node's
 * level. A slot may be freed and handed out again while a search holds it: the free stamps the slot
 * ({@link Layout#freedAt}) before it clears anything, and a search drops a result whose slot was
 * stamped after the search began ({@link #freeEpoch()}), so it never returns an ordinal with a
 * score computed for another vector.
 */
final class HnswGraph {

    static final byte FREE = 0;
    static final byte LIVE = 1;
    static final byte DELETING = 2;

    /** Highest level a node may get; levels above ~10 need billions of nodes at usual M. */
    static final int MAX_LEVEL = 15;

    private static final int LOCK_STRIPES = 1024;
    private static final VarHandle INTS = MethodHandles.arrayElementVarHandle(int[].class);
    private static final VarHandle BYTES = MethodHandles.arrayElementVarHandle(byte[].class);
    private static final int[] EMPTY = new int[0];

    final int dim;
    private final Metric metric;
    private final VectorKernels kernels;

    /** The codes' layout and encoder in a quantized graph, else null. */
    private final Int8Codes codec;

    private final int codeStride;
    final int maxDegree;
    final int maxDegree0;
    private final int stride0;
    private final int strideUp;
    private final Object[] writeLocks = new Object[LOCK_STRIPES];
    private final Object[] reverseLocks = new Object[LOCK_STRIPES];

    private int capacity;

    /** The vectors on the heap, or null when they live in {@link #offHeapVectors}. */
    private float[] heapVectors;

    /** The vectors off the heap, or null when they live in {@link #heapVectors}. */
    private MemorySegment offHeapVectors;

    /**
     * Per slot the code of its vector (see {@link Int8Codes}); empty when not quantized, null when
     * the codes live in {@link #offHeapCodes}.
     */
    private byte[] codes;

    /** The codes off the heap (a quantized graph whose vectors are off the heap too), else null. */
    private MemorySegment offHeapCodes;

    private int[] level0;
    private int[][] upper;
    private int[][][] reverse;
    private byte[] levels;
    private byte[] states;
    private int[] slotToOrd;

    /** Per slot, the free epoch of its last free (0 if never freed). */
    private int[] freedAt;

    /** The arrays above as one unit for lock-free searches; replaced whole when they grow. */
    private volatile Layout layout;

    /**
     * Reachability certificate on layer 0: every live node but the entry point has an in-neighbour
     * with a smaller label, so following ever smaller labels ends at the entry point (see {@link
     * HnswRepairer#certifyReachability}). Kept by writers only.
     */
    private int[] labels;

    /**
     * Nodes whose certificate may no longer hold: new nodes, and nodes that lost a layer-0 in-link
     * (to a re-selection, a trade or a removal). Inserts add to it concurrently.
     */
    private final java.util.BitSet uncertified = new java.util.BitSet();

    /** False until a full walk labelled the graph, and again after the entry point moved. */
    private boolean labelsValid;

    /** Incremented after every batch of frees; see {@link #beginFrees()}. */
    private volatile int freeEpoch;

    /** Slots in [0, highWater) have been handed out at least once. */
    private int highWater;

    private int[] freeSlots = new int[16];
    private int freeCount;

    /** Entry point packed as (level << 32 | slot), or -1 when the graph is empty. */
    private volatile long entry = -1;

    /**
     * While a removal runs, receives every slot whose forward list changes, that loses an in-link
     * or whose reachability certificate is put in doubt, so the removal's scope can be verified
     * later without a walk (see {@link HnswIndex#verifyRemoval}); null otherwise. Set, written and
     * cleared with the index's writer gate held exclusively.
     */
    private IntBag changeLog;

    HnswGraph(int dim, Metric metric, VectorKernels kernels, int maxDegree, int initialCapacity) {
        this(
                dim,
                metric,
                kernels,
                maxDegree,
                initialCapacity,
                HnswParams.Quantization.NONE,
                HnswParams.VectorStorage.HEAP);
    }

    /**
     * @param quantization {@link HnswParams.Quantization#INT8} keeps an int8 code beside every
     *     vector, and searches walk with {@link Layout#searchScorers()} over the codes
     * @param storage where the float vectors live
     */
    HnswGraph(
            int dim,
            Metric metric,
            VectorKernels kernels,
            int maxDegree,
            int initialCapacity,
            HnswParams.Quantization quantization,
            HnswParams.VectorStorage storage) {
        this.dim = dim;
        this.metric = metric;
        this.kernels = kernels;
        this.codec = quantization == HnswParams.Quantization.INT8 ? new Int8Codes(dim) : null;
        this.codeStride = codec == null ? 0 : codec.stride();
        this.maxDegree = maxDegree;
        this.maxDegree0 = 2 * maxDegree;
        this.stride0 = 1 + maxDegree0;
        this.strideUp = 1 + maxDegree;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            writeLocks[i] = new Object();
            reverseLocks[i] = new Object();
        }
        this.capacity = 0;
        if (storage == HnswParams.VectorStorage.OFF_HEAP) {
            this.offHeapVectors = MemorySegment.NULL;
        } else {
            this.heapVectors = new float[0];
        }
        if (codec != null && storage == HnswParams.VectorStorage.OFF_HEAP) {
            this.offHeapCodes = MemorySegment.NULL;
        } else {
            this.codes = new byte[0];
        }
        this.level0 = new int[0];
        this.upper = new int[0][];
        this.reverse = new int[0][][];
        this.levels = new byte[0];
        this.states = new byte[0];
        this.slotToOrd = new int[0];
        this.freedAt = new int[0];
        this.labels = new int[0];
        grow(Math.max(16, initialCapacity));
    }

    // ---- capacity and slots (callers hold the index's exclusive lock or the allocation lock)

    int capacity() {
        return capacity;
    }

    int highWater() {
        return highWater;
    }

    /** Grows every per-slot array to {@code newCapacity}. Caller holds the exclusive lock. */
    void grow(int newCapacity) {
        if (newCapacity <= capacity) {
            return;
        }
        if (offHeapVectors != null) {
            // Released with the segment's last reference (a search may still hold the old
            // layout); zeroed, and in huge pages where the system has them (fewer faults at an
            // open, fewer TLB misses for a search's random reads).
            MemorySegment grown =
                    NativeMemory.allocate(
                            Math.multiplyExact((long) newCapacity * dim, Float.BYTES));
            MemorySegment.copy(offHeapVectors, 0, grown, 0, offHeapVectors.byteSize());
            offHeapVectors = grown;
        } else {
            heapVectors = Arrays.copyOf(heapVectors, Math.multiplyExact(newCapacity, dim));
        }
        if (offHeapCodes != null) {
            MemorySegment grown = NativeMemory.allocate((long) newCapacity * codeStride);
            MemorySegment.copy(offHeapCodes, 0, grown, 0, offHeapCodes.byteSize());
            offHeapCodes = grown;
        } else if (codec != null) {
            codes = Arrays.copyOf(codes, Math.multiplyExact(newCapacity, codeStride));
        }
        level0 = Arrays.copyOf(level0, Math.multiplyExact(newCapacity, stride0));
        upper = Arrays.copyOf(upper, newCapacity);
        reverse = Arrays.copyOf(reverse, newCapacity);
        levels = Arrays.copyOf(levels, newCapacity);
        Arrays.fill(levels, capacity, newCapacity, (byte) -1);
        states = Arrays.copyOf(states, newCapacity);
        slotToOrd = Arrays.copyOf(slotToOrd, newCapacity);
        Arrays.fill(slotToOrd, capacity, newCapacity, -1);
        freedAt = Arrays.copyOf(freedAt, newCapacity);
        labels = Arrays.copyOf(labels, newCapacity);
        capacity = newCapacity;
        layout = new Layout(this);
    }

    /** The arrays as last published, for a search (read the entry point first). */
    Layout layout() {
        return layout;
    }

    /** The current free epoch; a search reads it before anything else. */
    int freeEpoch() {
        return freeEpoch;
    }

    /**
     * Stamps the slots about to be freed with the next epoch, and makes the stamps visible before
     * any of the slots' contents change. Caller holds the exclusive lock, frees the slots, then
     * calls {@link #endFrees(int)}.
     */
    int beginFrees(int[] slots, int n) {
        int epoch = freeEpoch + 1;
        for (int i = 0; i < n; i++) {
            INTS.setRelease(freedAt, slots[i], epoch);
        }
        VarHandle.storeStoreFence();
        return epoch;
    }

    void endFrees(int epoch) {
        freeEpoch = epoch;
    }

    /**
     * The read-only view a search walks: the graph's arrays at one capacity. Its methods are the
     * ones {@link HnswSearcher} needs, bounds-checked where a shared upper list may name a slot
     * from a newer layout. Scores come from {@link #scorers()}, made over this layout's vectors, so
     * a walk scores the same snapshot whose lists it follows.
     */
    static final class Layout {
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

        private Layout(HnswGraph g) {
            this.capacity = g.capacity;
            this.stride0 = g.stride0;
            this.strideUp = g.strideUp;
            // The one place that decides how the graph scores: exact floats for building,
            // repairing and re-ranking; a quantized graph's searches walk its codes (grown and
            // zeroed with the other per-slot arrays).
            this.scorers =
                    g.offHeapVectors != null
                            ? new FloatVectorScorers(g.metric, g.kernels, g.offHeapVectors, g.dim)
                            : new FloatVectorScorers(g.metric, g.kernels, g.heapVectors, g.dim);
            this.searchScorers =
                    g.codec == null
                            ? scorers
                            : g.offHeapCodes != null
                                    ? new Int8VectorScorers(
                                            g.metric, g.kernels, g.codec, g.offHeapCodes)
                                    : new Int8VectorScorers(g.metric, g.kernels, g.codec, g.codes);
            this.level0 = g.level0;
            this.upper = g.upper;
            this.states = g.states;
            this.slotToOrd = g.slotToOrd;
            this.freedAt = g.freedAt;
        }

        /**
         * The exact scorers of this layout's vectors: building, repairing, exact scans and the
         * re-rank of a quantized search score with these.
         */
        ScorerSupplier scorers() {
            return scorers;
        }

        /**
         * The scorers a search walks with: over the codes in a quantized graph (not exact: the
         * caller re-ranks with {@link #scorers()} before returning a score), else {@link
         * #scorers()}.
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
            return (byte) BYTES.getAcquire(states, slot) == LIVE;
        }

        int ordinal(int slot) {
            return slotToOrd[slot];
        }

        /**
         * Whether a slot scored since the search read {@code startEpoch} still holds what was
         * scored: live and not freed since. The fence keeps the caller's earlier reads of the
         * slot's vector before the stamp is read.
         */
        boolean unchangedSince(int slot, int startEpoch) {
            VarHandle.loadLoadFence();
            return isLive(slot) && (int) INTS.getAcquire(freedAt, slot) <= startEpoch;
        }
    }

    /** True if a slot can be handed out without growing. */
    boolean hasRoom() {
        return freeCount > 0 || highWater < capacity;
    }

    /**
     * Hands out a free slot (a recycled one first), marks it live for {@code ordinal} at {@code
     * level} with empty lists. Caller holds the allocation lock and checked {@link #hasRoom}.
     */
    int allocate(int ordinal, int level) {
        int slot = freeCount > 0 ? freeSlots[--freeCount] : highWater++;
        levels[slot] = (byte) level;
        slotToOrd[slot] = ordinal;
        int base = slot * stride0;
        level0[base] = 0;
        Arrays.fill(level0, base + 1, base + stride0, -1);
        if (level > 0) {
            int[] up = new int[level * strideUp];
            Arrays.fill(up, -1);
            for (int l = 1; l <= level; l++) {
                up[(l - 1) * strideUp] = 0;
            }
            upper[slot] = up;
        } else {
            upper[slot] = null;
        }
        reverse[slot] = new int[level + 1][];
        markUncertified(slot);
        BYTES.setRelease(states, slot, LIVE);
        return slot;
    }

    /**
     * Returns a slot to the free list: zeroes its vector bytes and its code, clears its lists and
     * ordinal. Caller holds the exclusive lock and has removed every link to the slot.
     */
    void free(int slot) {
        if (offHeapVectors != null) {
            offHeapVectors
                    .asSlice(vectorOffset(slot) * Float.BYTES, (long) dim * Float.BYTES)
                    .fill((byte) 0);
        } else {
            Arrays.fill(heapVectors, slot * dim, (slot + 1) * dim, 0f);
        }
        if (offHeapCodes != null) {
            offHeapCodes.asSlice(codeOffset(slot), codeStride).fill((byte) 0);
        } else if (codec != null) {
            Arrays.fill(codes, slot * codeStride, (slot + 1) * codeStride, (byte) 0);
        }
        int base = slot * stride0;
        level0[base] = 0;
        Arrays.fill(level0, base + 1, base + stride0, -1);
        upper[slot] = null;
        reverse[slot] = null;
        levels[slot] = -1;
        slotToOrd[slot] = -1;
        states[slot] = FREE;
        if (freeCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeCount * 2);
        }
        freeSlots[freeCount++] = slot;
    }

    int freeCount() {
        return freeCount;
    }

    int freeSlot(int i) {
        return freeSlots[i];
    }

    /**
     * For a loader that places slots in order, before any is free: the next {@link #allocate} takes
     * {@code slot}. {@link #restoreSlots} then sets the free list.
     */
    void placeNext(int slot) {
        this.highWater = slot;
        this.freeCount = 0;
    }

    /** Restores allocation state from a file: high-water mark and the free list in order. */
    void restoreSlots(int highWater, int[] free) {
        this.highWater = highWater;
        this.freeSlots = Arrays.copyOf(free, Math.max(16, free.length));
        this.freeCount = free.length;
    }

    // ---- per-slot fields

    byte state(int slot) {
        return (byte) BYTES.getAcquire(states, slot);
    }

    boolean isLive(int slot) {
        return (byte) BYTES.getAcquire(states, slot) == LIVE;
    }

    void markDeleting(int slot) {
        BYTES.setRelease(states, slot, DELETING);
    }

    int level(int slot) {
        return levels[slot];
    }

    int ordinal(int slot) {
        return slotToOrd[slot];
    }

    // ---- vectors

    /**
     * The vectors, wherever they live, as a segment (a view of the heap array, or the native
     * segment); slot {@code s} starts at float {@link #vectorOffset}. For tests and checks, not for
     * scoring.
     */
    MemorySegment vectors() {
        return offHeapVectors != null ? offHeapVectors : MemorySegment.ofArray(heapVectors);
    }

    /** Whether the vectors live off the heap. */
    boolean vectorsOffHeap() {
        return offHeapVectors != null;
    }

    /** Where slot {@code s}'s vector starts, in floats. */
    long vectorOffset(int slot) {
        return (long) slot * dim;
    }

    /** Stores a slot's vector and, in a quantized graph, its code. */
    void setVector(int slot, float[] prepared) {
        setVector(slot, prepared, null);
    }

    /**
     * Stores a slot's vector and, in a quantized graph, its code: {@code code} (the stride long)
     * when a file carried it, else encoded from the vector.
     */
    void setVector(int slot, float[] prepared, byte[] code) {
        if (offHeapVectors != null) {
            MemorySegment.copy(
                    prepared,
                    0,
                    offHeapVectors,
                    ValueLayout.JAVA_FLOAT,
                    vectorOffset(slot) * Float.BYTES,
                    dim);
        } else {
            System.arraycopy(prepared, 0, heapVectors, slot * dim, dim);
        }
        if (codec == null) {
            return;
        }
        if (code == null && offHeapCodes == null) {
            codec.encode(prepared, 0, codes, slot * codeStride);
            return;
        }
        if (code == null) {
            code = new byte[codeStride];
            codec.encode(prepared, 0, code, 0);
        }
        if (offHeapCodes != null) {
            MemorySegment.copy(
                    code, 0, offHeapCodes, ValueLayout.JAVA_BYTE, codeOffset(slot), codeStride);
        } else {
            System.arraycopy(code, 0, codes, slot * codeStride, codeStride);
        }
    }

    float[] vectorCopy(int slot) {
        float[] v = new float[dim];
        copyVector(slot, v);
        return v;
    }

    /** Copies slot {@code s}'s vector into {@code into[0, dim)}. */
    void copyVector(int slot, float[] into) {
        if (offHeapVectors != null) {
            MemorySegment.copy(
                    offHeapVectors,
                    ValueLayout.JAVA_FLOAT,
                    vectorOffset(slot) * Float.BYTES,
                    into,
                    0,
                    dim);
        } else {
            System.arraycopy(heapVectors, slot * dim, into, 0, dim);
        }
    }

    /** Whether every byte of slot {@code s}'s vector is zero (a freed slot's must be). */
    boolean vectorIsZero(int slot) {
        MemorySegment v = vectors();
        long from = vectorOffset(slot);
        for (long i = from; i < from + dim; i++) {
            // Bits, not float equality: a -0.0f left behind is not zero bytes.
            if (v.getAtIndex(ValueLayout.JAVA_INT, i) != 0) {
                return false;
            }
        }
        return true;
    }

    // ---- codes (quantized graphs only)

    /** The codes' layout and encoder, or null when the graph is not quantized. */
    Int8Codes codec() {
        return codec;
    }

    /** Copies slot {@code s}'s code into {@code into[0, stride)} (a quantized graph only). */
    void copyCode(int slot, byte[] into) {
        if (offHeapCodes != null) {
            MemorySegment.copy(
                    offHeapCodes, ValueLayout.JAVA_BYTE, codeOffset(slot), into, 0, codeStride);
        } else {
            System.arraycopy(codes, slot * codeStride, into, 0, codeStride);
        }
    }

    /**
     * Every slot's code up to the capacity, slot {@code s} at {@code s * stride}: a copy, for
     * tests.
     */
    byte[] codesCopy() {
        return offHeapCodes != null ? offHeapCodes.toArray(ValueLayout.JAVA_BYTE) : codes.clone();
    }

    /** Byte {@code i} of slot {@code s}'s code, for tests that plant a fault. */
    byte codeByte(int slot, int i) {
        return offHeapCodes != null
                ? offHeapCodes.get(ValueLayout.JAVA_BYTE, codeOffset(slot) + i)
                : codes[slot * codeStride + i];
    }

    /** Sets byte {@code i} of slot {@code s}'s code, for tests that plant a fault. */
    void setCodeByte(int slot, int i, byte value) {
        if (offHeapCodes != null) {
            offHeapCodes.set(ValueLayout.JAVA_BYTE, codeOffset(slot) + i, value);
        } else {
            codes[slot * codeStride + i] = value;
        }
    }

    /** Whether the codes live off the heap. */
    boolean codesOffHeap() {
        return offHeapCodes != null;
    }

    private long codeOffset(int slot) {
        return (long) slot * codeStride;
    }

    /**
     * The scorers over the vectors as they are now, for writers: valid while no grow can run (an
     * insert holds the slot lock shared, a removal the writer gate), as the arrays are.
     */
    ScorerSupplier scorers() {
        return layout.scorers();
    }

    // ---- forward lists

    int maxDegree(int level) {
        return level == 0 ? maxDegree0 : maxDegree;
    }

    /** The array holding the list of {@code slot} at {@code level}; see {@link #listBase}. */
    int[] listArray(int slot, int level) {
        return level == 0 ? level0 : upper[slot];
    }

    /** Position of the count of the list; its neighbours follow. */
    int listBase(int slot, int level) {
        return level == 0 ? slot * stride0 : (level - 1) * strideUp;
    }

    /** The published degree (acquire load): neighbours below it are readable. */
    static int degree(int[] array, int base) {
        return (int) INTS.getAcquire(array, base);
    }

    int degree(int slot, int level) {
        return degree(listArray(slot, level), listBase(slot, level));
    }

    int neighbor(int slot, int level, int i) {
        return listArray(slot, level)[listBase(slot, level) + 1 + i];
    }

    /** A copy of the list (writers call this under the slot's lock). */
    int[] neighbors(int slot, int level) {
        int[] a = listArray(slot, level);
        int base = listBase(slot, level);
        int n = degree(a, base);
        int[] out = new int[n];
        int k = 0;
        for (int i = 0; i < n; i++) {
            int v = a[base + 1 + i];
            if (v >= 0) {
                out[k++] = v;
            }
        }
        return k == n ? out : Arrays.copyOf(out, k);
    }

    /**
     * Replaces the list: neighbours first, -1 over any tail the old list used, then the count with
     * a release store. Caller holds {@link #lockFor(int)} of {@code slot} (or the exclusive writer
     * lock) and keeps the reverse lists in step.
     */
    void setNeighbors(int slot, int level, int[] nodes, int n) {
        if (n > maxDegree(level)) {
            throw new IllegalStateException(
                    "list of " + n + " exceeds degree bound " + maxDegree(level));
        }
        int[] a = listArray(slot, level);
        int base = listBase(slot, level);
        int old = (int) INTS.getAcquire(a, base);
        System.arraycopy(nodes, 0, a, base + 1, n);
        for (int i = n; i < old; i++) {
            a[base + 1 + i] = -1;
        }
        INTS.setRelease(a, base, n);
        logChange(slot);
    }

    /** Appends one neighbour; caller checked there is room and holds the slot's lock. */
    void appendNeighbor(int slot, int level, int node) {
        int[] a = listArray(slot, level);
        int base = listBase(slot, level);
        int n = (int) INTS.getAcquire(a, base);
        a[base + 1 + n] = node;
        INTS.setRelease(a, base, n + 1);
        logChange(slot);
    }

    /** The monitor a writer holds while changing the forward list of {@code slot}. */
    Object lockFor(int slot) {
        return writeLocks[slot & (LOCK_STRIPES - 1)];
    }

    // ---- reverse lists (who links to a slot); only writers and the checker read them

    void addReverse(int target, int level, int source) {
        synchronized (reverseLocks[target & (LOCK_STRIPES - 1)]) {
            int[][] perLevel = reverse[target];
            int[] r = perLevel[level];
            if (r == null) {
                r = new int[8];
            } else if (r[0] + 1 == r.length) {
                r = Arrays.copyOf(r, r.length * 2);
            }
            r[1 + r[0]++] = source;
            perLevel[level] = r;
        }
    }

    void removeReverse(int target, int level, int source) {
        logChange(target);
        synchronized (reverseLocks[target & (LOCK_STRIPES - 1)]) {
            int[] r = reverse[target][level];
            if (r == null) {
                return;
            }
            int n = r[0];
            for (int i = 1; i <= n; i++) {
                if (r[i] == source) {
                    r[i] = r[n];
                    r[n] = 0;
                    r[0] = n - 1;
                    return;
                }
            }
        }
    }

    /** A copy of the slots whose list at {@code level} holds {@code target}. */
    int[] reverseNeighbors(int target, int level) {
        synchronized (reverseLocks[target & (LOCK_STRIPES - 1)]) {
            int[][] perLevel = reverse[target];
            int[] r = perLevel == null || level >= perLevel.length ? null : perLevel[level];
            return r == null ? EMPTY : Arrays.copyOfRange(r, 1, 1 + r[0]);
        }
    }

    /**
     * Entries left in the reverse lists of a slot on any layer; a freed slot has none (and no
     * reverse lists at all). Cost: its layers.
     */
    int reverseEntries(int slot) {
        synchronized (reverseLocks[slot & (LOCK_STRIPES - 1)]) {
            int[][] perLevel = reverse[slot];
            int n = 0;
            if (perLevel != null) {
                for (int[] r : perLevel) {
                    n += r == null ? 0 : r[0];
                }
            }
            return n;
        }
    }

    /** Whether a slot still holds upper-layer lists (a freed slot must not). */
    boolean hasUpperLists(int slot) {
        return upper[slot] != null;
    }

    int inDegree(int target, int level) {
        synchronized (reverseLocks[target & (LOCK_STRIPES - 1)]) {
            int[] r = reverse[target][level];
            return r == null ? 0 : r[0];
        }
    }

    /** Drops every reverse list; {@link #rebuildReverse} recomputes them from the forward lists. */
    void rebuildReverse() {
        // Only at load, before the graph is published: no locks. Per layer, the in-links are
        // counted, laid out flat by target (a prefix sum of the counts) and then copied into each
        // target's own list, sized to fit. Appending link by link to each target's list instead
        // chased two references per link (the target's table of layers, then its list) at
        // random across a million objects: 6 s of a 1M-node load, against about 1 s this way.
        // The lists come out in the same order: sources ascending.
        int top = -1;
        for (int s = 0; s < highWater; s++) {
            if (states[s] == FREE) {
                reverse[s] = null;
            } else if (reverse[s] != null && reverse[s].length == levels[s] + 1) {
                Arrays.fill(
                        reverse[s],
                        null); // the table allocate() made: a million fewer objects at 1M
            } else {
                reverse[s] = new int[levels[s] + 1][];
            }
            if (states[s] != FREE) {
                top = Math.max(top, levels[s]);
            }
        }
        for (int l = 0; l <= top; l++) {
            int[] start = new int[highWater + 1];
            for (int s = 0; s < highWater; s++) {
                if (states[s] == FREE || levels[s] < l) {
                    continue;
                }
                int[] a = listArray(s, l);
                int base = listBase(s, l);
                for (int i = 0, deg = degree(a, base); i < deg; i++) {
                    int n = a[base + 1 + i];
                    if (n >= 0) {
                        start[n + 1]++;
                    }
                }
            }
            for (int s = 0; s < highWater; s++) {
                start[s + 1] += start[s];
            }
            int[] flat = new int[start[highWater]];
            int[] fill = Arrays.copyOf(start, highWater);
            for (int s = 0; s < highWater; s++) {
                if (states[s] == FREE || levels[s] < l) {
                    continue;
                }
                int[] a = listArray(s, l);
                int base = listBase(s, l);
                for (int i = 0, deg = degree(a, base); i < deg; i++) {
                    int n = a[base + 1 + i];
                    if (n >= 0) {
                        flat[fill[n]++] = s;
                    }
                }
            }
            for (int s = 0; s < highWater; s++) {
                int counted = start[s + 1] - start[s];
                if (counted > 0) {
                    // Room for the count, the links, and one more before the first growth.
                    int[] r = new int[Math.max(8, counted + 2)];
                    r[0] = counted;
                    System.arraycopy(flat, start[s], r, 1, counted);
                    reverse[s][l] = r;
                }
            }
        }
    }

    /**
     * Replaces the list of {@code slot} at {@code level} with {@code nodes[0, n)} and updates the
     * reverse lists of the neighbours it gains and loses.
     *
     * @param dropped if non-null, receives the slots that lost their in-link from {@code slot}
     */
    void replaceList(int slot, int level, int[] nodes, int n, IntBag dropped) {
        int[] old = neighbors(slot, level);
        setNeighbors(slot, level, nodes, n);
        for (int o : old) {
            if (!contains(nodes, n, o)) {
                removeReverse(o, level, slot);
                if (level == 0) {
                    markUncertified(o);
                }
                if (dropped != null) {
                    dropped.add(o);
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (!contains(old, old.length, nodes[i])) {
                addReverse(nodes[i], level, slot);
            }
        }
    }

    static boolean contains(int[] a, int n, int v) {
        for (int i = 0; i < n; i++) {
            if (a[i] == v) {
                return true;
            }
        }
        return false;
    }

    // ---- entry point

    /** Entry slot, or -1 when empty. */
    static int entrySlot(long packed) {
        return packed < 0 ? -1 : (int) packed;
    }

    static int entryLevel(long packed) {
        return packed < 0 ? -1 : (int) (packed >>> 32);
    }

    long entry() {
        return entry;
    }

    void setEntry(int slot, int level) {
        long next = slot < 0 ? -1 : ((long) level << 32) | slot;
        if (entrySlot(next) != entrySlot(entry)) {
            // Labels count from the entry point: a new one needs a full walk to relabel.
            synchronized (uncertified) {
                labelsValid = false;
            }
        }
        entry = next;
    }

    // ---- reachability certificate (see HnswRepairer#certifyReachability)

    void markUncertified(int slot) {
        logChange(slot);
        synchronized (uncertified) {
            uncertified.set(slot);
        }
    }

    /**
     * The nodes waiting for re-certification (new nodes, nodes that lost an in-link since the last
     * removal), without taking them. Cost: O(1) when there are none, else a copy of the bitmap
     * (highWater / 64 words).
     */
    java.util.BitSet pendingCertificates() {
        synchronized (uncertified) {
            return uncertified.isEmpty()
                    ? new java.util.BitSet()
                    : (java.util.BitSet) uncertified.clone();
        }
    }

    // ---- removal scope (see changeLog)

    /** Starts ({@code log} non-null) or stops recording the slots a removal changes. */
    void recordChanges(IntBag log) {
        changeLog = log;
    }

    private void logChange(int slot) {
        IntBag log = changeLog;
        if (log != null) {
            log.add(slot);
        }
    }

    /** Whether any node waits for re-certification (cheap: no copy). */
    boolean hasPendingCertificates() {
        synchronized (uncertified) {
            return !uncertified.isEmpty();
        }
    }

    /** Takes the set of nodes to re-certify, leaving it empty. Caller holds the exclusive gate. */
    java.util.BitSet drainUncertified() {
        synchronized (uncertified) {
            java.util.BitSet out = (java.util.BitSet) uncertified.clone();
            uncertified.clear();
            return out;
        }
    }

    boolean labelsValid() {
        synchronized (uncertified) {
            return labelsValid;
        }
    }

    /** Before a full walk: until it reaches every node, no label is trusted. */
    void invalidateLabels() {
        synchronized (uncertified) {
            labelsValid = false;
        }
    }

    /** After a full walk: labels are valid and nothing waits for re-certification. */
    void labelsRebuilt() {
        synchronized (uncertified) {
            uncertified.clear();
            labelsValid = true;
        }
    }

    int label(int slot) {
        return labels[slot];
    }

    void setLabel(int slot, int label) {
        labels[slot] = label;
    }

    /**
     * The smallest label of the live nodes other than {@code target} that link to it on layer 0,
     * {@link Integer#MAX_VALUE} if there is none; the scan stops at the first label below {@code
     * below} and returns it (the certificate then needs no more). Reads the reverse list in place,
     * where {@link #reverseNeighbors} copies it.
     */
    int smallestInLabel(int target, int below) {
        synchronized (reverseLocks[target & (LOCK_STRIPES - 1)]) {
            int[][] perLevel = reverse[target];
            int[] r = perLevel == null ? null : perLevel[0];
            int smallest = Integer.MAX_VALUE;
            for (int i = 1, n = r == null ? 0 : r[0]; i <= n; i++) {
                int u = r[i];
                if (u != target && isLive(u) && labels[u] < smallest) {
                    smallest = labels[u];
                    if (smallest < below) {
                        break;
                    }
                }
            }
            return smallest;
        }
    }
}
