package dev.nepenthe.hnsw;

import java.util.Arrays;

/**
 * A binary heap of (score, slot) pairs packed into longs, so a push or pop moves one primitive
 * instead of two parallel entries. The high 32 bits hold the score as an order-preserving int, the
 * low 32 bits the slot. Either the worst pair is on top (a bounded result set whose root is the one
 * to evict) or the best pair is (a candidate queue that expands the closest first). Not
 * thread-safe; each searching thread owns its heaps.
 */
final class NodeHeap {

    private final boolean bestOnTop;
    private long[] heap;
    private int size;

    NodeHeap(int initialCapacity, boolean bestOnTop) {
        this.heap = new long[Math.max(4, initialCapacity)];
        this.bestOnTop = bestOnTop;
    }

    static NodeHeap worstOnTop(int initialCapacity) {
        return new NodeHeap(initialCapacity, false);
    }

    static NodeHeap bestOnTop(int initialCapacity) {
        return new NodeHeap(initialCapacity, true);
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    void clear() {
        size = 0;
    }

    void push(int slot, float score) {
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        long key = encode(slot, score);
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (heap[parent] <= key) {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = key;
    }

    /** Slot of the pair on top. */
    int topSlot() {
        return (int) heap[0];
    }

    /** Score of the pair on top. */
    float topScore() {
        return decodeScore(heap[0]);
    }

    /** Removes the pair on top and returns its slot. */
    int pop() {
        long top = heap[0];
        long last = heap[--size];
        int i = 0;
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && heap[right] < heap[child]) {
                child = right;
            }
            if (heap[child] >= last) {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        if (size > 0) {
            heap[i] = last;
        }
        return (int) top;
    }

    /** The slot of entry {@code i} in heap order (not sorted). */
    int slotAt(int i) {
        return (int) heap[i];
    }

    /** The score of entry {@code i} in heap order (not sorted). */
    float scoreAt(int i) {
        return decodeScore(heap[i]);
    }

    private long encode(int slot, float score) {
        int sortable = sortableInt(score);
        if (bestOnTop) {
            sortable = ~sortable;
        }
        return ((long) sortable << 32) | (slot & 0xFFFFFFFFL);
    }

    private float decodeScore(long key) {
        int sortable = (int) (key >> 32);
        if (bestOnTop) {
            sortable = ~sortable;
        }
        int bits = sortable ^ ((sortable >> 31) & 0x7FFFFFFF);
        return Float.intBitsToFloat(bits);
    }

    /** An int whose signed order equals the float's numeric order (NaN aside). */
    private static int sortableInt(float f) {
        int bits = Float.floatToIntBits(f);
        return bits ^ ((bits >> 31) & 0x7FFFFFFF);
    }
}
