package dev.nepenthe.core.index;

import dev.nepenthe.core.Metric;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The SPI every index implements (exact, HNSW, IVF-PQ). The store owns record ids and hands each
 * vector to the index under an int ordinal; the index never sees ids, tenants or text.
 *
 * <p>Removal is physical: after {@link #remove} returns, no structure of the index holds the
 * ordinal or the vector's bytes, and {@link #verifyIntegrity()} can prove it. Implementations are
 * safe for concurrent searches with concurrent adds and removes unless they say otherwise.
 */
public interface VectorIndex extends AutoCloseable {

    /**
     * The kind this index was created by, as registered with {@link VectorIndexFactory#kind()}.
     *
     * @return the kind's name
     */
    String kind();

    /**
     * The vectors' length.
     *
     * @return the dimension from the index's config
     */
    int dimension();

    /**
     * How the index scores.
     *
     * @return the metric from the index's config
     */
    Metric metric();

    /**
     * Adds a vector under an ordinal that is not live in this index. The index keeps its own
     * (prepared, see {@link Metric#prepare}) copy.
     *
     * @param ordinal the ordinal the store gave the record, 0 or more
     * @param vector the vector as the record holds it; the index must not keep this array
     * @throws IllegalArgumentException if the ordinal is negative or live, or the vector has the
     *     wrong length
     */
    void add(int ordinal, float[] vector);

    /**
     * Removes an ordinal and every trace of its vector the index holds.
     *
     * @param ordinal the ordinal to remove
     * @return false if the ordinal was not live
     */
    boolean remove(int ordinal);

    /**
     * Removes several ordinals; implementations share work across the batch (one repair pass, one
     * retrain). Ordinals that are not live are skipped. By default, {@link #remove} for each in
     * turn.
     *
     * @param ordinals the ordinals to remove
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

    /**
     * Whether an ordinal is live in this index.
     *
     * @param ordinal the ordinal
     * @return true if it was added and not removed since
     */
    boolean contains(int ordinal);

    /**
     * Called after a bulk load (many adds, possibly from several threads, e.g. when a store
     * rebuilds its index at open). An index may restore here invariants that concurrent building
     * can relax; HNSW reconnects nodes that became unreachable from the entry point. Costs at most
     * one pass over the index; does nothing by default.
     */
    default void afterBulkLoad() {}

    /**
     * Number of live vectors.
     *
     * @return the count
     */
    int size();

    /**
     * The {@code k} best-scoring live ordinals (higher score is closer, see {@link Metric}).
     *
     * @param query the query vector as given (the index prepares its own copy, see {@link
     *     Metric#prepare})
     * @param k how many ordinals to return at most, above 0
     * @param accept which ordinals may be returned ({@link Accept#ALL} for every live one)
     * @param params per-query knobs (efSearch, nprobe, ...); unknown names are ignored, and null
     *     means the index's defaults
     * @return at most {@code k} accepted live ordinals with their scores, best first (ties by
     *     ascending ordinal); fewer when fewer are accepted, or when an approximate index finds
     *     fewer
     * @throws IllegalArgumentException if the query has the wrong length, k is not positive or a
     *     knob is out of range
     */
    SearchResult search(float[] query, int k, Accept accept, SearchParams params);

    /**
     * The {@code k} best-scoring live ordinals, any ordinal accepted, with the index's default
     * knobs.
     *
     * @param query the query vector
     * @param k how many ordinals to return at most, above 0
     * @return the hits, best first
     * @throws IllegalArgumentException if the query has the wrong length or k is not positive
     */
    default SearchResult search(float[] query, int k) {
        return search(query, k, Accept.ALL, SearchParams.DEFAULTS);
    }

    /**
     * Checks the index's structural invariants and that no removed ordinal survives anywhere in it.
     * Called by tests, by the forget protocol before it seals, and by operators. Costs a pass over
     * the whole index; the store calls it with adds and removes kept out.
     *
     * @return what was checked and every violation found
     */
    IntegrityReport verifyIntegrity();

    /**
     * Proves that the given removed ordinals left nothing behind, looking where their removal
     * changed the index rather than at the whole of it, so the forget protocol's proof costs what
     * the forget's scope costs. What the scoped proof covers, and what it takes from earlier full
     * checks, the report's {@code checked} counts say. By default the whole checker runs. Ordinals
     * that were re-added since their removal are checked as live entries.
     *
     * @param removedOrdinals the ordinals a forget removed
     * @return what was checked and every violation found
     */
    default IntegrityReport verifyRemoval(int[] removedOrdinals) {
        return verifyIntegrity();
    }

    /**
     * True while a removal has left influence that the index can still purge: IVF-PQ codebooks
     * trained on a removed vector, for example. The forget protocol calls {@link #purgeResidue()}
     * and does not seal while this is true.
     *
     * @return true while purgeable influence of a removed vector remains; false by default
     */
    default boolean hasResidue() {
        return false;
    }

    /**
     * Removes the residue {@link #hasResidue()} reports (retrain, re-encode). Costs what a retrain
     * costs; does nothing by default. Callers exclude adds and removes meanwhile but keep
     * searching, so an index should let searches run while it purges (IVF-PQ computes the new
     * codebooks aside and swaps them in).
     */
    default void purgeResidue() {}

    /**
     * What removal leaves behind by design, for erasure receipts (for example "second-order
     * influence on other nodes' links until the next rebuild"), or null when nothing does.
     *
     * @return a sentence for the receipt, or null (the default)
     */
    default String erasureResidual() {
        return null;
    }

    /**
     * Writes the whole index to {@code file} (write to a temporary sibling, fsync, rename), in a
     * versioned, checksummed format that {@link VectorIndexFactory#load} reads back. The store does
     * not call it: it writes indexes through {@link #writeTo}, encrypted.
     *
     * @param file the file to write
     * @throws IOException if writing, the fsync or the rename fails
     */
    void save(Path file) throws IOException;

    /**
     * Writes the whole index to a stream the caller owns (and encrypts, checksums, flushes): its
     * own format name and version first, then what {@link #save} writes, so that {@link
     * VectorIndexFactory#readFrom} reads it back. Concurrent searches go on; adds and removes wait.
     * Only kinds whose factory {@link VectorIndexFactory#persists() persists} implement it.
     *
     * @param out the stream
     * @throws IOException if writing fails
     * @throws UnsupportedOperationException if this kind cannot be written to a stream
     */
    default void writeTo(DataOutputStream out) throws IOException {
        throw new UnsupportedOperationException(kind() + " indexes cannot be written to a stream");
    }

    /**
     * Its structure for operators and auditors (see {@link IndexDescription}). Costs a pass over
     * the index's own structures, not a search; the default gives kind and size only.
     *
     * @return the description
     */
    default IndexDescription describe() {
        return new IndexDescription(kind(), size(), Map.of(), List.of(), null);
    }

    /**
     * Releases what the index holds outside the heap, if anything; the index is not used
     * afterwards. Does nothing by default, and throws no checked exception.
     */
    @Override
    default void close() {}
}
