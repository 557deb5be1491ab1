package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.PersistentIndexFactory;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.io.BodyStreams;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/**
 * Brute force over a dense block of vectors: the oracle every approximate index is tested against,
 * and the right choice for small collections.
 *
 * <p>Layout: a {@link SwapRemoveVectors} block, live vectors back to back, so a search is one
 * batch-scoring pass; removal zeroes what it vacates, so no removed vector's bytes stay.
 */
public final class ExactIndex extends BlockBackedIndex {

    public static final String KIND = "exact";
    static final String FORMAT = "nepenthe-exact-index";
    static final int VERSION = 1;

    private final int dim;
    private final Metric metric;

    private final ExactScan scan;

    public ExactIndex(int dimension, Metric metric) {
        this(dimension, metric, Kernels.get());
    }

    public ExactIndex(int dimension, Metric metric, VectorKernels kernels) {
        super(KIND, dimension, metric);
        this.dim = dimension;
        this.metric = metric;
        this.scan = new ExactScan(store, metric, kernels, dimension);
    }

    @Override
    public void add(int ordinal, float[] vector) {
        IndexChecks.checkAdd(ordinal, vector, dim);
        float[] prepared = metric.prepare(vector);
        lock.writeLock().lock();
        try {
            if (store.contains(ordinal)) {
                throw IndexChecks.alreadyLive(ordinal);
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
    public SearchResult search(float[] query, int k, Accept accept, SearchParams params) {
        IndexChecks.checkSearch(query, k, dim);
        float[] q = metric.prepare(query);
        return lock.read(
                () -> {
                    // A selective filter is cheaper to walk than the whole block.
                    long allowed = accept.cardinality();
                    return !accept.isAll() && allowed >= 0 && allowed < store.size() / 4
                            ? scan.accepted(q, k, accept)
                            : scan.all(q, k, accept);
                });
    }

    /** A copy of the stored (prepared) vector of a live ordinal, or null. */
    public float[] vector(int ordinal) {
        return lock.read(
                () -> {
                    int slot = store.slotOf(ordinal);
                    int off = store.offset(slot);
                    return slot < 0 ? null : Arrays.copyOfRange(store.block(), off, off + dim);
                });
    }

    @Override
    public IntegrityReport verifyIntegrity() {
        IntegrityReport.Builder r = IntegrityReport.builder(KIND);
        lock.readRun(() -> store.check(r));
        return r.build();
    }

    @Override
    public void save(Path file) throws IOException {
        lock.readIo(
                () ->
                        ChecksummedFiles.write(
                                file,
                                FORMAT,
                                VERSION,
                                ChecksummedFiles.newFileId(),
                                this::writeBody));
    }

    @Override
    public void writeTo(DataOutputStream out) throws IOException {
        lock.readIo(
                () -> {
                    BodyStreams.writeHeader(out, FORMAT, VERSION);
                    writeBody(out);
                });
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

    /** An empty index for a config; the exact index takes no parameters. */
    public static ExactIndex create(IndexConfig config) {
        config.requireKnown(KIND, Set.of());
        return new ExactIndex(config.dimension(), config.metric());
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
    public static final class Factory extends PersistentIndexFactory {
        public Factory() {
            super(KIND, ExactIndex::create, ExactIndex::load, ExactIndex::readFrom);
        }
    }
}
