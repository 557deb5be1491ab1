package dev.nepenthe.core;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A named set of records of one dimension and metric, with one index over all of them.
 * Obtained from {@link Nepenthe#createCollection} or {@link Nepenthe#collection}; safe for
 * concurrent use.
 *
 * <p>Writes (upserts, deletes, checkpoints, a forget's cleanup) take turns and are durable
 * (fsynced) when they return. Reads (search, get, size, ids) never wait for a write: they see
 * every write that returned before they started, a record deleted or forgotten before a search
 * materialises its hits is never returned, and a returned score is the returned record's score.
 * To erase a person or a source with proof, use {@link Nepenthe#forget}; {@link #delete} and
 * {@link #deleteSubject} are plain deletes with no verification and no receipt.
 *
 * <p>Records are copied in and out: changing a record after handing it over, or one a search
 * returned, changes nothing stored.
 */
public final class VectorCollection {

    private final CollectionEngine engine;

    VectorCollection(CollectionEngine engine) {
        this.engine = engine;
    }

    /** The engine behind this collection (the store and its forget engine work on it). */
    CollectionEngine engine() {
        return engine;
    }

    /** The collection's name, dimension, metric and index. */
    public CollectionSpec spec() {
        return engine.spec();
    }

    public String name() {
        return engine.name();
    }

    /**
     * Inserts or replaces one record (same tenant and id replaces). Costs a log append and an
     * fsync plus one index insertion.
     *
     * @throws IllegalArgumentException if the record does not fit the collection (dimension, non-finite values, sizes)
     * @throws dev.nepenthe.core.forget.ForgottenScopeException if the record falls in a scope a forget is erasing
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void upsert(VectorRecord record) {
        engine.upsertAll(List.of(record));
    }

    /**
     * Inserts or replaces a batch atomically: every record is validated first, and a batch with
     * one bad record stores none of it. Durable (fsynced) when this returns; one fsync for the
     * whole batch. Waits for other writes; searches go on meanwhile.
     *
     * @throws IllegalArgumentException naming the first bad record by its batch position
     * @throws dev.nepenthe.core.forget.ForgottenScopeException naming the batch position that falls in a scope being forgotten
     * @throws java.io.UncheckedIOException if the log write failed (nothing of the batch was stored)
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void upsertAll(List<VectorRecord> batch) {
        engine.upsertAll(batch);
    }

    /** The record with this id in the default tenant; see {@link #get(String, String)}. */
    public Optional<VectorRecord> get(String id) {
        return get(VectorRecord.DEFAULT_TENANT, id);
    }

    /**
     * The record (tenant, id), unless it is absent or a forget or legal hold hides it. Takes no
     * lock; costs one id-map lookup and a copy of the record.
     *
     * @throws IllegalStateException if the collection or its store is closed
     */
    public Optional<VectorRecord> get(String tenant, String id) {
        return engine.get(tenant, id);
    }

    /** Deletes one record of the default tenant; returns whether it existed. See {@link #deleteAll}. */
    public boolean delete(String id) {
        return delete(VectorRecord.DEFAULT_TENANT, id);
    }

    /** Deletes one record; returns whether it existed. See {@link #deleteAll}. */
    public boolean delete(String tenant, String id) {
        return deleteAll(tenant, List.of(id)) == 1;
    }

    /**
     * Deletes records by id within a tenant: removed from the index (physically, by the index's
     * own rules), from every bitmap, and from the record log, which is rewritten without them
     * before this returns. Unknown ids are skipped. A plain delete: no verification, no receipt.
     * Costs the index's repair of each removal plus a rewrite of the files that held them.
     *
     * @return how many records were deleted
     * @throws java.io.UncheckedIOException if journaling the delete failed (nothing was deleted)
     * @throws IllegalStateException if the collection or its store is closed
     */
    public int deleteAll(String tenant, List<String> ids) {
        return engine.deleteAll(tenant, ids);
    }

    /**
     * Deletes every record of one subject in one tenant (another tenant's subject with the same
     * name is untouched) and destroys the subject's data key, even when no record is left. A
     * plain delete; {@link Nepenthe#forget} adds verification and a receipt.
     *
     * @return how many records were deleted
     * @throws java.io.UncheckedIOException if the delete could not be journaled
     * @throws IllegalStateException if the collection or its store is closed
     */
    public int deleteSubject(String tenant, String subject) {
        return engine.deleteSubject(tenant, subject);
    }

    /**
     * The k records of the request's tenant closest to its vector, best first, narrowed by the
     * request's subject and metadata filter. Takes no lock: it runs beside writes and forgets.
     * Costs one index search (see the index's parameters) plus, with a filter, one pass over the
     * tenant's records to build the candidate set.
     *
     * @throws IllegalArgumentException if the query vector does not fit the collection
     * @throws IllegalStateException if the collection or its store is closed
     */
    public List<SearchHit> search(SearchRequest request) {
        return engine.search(request);
    }

    /** Number of records in all tenants (forgotten records leave it when their forget seals). */
    public int size() {
        return engine.size();
    }

    /** Number of records in one tenant. */
    public int size(String tenant) {
        return engine.size(tenant);
    }

    /**
     * Ids of a tenant's records, in no particular order, without those a forget or hold hides.
     * A listing, not a search: it waits for a write in flight, so a record being replaced is
     * listed once. Costs a pass over the tenant's records.
     */
    public List<String> ids(String tenant) {
        return engine.ids(tenant);
    }

    /** The tenants that have at least one live record here (a snapshot). */
    public Set<String> tenants() {
        return engine.tenants();
    }

    /**
     * The index's structure by record (see {@link IndexView}); writes wait while it is read.
     * Costs a pass over the index's lists or nodes.
     *
     * @throws IllegalStateException if the collection or its store is closed
     */
    public IndexView describeIndex() {
        return engine.describeIndex();
    }

    /**
     * The index's own integrity check plus the collection's (the index holds exactly the live
     * records, the id map finds each of them, the bitmaps agree with the records), by name.
     * Writes wait while it runs; reads do not. Costs a full pass over the index and the records.
     */
    public Map<String, IntegrityReport> verifyIntegrity() {
        return engine.verifyIntegrity();
    }

    /**
     * Folds the write-ahead log into segments now (it also happens by itself as the log grows,
     * after every delete and on close).
     *
     * @throws java.io.UncheckedIOException if writing the segments failed (the log still holds every write)
     */
    public void checkpoint() {
        engine.checkpoint();
    }

    /** What the storage found and decided when this collection opened. */
    public OpenReport openReport() {
        CollectionStorage.OpenReport r = engine.openReport();
        return new OpenReport(r.liveRecords(), r.droppedAsDeleted(), r.droppedAsSuperseded(), r.removedByLogDeletes(),
                new OpenReport.LogRecovery(r.wal().generations(), r.wal().entries(), r.wal().tornBytesDropped(),
                        r.wal().tornFile()),
                r.orphanFilesRemoved(), r.idMapRebuilt(), r.idMapRepairs());
    }

    /**
     * Rebuilds the index from scratch from the live records that no forget or hold hides, then
     * swaps it in. Searches and writes go on against the old index during the build. Costs a
     * full index build.
     *
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void rebuildIndex() {
        engine.rebuildIndex();
    }

    @Override
    public String toString() {
        return "VectorCollection[" + engine.name() + "]";
    }
}
