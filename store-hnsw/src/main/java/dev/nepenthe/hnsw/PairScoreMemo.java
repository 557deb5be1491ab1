package dev.nepenthe.hnsw;

import java.util.Arrays;

/**
 * Scores between stored nodes that one batch removal has already computed, so its repairs do
 * not compute them again. The lists a removal re-selects all draw their candidates from the
 * same neighbourhood (the removed node's pool), so the heuristic keeps asking the same pairs:
 * "is candidate c closer to kept neighbour k than to the list's owner?". A score between two
 * stored nodes does not depend on which of them is the point: a product and a difference are
 * the same either way round and the summation order is fixed (see VectorKernels), so a
 * remembered score is the one the kernel would give, bit for bit, and the graph a repair builds
 * is the same with or without the memo (HnswFingerprintTest).
 *
 * <p>Open addressing over packed pairs; once {@link #MAX_ENTRIES} are held it stops remembering
 * (and keeps answering). Used by one removal on the writer's thread; {@link #clear} between
 * removals, because a freed slot may be handed out again with another vector.
 */
final class PairScoreMemo {

    /** About 24 MB at most: a removal of thousands of nodes stays bounded. */
    static final int MAX_ENTRIES = 1 << 20;
    private static final int INITIAL = 1 << 12;
    private long[] keys = new long[INITIAL];
    private float[] values = new float[INITIAL];
    private int size;
    long hits;
    long misses;

    /**
     * Forgets every pair. A table a large batch grew is dropped rather than zeroed, so the
     * single removals after it do not each pay for clearing it.
     */
    void clear() {
        if (keys.length > INITIAL) {
            keys = new long[INITIAL];
            values = new float[INITIAL];
        } else if (size > 0) {
            Arrays.fill(keys, 0L);
        }
        size = 0;
    }

    /** Packs an unordered pair; never 0 (the empty mark), since slots are non-negative. */
    private static long key(int a, int b) {
        int lo = Math.min(a, b), hi = Math.max(a, b);
        return ((long) lo << 32 | hi) + 1;
    }

    private static int slotOf(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & mask;
    }

    /** The remembered score of the pair, or NaN (scores are never NaN for finite vectors). */
    float get(int a, int b) {
        long k = key(a, b);
        int mask = keys.length - 1;
        for (int i = slotOf(k, mask);; i = (i + 1) & mask) {
            long at = keys[i];
            if (at == k) {
                hits++;
                return values[i];
            }
            if (at == 0) {
                misses++;
                return Float.NaN;
            }
        }
    }

    void put(int a, int b, float score) {
        if (size >= MAX_ENTRIES) {
            return;
        }
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        long k = key(a, b);
        int mask = keys.length - 1;
        int i = slotOf(k, mask);
        while (keys[i] != 0 && keys[i] != k) {
            i = (i + 1) & mask;
        }
        if (keys[i] == 0) {
            size++;
        }
        keys[i] = k;
        values[i] = score;
    }

    private void grow() {
        long[] oldKeys = keys;
        float[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new float[oldKeys.length * 2];
        int mask = keys.length - 1;
        for (int j = 0; j < oldKeys.length; j++) {
            long k = oldKeys[j];
            if (k != 0) {
                int i = slotOf(k, mask);
                while (keys[i] != 0) {
                    i = (i + 1) & mask;
                }
                keys[i] = k;
                values[i] = oldValues[j];
            }
        }
    }

    /** A scorer that answers from the memo first and remembers what it computes. */
    UpdatableNodeScorer wrap(UpdatableNodeScorer inner, int point) {
        return new Memoized(this, inner, point);
    }

    private static final class Memoized implements UpdatableNodeScorer {
        private final PairScoreMemo memo;
        private final UpdatableNodeScorer inner;
        private int point;

        Memoized(PairScoreMemo memo, UpdatableNodeScorer inner, int point) {
            this.memo = memo;
            this.inner = inner;
            this.point = point;
        }

        @Override
        public void setScoringNode(int node) {
            point = node;
            inner.setScoringNode(node);
        }

        @Override
        public float score(int node) {
            float s = memo.get(point, node);
            if (s != s) {
                s = inner.score(node);
                memo.put(point, node, s);
            }
            return s;
        }

        @Override
        public void bulkScore(int[] nodes, int count, float[] scores) {
            inner.bulkScore(nodes, count, scores);
            for (int i = 0; i < count; i++) {
                memo.put(point, nodes[i], scores[i]);
            }
        }

        @Override
        public boolean isExact() {
            return inner.isExact();
        }
    }
}
