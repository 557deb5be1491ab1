package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.vector.VectorKernels;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.BitSet;

/**
 * The compact layout of an HNSW graph, touched only through the named accessors below (the way
 * hnswlib reaches a node's record through {@code getDataByInternalId} and {@code get_linklist0}).
 *
 * <p>Everything is indexed by an internal <em>slot</em>; the index maps store ordinals to slots.
 *
 * <ul>
 *   <li>Vectors and codes: {@link SlotVectors}.
 *   <li>Layer-0 lists: one int array with a fixed stride of {@code 1 + maxDegree0} per slot: the
 *       count, then the neighbours.
 *   <li>Upper-layer lists: per slot, one int array holding its layers 1..level back to back, each
 *       with stride {@code 1 + maxDegree}. Few nodes have any, so they are allocated per node.
 *   <li>Reverse lists: per slot and layer, the slots whose list holds this slot. They make a
 *       removal exact: every in-link is found without a search or a scan.
 *   <li>Level and state per slot: {@link #FREE}, {@link #LIVE} or {@link #DELETING}.
 * </ul>
 *
 * <p>Concurrency contract. Searches take no lock: they read a {@link GraphLayout}, the arrays as
 * last published, and never write anything shared. A writer stores the neighbours first and
 * publishes the count last with a release store; readers load the count with an acquire load, so a
 * reader that sees a count sees the vectors and neighbours written before it. A list rewritten in
 * place may be read half old, half new; positions beyond a shrunk count are overwritten with -1,
 * which readers skip. Writers serialise on {@link #lockFor(int)} per slot.
 *
 * <p>Growing copies the arrays into a new layout while no writer runs; a search still walking the
 * old one reads arrays no writer touches any more, except the per-node upper lists, which both
 * layouts share, so readers skip slots beyond their layout's capacity and lists beyond a node's
 * level. A slot may be freed and handed out again while a search holds it: the free stamps the slot
 * ({@link GraphLayout#freedAt}) before it clears anything, and a search drops a result whose slot
 * was stamped after the search began ({@link #freeEpoch()}), so it never returns an ordinal with a
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

    final int dim;

    /** The slots' vectors and, in a quantized graph, codes. */
    private final SlotVectors store;

    final int maxDegree;
    final int maxDegree0;
    private final int stride0;
    private final int strideUp;
    private final Object[] writeLocks = new Object[LOCK_STRIPES];

    private int capacity;

    private int[] level0;
    private int[][] upper;
    private final ReverseLinks reverse = new ReverseLinks();
    private byte[] levels;
    private byte[] states;
    private int[] slotToOrd;

    /** Per slot, the free epoch of its last free (0 if never freed). */
    private int[] freedAt;

    /** The arrays above as one unit for lock-free searches; replaced whole when they grow. */
    private volatile GraphLayout layout;

    /**
     * Reachability certificate on layer 0: every live node but the entry point has an in-neighbour
     * with a smaller label, so following ever smaller labels ends at the entry point (see {@link
     * ReachabilityCertifier#certifyReachability}). Kept by writers only.
     */
    private int[] labels;

    /**
     * Nodes whose certificate may no longer hold: new nodes, and nodes that lost a layer-0 in-link
     * (to a re-selection, a trade or a removal). Inserts add to it concurrently.
     */
    private final BitSet uncertified = new BitSet();

    /** False until a full walk labelled the graph, and again after the entry point moved. */
    private boolean labelsValid;

    /** Incremented after every batch of frees; see {@link #beginFrees(int[], int)}. */
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
     *     vector, and searches walk with {@link GraphLayout#searchScorers()} over the codes
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
        this.maxDegree = maxDegree;
        this.maxDegree0 = 2 * maxDegree;
        this.stride0 = 1 + maxDegree0;
        this.strideUp = 1 + maxDegree;
        for (int i = 0; i < LOCK_STRIPES; i++) {
            writeLocks[i] = new Object();
        }
        this.capacity = 0;
        this.store = new SlotVectors(dim, metric, kernels, quantization, storage);
        this.level0 = new int[0];
        this.upper = new int[0][];
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
        store.grow(newCapacity);
        level0 = Arrays.copyOf(level0, Math.multiplyExact(newCapacity, stride0));
        upper = Arrays.copyOf(upper, newCapacity);
        reverse.grow(newCapacity);
        levels = Arrays.copyOf(levels, newCapacity);
        Arrays.fill(levels, capacity, newCapacity, (byte) -1);
        states = Arrays.copyOf(states, newCapacity);
        slotToOrd = Arrays.copyOf(slotToOrd, newCapacity);
        Arrays.fill(slotToOrd, capacity, newCapacity, -1);
        freedAt = Arrays.copyOf(freedAt, newCapacity);
        labels = Arrays.copyOf(labels, newCapacity);
        capacity = newCapacity;
        ScorerSupplier exact = store.exactScorers();
        layout =
                new GraphLayout(
                        capacity,
                        stride0,
                        strideUp,
                        exact,
                        store.searchScorers(exact),
                        level0,
                        upper,
                        states,
                        slotToOrd,
                        freedAt);
    }

    /** The arrays as last published, for a search (read the entry point first). */
    GraphLayout layout() {
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
        reverse.allocate(slot, level);
        markUncertified(slot);
        BYTES.setRelease(states, slot, LIVE);
        return slot;
    }

    /**
     * Returns a slot to the free list: zeroes its vector bytes and its code, clears its lists and
     * ordinal. Caller holds the exclusive lock and has removed every link to the slot.
     */
    void free(int slot) {
        store.zero(slot);
        int base = slot * stride0;
        level0[base] = 0;
        Arrays.fill(level0, base + 1, base + stride0, -1);
        upper[slot] = null;
        reverse.clear(slot);
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

    /** Where the slots' vectors and codes live. */
    SlotVectors store() {
        return store;
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

    // ---- reverse lists (see ReverseLinks); only writers and the checker read them

    void addReverse(int target, int level, int source) {
        reverse.add(target, level, source);
    }

    void removeReverse(int target, int level, int source) {
        logChange(target);
        reverse.remove(target, level, source);
    }

    /** A copy of the slots whose list at {@code level} holds {@code target}. */
    int[] reverseNeighbors(int target, int level) {
        return reverse.of(target, level);
    }

    /**
     * Entries left in the reverse lists of a slot on any layer; see {@link ReverseLinks#entries}.
     */
    int reverseEntries(int slot) {
        return reverse.entries(slot);
    }

    int inDegree(int target, int level) {
        return reverse.inDegree(target, level);
    }

    /** Recomputes every reverse list from the forward lists (at load, before publishing). */
    void rebuildReverse() {
        reverse.rebuild(this);
    }

    /** See {@link ReverseLinks#smallestInLabel}. */
    int smallestInLabel(int target, int below) {
        return reverse.smallestInLabel(this, target, below);
    }

    /** Whether a slot still holds upper-layer lists (a freed slot must not). */
    boolean hasUpperLists(int slot) {
        return upper[slot] != null;
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

    // ---- reachability certificate (see ReachabilityCertifier#certifyReachability)

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
    BitSet pendingCertificates() {
        synchronized (uncertified) {
            return uncertified.isEmpty() ? new BitSet() : (BitSet) uncertified.clone();
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
    BitSet drainUncertified() {
        synchronized (uncertified) {
            BitSet out = (BitSet) uncertified.clone();
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
}
