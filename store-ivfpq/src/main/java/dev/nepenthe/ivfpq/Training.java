package dev.nepenthe.ivfpq;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.internal.index.SwapRemoveVectors;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * One training of an {@link IvfPqIndex}: its copy of the sample, the next state as built so far,
 * and what happened to the index meanwhile. It exists apart from the index so that each step of a
 * training (sample, build, encode, catch up) is one method here, while the index keeps only the
 * locking between them (see {@link IvfPqIndex#trainInBackground()}).
 *
 * <p>Not thread-safe on its own: the training thread calls the steps, the index's writers call
 * {@link #forget} and {@link #finishRemovals}, and the index's lock orders the two (the step
 * methods say which lock their caller holds).
 */
final class Training {
    final long number;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    private final int dim;

    /** Sample ordinals, ascending, and their vectors in the same order. */
    int[] sampleOrds;

    float[] sample;
    final RoaringBitmap removedFromSample = new RoaringBitmap();

    /** Ordinals added since the training started: encoded at the swap unless already. */
    final RoaringBitmap added = new RoaringBitmap();

    /** Built after the k-means, under the read lock; kept current by every removal since. */
    TrainedState next;

    /** Removals from {@link #next} not yet followed up ({@link #finishRemovals}). */
    private Codebooks.Moves moves = new Codebooks.Moves();

    /** Set when removals left {@link #next} without a live anchor: it installs nothing. */
    boolean collapsed;

    volatile String phase = "sampling";
    volatile long encoded;
    volatile long total;

    /** Vectors encoded so far, counted by the training thread alone and published to encoded. */
    private long encodedSoFar;

    Training(long number, int dim) {
        this.number = number;
        this.dim = dim;
    }

    /**
     * After a batch of removals: the next state's moved centroids reach their layouts and tables at
     * once, as the serving state's do, so no derived copy of a removed vector's influence waits for
     * the swap.
     */
    void finishRemovals() {
        if (next != null && !collapsed && (!moves.isEmpty() || next.hasPendingReencodes())) {
            collapsed = !next.finish(moves);
            moves = new Codebooks.Moves();
        }
    }

    /** A vector about to leave the store: out of this training, wherever it has got to. */
    void forget(int ord, float[] block, int off) {
        added.remove(ord);
        if (next != null) {
            next.forget(ord, block, off, moves);
            return;
        }
        int row = sampleOrds == null ? -1 : Arrays.binarySearch(sampleOrds, ord);
        if (row >= 0 && !removedFromSample.contains(ord)) {
            // The k-means may be reading it: zero it now, so nothing read after this holds
            // it, and subtract it (as the zero vector it will be built from) once built.
            Arrays.fill(sample, row * dim, (row + 1) * dim, 0f);
            removedFromSample.add(ord);
        }
    }

    /**
     * Step 1, under the read lock: copies the sample, every live vector or {@code trainSize} of
     * them chosen at random, in ascending ordinal order.
     *
     * @return the sample's size, 0 when too few vectors are live to train
     */
    int takeSample(SwapRemoveVectors store, IvfPqParams params, SplittableRandom rnd) {
        int n = store.size();
        if (n < params.minTrainingVectors()) {
            return 0;
        }
        int s = Math.min(n, params.trainSize());
        int[] slots = new int[n];
        for (int i = 0; i < n; i++) {
            slots[i] = i;
        }
        for (int i = 0; i < s && s < n; i++) {
            int j = i + rnd.nextInt(n - i);
            int tmp = slots[i];
            slots[i] = slots[j];
            slots[j] = tmp;
        }
        int[] ords = new int[s];
        for (int i = 0; i < s; i++) {
            ords[i] = store.ordinalAt(slots[i]);
        }
        Arrays.sort(ords);
        float[] copy = new float[s * dim];
        for (int i = 0; i < s; i++) {
            System.arraycopy(
                    store.block(), store.offset(store.slotOf(ords[i])), copy, i * dim, dim);
        }
        sampleOrds = ords;
        sample = copy;
        return s;
    }

    /**
     * Step 3, under the read lock: the codebooks from the sample as it now is, those removed during
     * the k-means subtracted, and an empty next state around them; the sample is zeroed.
     */
    void build(
            VectorKernels kernels,
            Metric metric,
            IvfPqParams params,
            SwapRemoveVectors store,
            ScalarCodes osq,
            Assignment assignment) {
        Codebooks cb =
                Codebooks.fromSample(kernels, metric, params, dim, sample, sampleOrds, assignment);
        IntIterator it = removedFromSample.getIntIterator();
        while (it.hasNext()) {
            int ord = it.next();
            int row = Arrays.binarySearch(sampleOrds, ord);
            cb.removeMember(ord, sample, row * dim, moves);
        }
        next = new TrainedState(cb, kernels, store, store.ordinalCapacity(), osq);
        finishRemovals();
        Arrays.fill(sample, 0f);
        total = store.size();
    }

    /**
     * Step 4, under the read lock: encodes the live vectors among ordinals {@code [lo, lo + chunk)}
     * that the next state does not hold yet.
     *
     * @return false once {@code lo} is past every ordinal the store has room for
     */
    boolean encodeChunk(SwapRemoveVectors store, int lo, int chunk) {
        int cap = store.ordinalCapacity();
        if (lo >= cap) {
            return false;
        }
        for (int ord = lo; ord < Math.min(cap, lo + chunk); ord++) {
            if (!collapsed && store.contains(ord) && !next.holds(ord)) {
                next.insert(ord, store.block(), store.offset(store.slotOf(ord)));
                encoded = ++encodedSoFar;
            }
        }
        return true;
    }

    /** Step 5, under the write lock: encodes what was added while the training ran. */
    void catchUp(SwapRemoveVectors store) {
        IntIterator it = added.getIntIterator();
        while (!collapsed && it.hasNext()) {
            int ord = it.next();
            if (store.contains(ord) && !next.holds(ord)) {
                next.insert(ord, store.block(), store.offset(store.slotOf(ord)));
            }
        }
    }

    /** Zeroes whatever the training built or copied (it installs nothing). */
    void abandon() {
        if (next != null) {
            next.wipe();
        }
        if (sample != null) {
            Arrays.fill(sample, 0f);
        }
    }
}
