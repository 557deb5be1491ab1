package dev.nepenthe.core;

import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import dev.nepenthe.core.internal.index.ExactIndex;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The exact index under another kind name ("counting"), recording how often the store removes from
 * it and asks it to prove removals, and able to fail that proof: the forget batching tests' own
 * witness of how many shared passes ran, independent of the forget engine's counters. Registered
 * for tests through {@code META-INF/services}.
 */
public final class CountingIndex implements VectorIndex {

    static final String KIND = "counting";

    /** How many ordinals each {@link #removeAll} call got, in order. */
    static final List<Integer> REMOVALS = new CopyOnWriteArrayList<>();

    /** How many ordinals each {@link #verifyRemoval} call got, in order. */
    static final List<Integer> PROOFS = new CopyOnWriteArrayList<>();

    /**
     * While true, every proof of a removal reports a violation (a checker that found a dangling
     * link).
     */
    static volatile boolean failProofs;

    /**
     * While above zero, the next proof reports a violation and counts this down (one batch's check
     * fails, not the next).
     */
    static final java.util.concurrent.atomic.AtomicInteger failNextProofs =
            new java.util.concurrent.atomic.AtomicInteger();

    private final ExactIndex exact;

    private CountingIndex(ExactIndex exact) {
        this.exact = exact;
    }

    static void reset() {
        REMOVALS.clear();
        PROOFS.clear();
        failProofs = false;
        failNextProofs.set(0);
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public int dimension() {
        return exact.dimension();
    }

    @Override
    public Metric metric() {
        return exact.metric();
    }

    @Override
    public void add(int ordinal, float[] vector) {
        exact.add(ordinal, vector);
    }

    @Override
    public boolean remove(int ordinal) {
        return exact.remove(ordinal);
    }

    @Override
    public int removeAll(int[] ordinals) {
        REMOVALS.add(ordinals.length);
        return exact.removeAll(ordinals);
    }

    @Override
    public boolean contains(int ordinal) {
        return exact.contains(ordinal);
    }

    @Override
    public int size() {
        return exact.size();
    }

    @Override
    public SearchResult search(float[] query, int k, Accept accept, SearchParams params) {
        return exact.search(query, k, accept, params);
    }

    @Override
    public IntegrityReport verifyIntegrity() {
        return exact.verifyIntegrity();
    }

    @Override
    public IntegrityReport verifyRemoval(int[] removedOrdinals) {
        PROOFS.add(removedOrdinals.length);
        IntegrityReport r = exact.verifyRemoval(removedOrdinals);
        if (failProofs || failNextProofs.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return new IntegrityReport(
                    r.structure(),
                    r.checked(),
                    Map.of("dangling-links", 1L),
                    List.of("injected by the test"));
        }
        return r;
    }

    @Override
    public void save(Path file) throws IOException {
        exact.save(file);
    }

    /** Registered through {@code META-INF/services} in the test resources. */
    public static final class Factory implements VectorIndexFactory {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public VectorIndex create(IndexConfig config) {
            return new CountingIndex(new ExactIndex(config.dimension(), config.metric()));
        }

        @Override
        public VectorIndex load(IndexConfig config, Path file) throws IOException {
            return new CountingIndex(ExactIndex.load(config, file));
        }
    }
}
