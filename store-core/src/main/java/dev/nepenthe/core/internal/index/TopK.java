package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.index.SearchResult;

/**
 * Keeps the k best (score, ordinal) pairs seen so far in a binary min-heap whose root is the worst
 * kept pair. Ties prefer the lower ordinal, so results are deterministic and an approximate index
 * can be compared with the exact one. Not thread-safe.
 */
public final class TopK {
    private final int k;
    private final float[] scores;
    private final int[] ords;
    private int size;

    public TopK(int k) {
        if (k <= 0) {
            throw new IllegalArgumentException("k: expected > 0, got " + k);
        }
        this.k = k;
        this.scores = new float[k];
        this.ords = new int[k];
    }

    public int size() {
        return size;
    }

    public boolean isFull() {
        return size == k;
    }

    /** The worst kept score, or negative infinity while fewer than k are kept. */
    public float minScore() {
        return size < k ? Float.NEGATIVE_INFINITY : scores[0];
    }

    /** Offers a pair; returns true if it was kept. */
    public boolean offer(int ordinal, float score) {
        if (size < k) {
            scores[size] = score;
            ords[size] = ordinal;
            siftUp(size++);
            return true;
        }
        if (worse(score, ordinal, scores[0], ords[0])) {
            return false;
        }
        scores[0] = score;
        ords[0] = ordinal;
        siftDown(0);
        return true;
    }

    /** The kept pairs, best first. Empties the collector. */
    public SearchResult drain(long visited) {
        int n = size;
        int[] o = new int[n];
        float[] s = new float[n];
        for (int i = n - 1; i >= 0; i--) {
            o[i] = ords[0];
            s[i] = scores[0];
            size--;
            if (size > 0) {
                scores[0] = scores[size];
                ords[0] = ords[size];
                siftDown(0);
            }
        }
        return new SearchResult(o, s, visited);
    }

    /** True if (s1, o1) ranks below (s2, o2). */
    private static boolean worse(float s1, int o1, float s2, int o2) {
        return s1 < s2 || (s1 == s2 && o1 > o2);
    }

    private void siftUp(int i) {
        float s = scores[i];
        int o = ords[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!worse(s, o, scores[parent], ords[parent])) {
                break;
            }
            scores[i] = scores[parent];
            ords[i] = ords[parent];
            i = parent;
        }
        scores[i] = s;
        ords[i] = o;
    }

    private void siftDown(int i) {
        float s = scores[i];
        int o = ords[i];
        while (true) {
            int left = 2 * i + 1;
            if (left >= size) {
                break;
            }
            int right = left + 1;
            int child =
                    right < size && worse(scores[right], ords[right], scores[left], ords[left])
                            ? right
                            : left;
            if (!worse(scores[child], ords[child], s, o)) {
                break;
            }
            scores[i] = scores[child];
            ords[i] = ords[child];
            i = child;
        }
        scores[i] = s;
        ords[i] = o;
    }
}
