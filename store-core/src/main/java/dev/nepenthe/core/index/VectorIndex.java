package dev.nepenthe.core.index;

import dev.nepenthe.core.Metric;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The SPI every index implements (exact, HNSW, IVF-PQ). The store owns record ids and hands
 * each vector to the index under an int ordinal; the index never sees ids, tenants or text.
 *
 * <p>Removal is physical: after {@link #remove} returns, no structure of the index holds the
 * ordinal or the vector's bytes, and {@link #verifyIntegrity()} can prove it. Implementations
 * are safe for concurrent searches with concurrent adds and removes unless they say otherwise.
 */
public interface VectorIndex extends AutoCloseable {

    /** The kind this index was created by, as registered with {@link VectorIndexFactory#kind()}. */
    String kind();

    int dimension();

    Metric metric();

    /**
     * Adds a vector under an ordinal that is not live in this index. The index keeps its own
     * (prepared, see {@link Metric#prepare}) copy.
     *
     * @throws IllegalArgumentException if the ordinal is live or the vector has the wrong length
     */
    void add(int ordinal, float[] vector);

    /**
     * Removes an ordinal and every trace of its vector the index holds.
     *
     * @return false if the ordinal was not live
     */
    boolean remove(int ordinal);

    /**
     * Removes several ordinals; implementations share work across the batch (one repair pass,
     * one retrain). Ordinals that are not live are skipped.
     *
     * @return how many were removed
     */
    default int removeAll(int[] ordinals) {
        int removed = 0;
        for (int ord : ordinals) {
            if (remove(ord)) {
                removed++;
            }
        }
        return removed;
    }

    boolean contains(int ordinal);

    /**
     * Called after a bulk load (many adds, possibly from several threads, e.g. when a store
     * rebuilds its index at open). An index may restore here invariants that concurrent
     * building can relax; HNSW reconnects nodes that became unreachable from the entry point.
     * Costs at most one pass over the index; does nothing by default.
     */
    default void afterBulkLoad() {}

    /** Number of live vectors. */
    int size();

    /**
     * The {@code k} best-scoring live ordinals (higher score is closer, see {@link Metric}).
     *
     * @param accept which ordinals may be returned ({@link Accept#ALL} for every live one)
     * @param params per-query knobs (efSearch, nprobe, ...); unknown names are ignored, and null
     *     means the index's defaults
     */
    SearchResult search(float[] query, int k, Accept accept, SearchParams params);

    default SearchResult search(float[] query, int k) {
        return search(query, k, Accept.ALL, SearchParams.DEFAULTS);
    }

    /**
     * Checks the index's structural invariants and that no removed ordinal survives anywhere
     * in it. Called by tests, by the forget protocol before it seals, and by operators.
     */
    IntegrityReport verifyIntegrity();

    /**
     * Proves that the given removed ordinals left nothing behind, looking where their removal
     * changed the index rather than at the whole of it, so the forget protocol's proof costs what
     * the forget's scope costs. What the scoped proof covers, and what it takes from earlier
     * full checks, the report's {@code checked} counts say. By default the whole checker runs.
     * Ordinals that were re-added since their removal are checked as live entries.
     */
    default IntegrityReport verifyRemoval(int[] removedOrdinals) {
        return verifyIntegrity();
    }

    /**
     * True while a removal has left influence that the index can still purge: IVF-PQ codebooks
     * trained on a removed vector, for example. The forget protocol calls
     * {@link #purgeResidue()} and does not seal while this is true.
     */
    default boolean hasResidue() {
        return false;
    }

    /**
     * Removes the residue {@link #hasResidue()} reports (retrain, re-encode). Costs what a
     * retrain costs; does nothing by default. Callers exclude adds and removes meanwhile but
     * keep searching, so an index should let searches run while it purges (IVF-PQ computes the
     * new codebooks aside and swaps them in).
     */
    default void purgeResidue() {}

    /**
     * What removal leaves behind by design, for erasure receipts (for example "second-order
     * influence on other nodes' links until the next rebuild"), or null when nothing does.
     */
    default String erasureResidual() {
        return null;
    }

    /**
     * Writes the whole index to {@code file} (write to a temporary sibling, fsync, rename),
     * in a versioned, checksummed format that {@link VectorIndexFactory#load} reads back.
     */
    void save(Path file) throws IOException;

    /**
     * Its structure for operators and auditors (see {@link IndexDescription}). Costs a pass over
     * the index's own structures, not a search; the default gives kind and size only.
     */
    default IndexDescription describe() {
        return new IndexDescription(kind(), size(), java.util.Map.of(), java.util.List.of(), null);
    }

    @Override
    default void close() {}
}
