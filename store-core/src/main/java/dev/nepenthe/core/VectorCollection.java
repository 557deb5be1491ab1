package dev.nepenthe.core;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A named set of records of one dimension and metric, with one index over all of them. Obtained
 * from {@link Nepenthe#createCollection} or {@link Nepenthe#collection}; safe for concurrent use.
 *
 * <p>Writes (upserts, deletes, checkpoints, a forget's cleanup) take turns and are durable
 * (fsynced, under the default {@link Durability#SYNC}) when they return. Reads (search, get, size,
 * ids) never wait for a write: they see every write that returned before they started, a record
 * deleted or forgotten before a search materialises its hits is never returned, and a returned
 * score is the returned record's score. To erase a person or a source with proof, use {@link
 * Nepenthe#forget}; {@link #delete} and {@link #deleteSubject} are plain deletes with no
 * verification and no receipt.
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

    /**
     * The collection's name, dimension, metric, index and provenance policy, fixed at creation.
     *
     * @return the spec
     */
    public CollectionSpec spec() {
        return engine.spec();
    }

    /**
     * The collection's name (also its folder's name).
     *
     * @return the name
     */
    public String name() {
        return engine.name();
    }

    /**
     * Inserts or replaces one record (same tenant and id replaces): {@link #upsertAll} with a batch
     * of one. Costs a log append and an fsync plus one index insertion (and, for a replacement, the
     * index's removal of the old version), and now and then a checkpoint.
     *
     * @param record the record; the store keeps a copy of its own
     * @throws IllegalArgumentException if the record is null or does not fit the collection
     *     (dimension, non-finite values, a squared norm over {@code Float.MAX_VALUE / 8}, sizes)
     * @throws dev.nepenthe.core.forget.ForgottenScopeException if the record falls in a scope a
     *     forget is erasing
     * @throws java.io.UncheckedIOException if writing failed; see {@link #upsertAll} for what was
     *     stored
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void upsert(VectorRecord record) {
        // singletonList, not List.of: a null record gets the batch's clear error, not a bare NPE.
        upsertAll(Collections.singletonList(record));
    }

    /**
     * Inserts or replaces a batch atomically: every record is validated first, and a batch with one
     * bad record stores none of it. Records with text and no vector are embedded first, in one call
     * to the collection's embedder (outside the writer mutex); with a text index, every text is
     * searchable by keyword when this returns. Durable (fsynced) when this returns; one fsync for
     * the whole batch. Waits for other writes (the collection's writer mutex, held across the
     * fsync); searches go on meanwhile. Costs the validation and sealing (AES-GCM) of every record,
     * one log append, one fsync under {@link Durability#SYNC} (shared with concurrent writers), one
     * index insertion per record and one index removal per replaced record. When the log has grown
     * past the store's {@code checkpointBytes}, this call then also folds it into segments (taking
     * the writer mutex again) before returning.
     *
     * @param batch at most 100,000 records, no two with the same tenant and id
     * @throws IllegalArgumentException naming the first bad record by its batch position (a null
     *     record, a duplicate, or a record that does not fit: dimension, non-finite values, a
     *     squared norm over {@code Float.MAX_VALUE / 8} (its scores would overflow), a zero vector
     *     under cosine, blank or oversized strings, text without a vector in a collection that
     *     cannot embed it), or a batch that is too large
     * @throws dev.nepenthe.core.forget.ForgottenScopeException naming the batch position that falls
     *     in a scope being forgotten
     * @throws dev.nepenthe.core.forget.HeldRecordsException if the batch would replace a record a
     *     legal hold keeps: nothing of the batch is stored
     * @throws StoreReadOnlyException if an earlier write failed and the store is read-only
     * @throws java.io.UncheckedIOException if writing failed: the batch was not acknowledged and is
     *     not served, the store is read-only from then on, and its next open keeps the batch whole
     *     or drops it whole (a failed checkpoint after a durable batch does not fail the call: it
     *     makes the store read-only, and the next write says so)
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void upsertAll(List<VectorRecord> batch) {
        writing(
                () -> {
                    engine.upsertAll(batch);
                    return null;
                });
    }

    /**
     * Runs a write; an I/O failure in it, however wrapped (Lucene closes its writer on one and
     * reports the next call as {@code AlreadyClosedException}), makes the store read-only.
     */
    private <T> T writing(Supplier<T> write) {
        try {
            return write.get();
        } catch (RuntimeException e) {
            throw engine.storage().fault().trip(e);
        }
    }

    /**
     * The record with this id in the default tenant; see {@link #get(String, String)}.
     *
     * @param id the record's id
     * @return a copy of the record, or empty when there is none or a forget or hold hides it
     * @throws IllegalStateException if the collection or its store is closed
     */
    public Optional<VectorRecord> get(String id) {
        return get(VectorRecord.DEFAULT_TENANT, id);
    }

    /**
     * The record (tenant, id), unless it is absent or a forget or legal hold hides it. Takes no
     * lock; costs a keyed hash of the id, one id-map lookup and a copy of the record, and for a
     * record with text the read and decryption of its stored copy (the text is kept nowhere else).
     * While the record is being replaced, it returns the old version until the new one is readable.
     *
     * @param tenant the record's tenant
     * @param id the record's id
     * @return a copy of the record, or empty when there is none or a forget or hold hides it
     * @throws IllegalStateException if the collection or its store is closed
     * @throws java.io.UncheckedIOException if the record's stored copy could not be read; a {@link
     *     CorruptFileException} cause names the file whose copy was changed
     */
    public Optional<VectorRecord> get(String tenant, String id) {
        return engine.get(tenant, id);
    }

    /**
     * Deletes one record of the default tenant. See {@link #deleteAll}.
     *
     * @param id the record's id
     * @return whether it existed
     * @throws java.io.UncheckedIOException as {@link #deleteAll} does
     * @throws IllegalStateException if the collection or its store is closed
     */
    public boolean delete(String id) {
        return delete(VectorRecord.DEFAULT_TENANT, id);
    }

    /**
     * Deletes one record. See {@link #deleteAll}.
     *
     * @param tenant the record's tenant
     * @param id the record's id
     * @return whether it existed
     * @throws java.io.UncheckedIOException as {@link #deleteAll} does
     * @throws IllegalStateException if the collection or its store is closed
     */
    public boolean delete(String tenant, String id) {
        return deleteAll(tenant, List.of(id)) == 1;
    }

    /**
     * Deletes records by id within a tenant: removed from the index (physically, by the index's own
     * rules), from every bitmap, and from the record log, which is rewritten without them before
     * this returns. Unknown ids are skipped. A plain delete: no verification, no receipt, and the
     * subjects' keys stay. Holds the writer mutex throughout. Costs an id-map lookup per id, an
     * fsync of the tombstone journal and one of the log, the index's removal (and repair) of each
     * record, and a checkpoint that rewrites the segment files of the buckets that held them (and
     * of any bucket written since the last checkpoint). With no id found it touches no file.
     *
     * @param tenant the records' tenant
     * @param ids the ids to delete; duplicates count once
     * @return how many records were deleted
     * @throws java.io.UncheckedIOException if journaling the delete failed (nothing was deleted),
     *     or if rewriting the files afterwards failed (the records are deleted and no longer
     *     served; the next checkpoint retries the rewrite); the message says which
     * @throws dev.nepenthe.core.forget.HeldRecordsException if a legal hold keeps any of the
     *     records (on their subject or source): nothing is deleted
     * @throws IllegalStateException if the collection or its store is closed
     */
    public int deleteAll(String tenant, List<String> ids) {
        return writing(() -> engine.deleteAll(tenant, ids));
    }

    /**
     * Deletes every record of one subject in one tenant (another tenant's subject with the same
     * name is untouched) and destroys the subject's data key, even when no record is left. A plain
     * delete; {@link Nepenthe#forget} adds verification and a receipt. Only this collection's
     * records and key for the subject are touched; other collections keep theirs. Holds the writer
     * mutex throughout. Costs an fsync of the tombstone journal, one of the log when there were
     * records, the index's removal of each record, a checkpoint that rewrites the subject's segment
     * file (and any bucket written since the last checkpoint) and a rewrite of the whole id-map
     * file (it would keep removed entries' bytes otherwise).
     *
     * @param tenant the subject's tenant
     * @param subject the subject
     * @return how many records were deleted
     * @throws java.io.UncheckedIOException if the delete could not be journaled, or if rewriting
     *     the files afterwards failed (the records are deleted and their key destroyed)
     * @throws dev.nepenthe.core.forget.HeldRecordsException if a legal hold keeps the subject or
     *     any of its records (on their source): nothing is deleted, the key stays
     * @throws IllegalStateException if the collection or its store is closed
     */
    public int deleteSubject(String tenant, String subject) {
        return writing(() -> engine.deleteSubject(tenant, subject));
    }

    /**
     * The k records of the request's tenant that best match it, best first, narrowed by the
     * request's subject and metadata filter: nearest to its vector (or to its text's embedding),
     * best by BM25 over the text index, or both fused ({@link SearchRequest.Mode}). Takes no lock:
     * it runs beside writes and forgets. Costs one index search (see the index's parameters; a
     * hybrid search runs one vector and one keyword search, plus embedding the text when there is
     * no vector) plus, with a filter, one pass over the tenant's records to build the candidate
     * set. Records a forget has marked are left out of the candidates, so they do not take the
     * place of visible ones; when a write or a mark that lands during the search costs it hits, the
     * search runs again, at most three times in all, and the last run's hits are returned.
     *
     * @param request the query
     * @return at most k hits, best first, each holding a copy of its record; fewer when fewer
     *     records qualify, and an empty list when the tenant or subject has no records here
     * @throws IllegalArgumentException if the query vector does not fit the collection (dimension,
     *     non-finite values, a squared norm over {@code Float.MAX_VALUE / 8}, a zero vector under
     *     cosine), or the index refuses a knob in the request's params
     * @throws IllegalStateException if the collection or its store is closed, or the request needs
     *     what the collection lacks: a text index (keyword, hybrid) or an embedder (text without a
     *     vector); the message says which
     */
    public List<SearchHit> search(SearchRequest request) {
        return engine.search(request);
    }

    /**
     * Number of records in all tenants, as last published; O(1), no lock. Records a forget has only
     * marked (BLOCKED, or kept under a legal hold) still count; they leave when the forget's
     * cleanup removes them, before it seals.
     *
     * @return the number of live records
     */
    public int size() {
        return engine.size();
    }

    /**
     * Number of records in one tenant, as last published, counted as {@link #size()} counts; no
     * lock, the cardinality of the tenant's bitmap.
     *
     * @param tenant the tenant
     * @return the number of the tenant's live records, 0 for a tenant with none
     */
    public int size(String tenant) {
        return engine.size(tenant);
    }

    /**
     * Ids of a tenant's records, in no particular order, without those a forget or hold hides. A
     * listing, not a search: it waits for a write in flight, so a record being replaced is listed
     * once. Costs a pass over the tenant's records, under the writer mutex.
     *
     * @param tenant the tenant
     * @return the ids, empty for a tenant with no records
     */
    public List<String> ids(String tenant) {
        return engine.ids(tenant);
    }

    /**
     * The tenants that have at least one live record here, as last published. No lock.
     *
     * @return an immutable set, in no particular order
     * @throws IllegalStateException if the collection or its store is closed
     */
    public Set<String> tenants() {
        return engine.tenants();
    }

    /**
     * The index's structure by record (see {@link IndexView}); writes wait while it is read. Costs
     * a pass over the index's lists or nodes.
     *
     * @return the index's counts and, for IVF-PQ, its lists and training lineage by record
     * @throws IllegalStateException if the collection or its store is closed
     */
    public IndexView describeIndex() {
        return engine.describeIndex();
    }

    /**
     * The index's own integrity check plus the collection's (the index holds exactly the live
     * records, the id map finds each of them, the bitmaps agree with the records), by name. Writes
     * wait while it runs; reads do not. Costs a full pass over the index and the records, with an
     * id-map lookup per record.
     *
     * @return two reports: {@code "index:<kind>"} from the index's own checker and {@code
     *     "collection"}; check {@link IntegrityReport#isClean()} on each
     */
    public Map<String, IntegrityReport> verifyIntegrity() {
        return engine.verifyIntegrity();
    }

    /**
     * Folds the write-ahead log into segments now (it also happens by itself as the log grows,
     * after every delete and on close). Holds the writer mutex; rewrites the segment file of every
     * bucket written since the last checkpoint, commits a new manifest (fsynced) and deletes the
     * log generations it folded.
     *
     * @throws java.io.UncheckedIOException if writing the segments failed (the log still holds
     *     every write)
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void checkpoint() {
        writing(
                () -> {
                    engine.checkpoint();
                    return null;
                });
    }

    /**
     * What the storage found and decided when this collection opened (for one created in this
     * process, what its new, empty folder gave). No lock, no I/O.
     *
     * @return the report
     */
    public OpenReport openReport() {
        CollectionStorage.OpenReport r = engine.openReport();
        return new OpenReport(
                r.liveRecords(),
                r.droppedAsDeleted(),
                r.droppedAsSuperseded(),
                r.removedByLogDeletes(),
                new OpenReport.LogRecovery(
                        r.wal().generations(),
                        r.wal().entries(),
                        r.wal().tornBytesDropped(),
                        r.wal().tornFile()),
                r.orphanFilesRemoved(),
                r.idMapRebuilt(),
                r.idMapRepairs(),
                r.idMapTrusted(),
                engine.indexRecovery(),
                engine.textRecovery());
    }

    /**
     * Rebuilds the index from scratch from the live records that no forget or hold hides, then
     * swaps it in. Searches and writes go on against the old index during the build. Costs a full
     * index build, in parallel on the common fork-join pool, then the writer mutex while the writes
     * that landed meanwhile are applied to the new index and it is swapped in.
     *
     * @throws IllegalStateException if the collection or its store is closed
     */
    public void rebuildIndex() {
        writing(
                () -> {
                    engine.rebuildIndex();
                    return null;
                });
    }

    /**
     * Names the collection, nothing more.
     *
     * @return {@code VectorCollection[name]}
     */
    @Override
    public String toString() {
        return "VectorCollection[" + engine.name() + "]";
    }
}
