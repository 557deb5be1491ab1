package dev.nepenthe.core.index;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.io.ChecksummedFiles;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Brute force over a dense block of vectors: the oracle every approximate index is tested
 * against, and the right choice for small collections.
 *
 * <p>Layout: live vectors occupy slots {@code [0, size)} of one float array, back to back, so
 * a search is one batch-scoring pass. Removal moves the last slot into the hole and zeroes the
 * vacated slot, so no removed vector's bytes stay in the block.
 */
public final class ExactIndex implements VectorIndex {

    public static final String KIND = "exact";
    static final String FORMAT = "nepenthe-exact-index";
    static final int VERSION = 1;
    /** Vectors scored per batch call: large enough to amortise the call, small enough for L1/L2. */
    private static final int BATCH = 256;

    private final int dim;
    private final Metric metric;
    private final VectorKernels kernels;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private float[] block;
    private int[] slotToOrd;
    private int[] ordToSlot; // -1 where the ordinal is not live
    private int size;

    public ExactIndex(int dimension, Metric metric) {
        this(dimension, metric, Kernels.get());
    }

    public ExactIndex(int dimension, Metric metric, VectorKernels kernels) {
        if (dimension <= 0) {
            throw new IllegalArgumentException("dimension: expected > 0, got " + dimension);
        }
        this.dim = dimension;
        this.metric = metric;
        this.kernels = kernels;
        this.block = new float[16 * dimension];
        this.slotToOrd = new int[16];
        this.ordToSlot = new int[16];
        Arrays.fill(ordToSlot, -1);
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public int dimension() {
        return dim;
    }

    @Override
    public Metric metric() {
        return metric;
    }

    @Override
    public void add(int ordinal, float[] vector) {
        IndexChecks.checkAdd(ordinal, vector, dim);
        float[] prepared = metric.prepare(vector);
        lock.writeLock().lock();
        try {
            if (ordinal < ordToSlot.length && ordToSlot[ordinal] >= 0) {
                throw new IllegalArgumentException("ordinal " + ordinal + " is already live in this index");
            }
            ensureCapacity(size + 1, ordinal + 1);
            System.arraycopy(prepared, 0, block, size * dim, dim);
            slotToOrd[size] = ordinal;
            ordToSlot[ordinal] = size;
            size++;
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void ensureCapacity(int slots, int ordinals) {
        if (slots > slotToOrd.length) {
            int cap = Math.max(slots, slotToOrd.length + (slotToOrd.length >> 1));
            block = Arrays.copyOf(block, Math.multiplyExact(cap, dim));
            slotToOrd = Arrays.copyOf(slotToOrd, cap);
        }
        if (ordinals > ordToSlot.length) {
            int old = ordToSlot.length;
            ordToSlot = Arrays.copyOf(ordToSlot, Math.max(ordinals, old + (old >> 1)));
            Arrays.fill(ordToSlot, old, ordToSlot.length, -1);
        }
    }

    @Override
    public boolean remove(int ordinal) {
        lock.writeLock().lock();
        try {
            return removeLocked(ordinal);
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public int removeAll(int[] ordinals) {
        lock.writeLock().lock();
        try {
            int removed = 0;
            for (int ord : ordinals) {
                if (removeLocked(ord)) {
                    removed++;
                }
            }
            return removed;
        } finally {
            lock.writeLock().unlock();
        }
    }

    private boolean removeLocked(int ordinal) {
        if (ordinal < 0 || ordinal >= ordToSlot.length || ordToSlot[ordinal] < 0) {
            return false;
        }
        int slot = ordToSlot[ordinal];
        int last = size - 1;
        if (slot != last) {
            System.arraycopy(block, last * dim, block, slot * dim, dim);
            int moved = slotToOrd[last];
            slotToOrd[slot] = moved;
            ordToSlot[moved] = slot;
        }
        Arrays.fill(block, last * dim, (last + 1) * dim, 0f);
        slotToOrd[last] = 0;
        ordToSlot[ordinal] = -1;
        size = last;
        return true;
    }

    @Override
    public boolean contains(int ordinal) {
        lock.readLock().lock();
        try {
            return ordinal >= 0 && ordinal < ordToSlot.length && ordToSlot[ordinal] >= 0;
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public int size() {
        lock.readLock().lock();
        try {
            return size;
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public SearchResult search(float[] query, int k, Accept accept, SearchParams params) {
        IndexChecks.checkSearch(query, k, dim);
        float[] q = metric.prepare(query);
        TopK top = new TopK(k);
        long visited = 0;
        lock.readLock().lock();
        try {
            // A selective filter is cheaper to walk than the whole block.
            long allowed = accept.cardinality();
            if (accept != Accept.ALL && allowed >= 0 && allowed < size / 4) {
                java.util.PrimitiveIterator.OfInt it = accept.ordinals();
                while (it.hasNext()) {
                    int ord = it.nextInt();
                    if (ord < ordToSlot.length && ordToSlot[ord] >= 0) {
                        top.offer(ord, metric.score(kernels, q, block, ordToSlot[ord] * dim, dim));
                        visited++;
                    }
                }
            } else {
                float[] scores = new float[BATCH];
                for (int start = 0; start < size; start += BATCH) {
                    int n = Math.min(BATCH, size - start);
                    metric.scoreBatch(kernels, q, block, start * dim, n, dim, scores);
                    visited += n;
                    for (int i = 0; i < n; i++) {
                        int ord = slotToOrd[start + i];
                        if (accept == Accept.ALL || accept.accepts(ord)) {
                            top.offer(ord, scores[i]);
                        }
                    }
                }
            }
        } finally {
            lock.readLock().unlock();
        }
        return top.drain(visited);
    }

    /** A copy of the stored (prepared) vector of a live ordinal, or null. */
    public float[] vector(int ordinal) {
        lock.readLock().lock();
        try {
            if (ordinal < 0 || ordinal >= ordToSlot.length || ordToSlot[ordinal] < 0) {
                return null;
            }
            int off = ordToSlot[ordinal] * dim;
            return Arrays.copyOfRange(block, off, off + dim);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public IntegrityReport verifyIntegrity() {
        IntegrityReport.Builder r = IntegrityReport.builder(KIND)
                .expect("slot-map-mismatch")
                .expect("ordinal-map-dangling")
                .expect("freed-slot-not-zeroed");
        lock.readLock().lock();
        try {
            for (int slot = 0; slot < size; slot++) {
                int ord = slotToOrd[slot];
                if (ord < 0 || ord >= ordToSlot.length || ordToSlot[ord] != slot) {
                    r.violation("slot-map-mismatch", "slot " + slot + " names ordinal " + ord);
                }
            }
            int live = 0;
            for (int ord = 0; ord < ordToSlot.length; ord++) {
                int slot = ordToSlot[ord];
                if (slot >= 0) {
                    live++;
                    if (slot >= size || slotToOrd[slot] != ord) {
                        r.violation("ordinal-map-dangling", "ordinal " + ord + " points at slot " + slot);
                    }
                }
            }
            for (int i = size * dim; i < block.length; i++) {
                if (block[i] != 0f) {
                    r.violation("freed-slot-not-zeroed", "slot " + (i / dim) + " beyond size " + size);
                    break;
                }
            }
            r.checked("slots", size).checked("ordinals", live).checked("freed-floats", block.length - (long) size * dim);
        } finally {
            lock.readLock().unlock();
        }
        return r.build();
    }

    @Override
    public void save(Path file) throws IOException {
        lock.readLock().lock();
        try {
            ChecksummedFiles.write(file, FORMAT, VERSION, ChecksummedFiles.newFileId(), out -> {
                IndexChecks.writeShape(out, dim, metric);
                out.writeInt(size);
                for (int slot = 0; slot < size; slot++) {
                    out.writeInt(slotToOrd[slot]);
                    int off = slot * dim;
                    for (int i = 0; i < dim; i++) {
                        out.writeFloat(block[off + i]);
                    }
                }
            });
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Reads a file written by {@link #save}; dimension and metric must match {@code config}. */
    public static ExactIndex load(IndexConfig config, Path file) throws IOException {
        return ChecksummedFiles.read(file, FORMAT, VERSION, VERSION, (in, version) -> {
            IndexChecks.readShape(in, config);
            int dim = config.dimension();
            int n = in.readInt();
            ExactIndex index = new ExactIndex(dim, config.metric());
            index.ensureCapacity(n, 16);
            for (int slot = 0; slot < n; slot++) {
                int ord = in.readInt();
                if (ord < 0 || (ord < index.ordToSlot.length && index.ordToSlot[ord] >= 0)) {
                    throw new IllegalArgumentException("ordinal " + ord + " at slot " + slot + " is invalid or repeated");
                }
                index.ensureCapacity(slot + 1, ord + 1);
                int off = slot * dim;
                for (int i = 0; i < dim; i++) {
                    index.block[off + i] = in.readFloat();
                }
                index.slotToOrd[slot] = ord;
                index.ordToSlot[ord] = slot;
                index.size = slot + 1;
            }
            return index;
        });
    }

    /** Registered through {@code META-INF/services}. */
    public static final class Factory implements VectorIndexFactory {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public VectorIndex create(IndexConfig config) {
            config.requireKnown(KIND, java.util.Set.of());
            return new ExactIndex(config.dimension(), config.metric());
        }

        @Override
        public VectorIndex load(IndexConfig config, Path file) throws IOException {
            return ExactIndex.load(config, file);
        }
    }
}
