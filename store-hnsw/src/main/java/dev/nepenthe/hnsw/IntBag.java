package dev.nepenthe.hnsw;

import java.util.Arrays;

/** A growable list of ints without boxing; order is insertion order. */
final class IntBag {
    private int[] items;
    private int size;

    IntBag() {
        this(16);
    }

    IntBag(int capacity) {
        items = new int[Math.max(4, capacity)];
    }

    void add(int v) {
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size++] = v;
    }

    int get(int i) {
        return items[i];
    }

    int size() {
        return size;
    }

    void clear() {
        size = 0;
    }

    int[] toArray() {
        return Arrays.copyOf(items, size);
    }
}
