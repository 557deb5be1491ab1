package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.internal.io.BodyStreams;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Brute force over a dense block of vectors: the oracle every approximate index is tested against,
 * and the right choice for small collections.
 *
 * <p>Layout: a {@link SwapRemoveVectors} block, live vectors back to back, so a search is one
 * batch-scoring pass; removal zeroes what it vacates, so no removed vector's bytes stay.
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

    private final SwapRemoveVectors store;

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
        this.store = new SwapRemoveVectors(dimension);
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
            if (store.contains(ordinal)) {
                throw new IllegalArgumentException(
                        "ordinal " + ordinal + " is already live in this index");
            }
            store.add(ordinal, prepared);
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public boolean remove(int ordinal) {
        lock.writeLock().lock();
        try {
            return store.remove(ordinal);
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
                if (store.remove(ord)) {
                    removed++;
                }
            }
            return removed;
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public boolean contains(int ordinal) {
        lock.readLock().lock();
        try {
            return store.contains(ordinal);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public int size() {
        lock.readLock().lock();
        try {
            return store.size();
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
            int size = store.size();
            float[] block = store.block();
            long allowed = accept.cardinality();
            if (accept != Accept.ALL && allowed >= 0 && allowed < size / 4) {
                java.util.PrimitiveIterator.OfInt it = accept.ordinals();
                while (it.hasNext()) {
                    int ord = it.nextInt();
                    int slot = store.slotOf(ord);
                    if (slot >= 0) {
                        top.offer(ord, metric.score(kernels, q, block, store.offset(slot), dim));
                        visited++;
                    }
                }
            } else {
                float[] scores = new float[BATCH];
                for (int start = 0; start < size; start += BATCH) {
                    int n = Math.min(BATCH, size - start);
                    metric.scoreBatch(kernels, q, block, store.offset(start), n, dim, scores);
                    visited += n;
                    for (int i = 0; i < n; i++) {
                        int ord = store.ordinalAt(start + i);
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
            int slot = store.slotOf(ordinal);
            if (slot < 0) {
                return null;
            }
            int off = store.offset(slot);
            return Arrays.copyOfRange(store.block(), off, off + dim);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public IntegrityReport verifyIntegrity() {
        IntegrityReport.Builder r = IntegrityReport.builder(KIND);
        lock.readLock().lock();
        try {
            store.check(r);
        } finally {
            lock.readLock().unlock();
        }
        return r.build();
    }

    @Override
    public void save(Path file) throws IOException {
        lock.readLock().lock();
        try {
            ChecksummedFiles.write(
                    file, FORMAT, VERSION, ChecksummedFiles.newFileId(), this::writeBody);
        } finally {
            lock.readLock().unlock();
        }
    }

    @Override
    public void writeTo(DataOutputStream out) throws IOException {
        lock.readLock().lock();
        try {
            BodyStreams.writeHeader(out, FORMAT, VERSION);
            writeBody(out);
        } finally {
            lock.readLock().unlock();
        }
    }

    private void writeBody(DataOutputStream out) throws IOException {
        IndexChecks.writeShape(out, dim, metric);
        out.writeInt(store.size());
        float[] block = store.block();
        for (int slot = 0; slot < store.size(); slot++) {
            out.writeInt(store.ordinalAt(slot));
            BodyStreams.writeFloats(out, block, store.offset(slot), dim);
        }
    }

    /** Reads a file written by {@link #save}; dimension and metric must match {@code config}. */
    public static ExactIndex load(IndexConfig config, Path file) throws IOException {
        return ChecksummedFiles.read(
                file, FORMAT, VERSION, VERSION, (in, version) -> readBody(config, in));
    }

    /** Reads what {@link #writeTo} wrote. */
    public static ExactIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        BodyStreams.readHeader(in, FORMAT, VERSION, VERSION);
        return readBody(config, in);
    }

    private static ExactIndex readBody(IndexConfig config, DataInputStream in) throws IOException {
        IndexChecks.readShape(in, config);
        int dim = config.dimension();
        int n = in.readInt();
        ExactIndex index = new ExactIndex(dim, config.metric());
        float[] v = new float[dim];
        for (int slot = 0; slot < n; slot++) {
            int ord = in.readInt();
            if (ord < 0 || index.store.contains(ord)) {
                throw new IllegalArgumentException(
                        "ordinal " + ord + " at slot " + slot + " is invalid or repeated");
            }
            BodyStreams.readFloats(in, v, 0, dim);
            index.store.add(ord, v);
        }
        return index;
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

        @Override
        public boolean persists() {
            return true;
        }

        @Override
        public VectorIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
            return ExactIndex.readFrom(config, in);
        }
    }
}
