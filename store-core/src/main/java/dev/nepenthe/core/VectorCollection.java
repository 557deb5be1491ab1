package dev.nepenthe.core;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.storage.CollectionStorage;
import dev.nepenthe.core.storage.CollectionStorage.Placed;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * A named set of records of one dimension and metric, with one index over all of them.
 * Obtained from {@link Nepenthe}; safe for concurrent use (searches run in parallel, writes
 * take turns).
 *
 * <p>Each record gets an int ordinal; the index and the candidate bitmaps (per tenant, per
 * subject) speak ordinals. A search maps ordinals back to records only while holding the read
 * lock, and only for records live at that moment, so a deleted record is never returned by a
 * search that completes after the delete returned.
 */
public final class VectorCollection {

    private record SubjectKey(String tenant, String subject) {}

    private record Entry(int ordinal, VectorRecord record) {}

    private final CollectionSpec spec;
    private final CollectionStorage storage;
    private final VectorIndex index;
    private final RecordValidator validator;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private final ArrayList<Entry> byOrdinal = new ArrayList<>();
    private final RoaringBitmap freeOrdinals = new RoaringBitmap();
    private final Map<String, RoaringBitmap> byTenant = new HashMap<>();
    private final Map<SubjectKey, RoaringBitmap> bySubject = new HashMap<>();
    private int live;
    private boolean closed;

    /**
     * Opens the collection on its storage: every stored record is validated and indexed
     * before this returns.
     */
    VectorCollection(CollectionSpec spec, VectorIndex index, StorageOpener opener) throws IOException {
        this.spec = spec;
        this.index = index;
        this.validator = new RecordValidator(spec);
        this.storage = opener.open((ordinal, r) -> {
            validator.validate(r, "stored record");
            linkRecord(ordinal, r);
        });
        // Index every stored record; the SPI allows concurrent adds, so a graph index builds
        // on every core (an index that serialises adds internally simply takes turns).
        byOrdinal.parallelStream().filter(java.util.Objects::nonNull)
                .forEach(e -> index.add(e.ordinal(), e.record().vectorUnsafe()));
        index.afterBulkLoad();
        for (int ord = 0; ord < byOrdinal.size(); ord++) {
            if (byOrdinal.get(ord) == null) {
                freeOrdinals.add(ord);
            }
        }
    }

    /** Opens the storage, feeding each stored record to the sink. */
    @FunctionalInterface
    interface StorageOpener {
        CollectionStorage open(CollectionStorage.LoadSink sink) throws IOException;
    }

    public CollectionSpec spec() {
        return spec;
    }

    public String name() {
        return spec.name();
    }

    /** Inserts or replaces one record. */
    public void upsert(VectorRecord record) {
        upsertAll(List.of(record));
    }

    /**
     * Inserts or replaces a batch atomically: every record is validated first, and a batch
     * with one bad record stores none of it. Durable (fsynced) when this returns.
     *
     * @throws IllegalArgumentException naming the first bad record by its batch position
     */
    public void upsertAll(List<VectorRecord> batch) {
        validator.validateBatch(batch);
        lock.writeLock().lock();
        try {
            ensureOpen();
            // 1. Place every record (new ordinals; the versions they replace), 2. make the batch
            //    durable, 3. only then change what searches see.
            List<Placed> placed = new ArrayList<>(batch.size());
            List<Placed> replaced = new ArrayList<>();
            IntIterator free = freeOrdinals.getIntIterator();
            int fresh = Math.max(byOrdinal.size(), storage.nextOrdinal());
            for (VectorRecord r : batch) {
                Entry old = lookup(r.tenant(), r.id());
                if (old != null) {
                    replaced.add(new Placed(old.ordinal(), old.record()));
                }
                placed.add(new Placed(free.hasNext() ? free.next() : fresh++, r));
            }
            storage.put(placed, replaced);
            for (Placed p : replaced) {
                unlink(byOrdinal.get(p.ordinal()));
            }
            for (Placed p : placed) {
                freeOrdinals.remove(p.ordinal());
                link(p.ordinal(), p.record());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': writing the batch failed; nothing was stored", e);
        } finally {
            lock.writeLock().unlock();
        }
        checkpointIfDue();
    }

    private void checkpointIfDue() {
        lock.writeLock().lock();
        try {
            if (!closed) {
                storage.checkpointIfDue();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': the batch is stored (in the write-ahead"
                    + " log) but folding the log into segments failed; the next checkpoint retries", e);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** The live entry for (tenant, id), through the persistent id map. */
    private Entry lookup(String tenant, String id) {
        int ord = storage.ordinalOf(tenant, id);
        if (ord < 0 || ord >= byOrdinal.size()) {
            return null;
        }
        Entry e = byOrdinal.get(ord);
        // The map is keyed by a hash: confirm the entry really is this record.
        return e != null && e.record().tenant().equals(tenant) && e.record().id().equals(id) ? e : null;
    }

    private void link(int ord, VectorRecord r) {
        index.add(ord, r.vectorUnsafe());
        linkRecord(ord, r);
    }

    /** Adds a record to the maps and bitmaps (not the index). */
    private void linkRecord(int ord, VectorRecord r) {
        while (byOrdinal.size() <= ord) {
            byOrdinal.add(null);
        }
        byOrdinal.set(ord, new Entry(ord, r));
        live++;
        byTenant.computeIfAbsent(r.tenant(), t -> new RoaringBitmap()).add(ord);
        if (r.subject() != null) {
            bySubject.computeIfAbsent(new SubjectKey(r.tenant(), r.subject()), s -> new RoaringBitmap()).add(ord);
        }
    }

    private void unlink(Entry e) {
        index.remove(e.ordinal());
        dropFromMaps(e);
    }

    private void dropFromMaps(Entry e) {
        VectorRecord r = e.record();
        byOrdinal.set(e.ordinal(), null);
        freeOrdinals.add(e.ordinal());
        live--;
        removeFrom(byTenant, r.tenant(), e.ordinal());
        if (r.subject() != null) {
            removeFrom(bySubject, new SubjectKey(r.tenant(), r.subject()), e.ordinal());
        }
    }

    private static <K> void removeFrom(Map<K, RoaringBitmap> map, K key, int ord) {
        RoaringBitmap b = map.get(key);
        if (b != null) {
            b.remove(ord);
            if (b.isEmpty()) {
                map.remove(key);
            }
        }
    }

    /** The record with this id in the default tenant. */
    public Optional<VectorRecord> get(String id) {
        return get(VectorRecord.DEFAULT_TENANT, id);
    }

    public Optional<VectorRecord> get(String tenant, String id) {
        lock.readLock().lock();
        try {
            ensureOpen();
            Entry e = lookup(tenant, id);
            return e == null ? Optional.empty() : Optional.of(e.record());
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Deletes one record of the default tenant; returns whether it existed. */
    public boolean delete(String id) {
        return delete(VectorRecord.DEFAULT_TENANT, id);
    }

    public boolean delete(String tenant, String id) {
        return deleteAll(tenant, List.of(id)) == 1;
    }

    /**
     * Deletes records by id within a tenant: removed from the index (physically, by the
     * index's own rules), from every bitmap, and from the record log, which is rewritten
     * without them before this returns. Unknown ids are skipped.
     *
     * @return how many records were deleted
     */
    public int deleteAll(String tenant, List<String> ids) {
        lock.writeLock().lock();
        try {
            ensureOpen();
            List<Entry> doomed = new ArrayList<>();
            RoaringBitmap seen = new RoaringBitmap();
            for (String id : ids) {
                Entry e = lookup(tenant, id);
                if (e != null && seen.checkedAdd(e.ordinal())) {
                    doomed.add(e);
                }
            }
            if (doomed.isEmpty()) {
                return 0;
            }
            try {
                storage.delete(placed(doomed));
            } catch (IOException ex) {
                throw new UncheckedIOException("collection '" + spec.name() + "': deleting failed; nothing was deleted", ex);
            }
            int n = removeEntries(doomed);
            purgeDeleted();
            return n;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Deletes every record of one subject in one tenant (another tenant's subject with the same
     * name is untouched). This is a plain delete; the forget protocol with verification and
     * receipts is built on top of it.
     *
     * @return how many records were deleted
     */
    public int deleteSubject(String tenant, String subject) {
        lock.writeLock().lock();
        try {
            ensureOpen();
            RoaringBitmap ords = bySubject.get(new SubjectKey(tenant, subject));
            List<Entry> doomed = new ArrayList<>();
            if (ords != null) {
                ords.forEach((int ord) -> doomed.add(byOrdinal.get(ord)));
            }
            try {
                // Even with no live records the scope's key is destroyed: it may still decrypt
                // copies in snapshots or backups.
                storage.dropSubject(tenant, subject, placed(doomed));
            } catch (IOException ex) {
                throw new UncheckedIOException("collection '" + spec.name() + "': deleting the subject failed", ex);
            }
            int n = removeEntries(doomed);
            purgeDeleted();
            return n;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Called under the write lock once deleted records are out of the index and maps. */
    private void purgeDeleted() {
        try {
            storage.purgeDeleted();
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': deleted (journaled, and no longer"
                    + " served), but rewriting the live files without it failed; the next checkpoint retries", e);
        }
    }

    private static List<Placed> placed(List<Entry> entries) {
        List<Placed> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            out.add(new Placed(e.ordinal(), e.record()));
        }
        return out;
    }

    /** Drops entries the storage has already deleted from the index and the maps. */
    private int removeEntries(List<Entry> doomed) {
        if (doomed.isEmpty()) {
            return 0;
        }
        int[] ords = new int[doomed.size()];
        for (int i = 0; i < ords.length; i++) {
            ords[i] = doomed.get(i).ordinal();
        }
        // One batch call lets the index share repair work across the removals.
        index.removeAll(ords);
        for (Entry e : doomed) {
            dropFromMaps(e);
        }
        return doomed.size();
    }

    /**
     * The k records of the request's tenant closest to its vector, best first, narrowed by the
     * request's subject and metadata filter.
     */
    public List<SearchHit> search(SearchRequest request) {
        validator.checkVector(request.vector(), "query");
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap accept = candidates(request);
            if (accept != null && accept.isEmpty()) {
                return List.of();
            }
            SearchResult result = index.search(request.vector(), request.k(), accept, request.params());
            List<SearchHit> hits = new ArrayList<>(result.size());
            for (int i = 0; i < result.size(); i++) {
                int ord = result.ordinals()[i];
                Entry e = ord < byOrdinal.size() ? byOrdinal.get(ord) : null;
                // Materialise only records live now and inside the request's scope.
                if (e != null && (accept == null || accept.contains(ord))) {
                    hits.add(new SearchHit(e.record(), result.scores()[i]));
                }
            }
            return hits;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Null means "every live ordinal"; otherwise the ordinals the index may return. */
    private RoaringBitmap candidates(SearchRequest request) {
        RoaringBitmap tenant = byTenant.get(request.tenant());
        if (tenant == null) {
            return new RoaringBitmap();
        }
        RoaringBitmap accept = tenant;
        if (request.subject() != null) {
            RoaringBitmap s = bySubject.get(new SubjectKey(request.tenant(), request.subject()));
            if (s == null) {
                return new RoaringBitmap();
            }
            accept = s;
        }
        if (request.filter() != null) {
            RoaringBitmap matching = new RoaringBitmap();
            IntIterator it = accept.getIntIterator();
            while (it.hasNext()) {
                int ord = it.next();
                if (request.filter().test(byOrdinal.get(ord).record().metadata())) {
                    matching.add(ord);
                }
            }
            accept = matching;
        }
        // Every live record qualifies: let the index skip the per-candidate check.
        return accept.getCardinality() == live ? null : accept;
    }

    /** Number of records in all tenants. */
    public int size() {
        lock.readLock().lock();
        try {
            return live;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Number of records in one tenant. */
    public int size(String tenant) {
        lock.readLock().lock();
        try {
            RoaringBitmap b = byTenant.get(tenant);
            return b == null ? 0 : b.getCardinality();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Ids of a tenant's records, in no particular order. */
    public List<String> ids(String tenant) {
        lock.readLock().lock();
        try {
            RoaringBitmap b = byTenant.get(tenant);
            List<String> out = new ArrayList<>();
            if (b != null) {
                b.forEach((int ord) -> out.add(byOrdinal.get(ord).record().id()));
            }
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The index's own integrity check plus the collection's: the index holds exactly the live
     * ordinals, and the bitmaps agree with the records.
     */
    public Map<String, IntegrityReport> verifyIntegrity() {
        lock.readLock().lock();
        try {
            Map<String, IntegrityReport> out = new LinkedHashMap<>();
            out.put("index:" + index.kind(), index.verifyIntegrity());
            IntegrityReport.Builder r = IntegrityReport.builder("collection:" + spec.name())
                    .expect("index-size-mismatch").expect("live-record-missing-from-index")
                    .expect("bitmap-mismatch");
            if (index.size() != live || storage.size() != live) {
                r.violation("index-size-mismatch", "index holds " + index.size() + ", storage " + storage.size()
                        + ", collection " + live);
            }
            long tenantBits = 0;
            for (RoaringBitmap b : byTenant.values()) {
                tenantBits += b.getCardinality();
            }
            if (tenantBits != live) {
                r.violation("bitmap-mismatch", "tenant bitmaps hold " + tenantBits + ", collection " + live);
            }
            for (Entry e : byOrdinal) {
                if (e != null && !index.contains(e.ordinal())) {
                    r.violation("live-record-missing-from-index", "ordinal " + e.ordinal());
                }
                if (e != null && lookup(e.record().tenant(), e.record().id()) != e) {
                    r.violation("id-map-mismatch", "ordinal " + e.ordinal());
                }
            }
            r.expect("id-map-mismatch");
            r.checked("records", live).checked("tenants", byTenant.size());
            out.put("collection", r.build());
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Folds the write-ahead log into segments now (it also happens by itself as the log grows,
     * after every delete and on close).
     */
    public void checkpoint() {
        lock.writeLock().lock();
        try {
            ensureOpen();
            storage.checkpoint(true);
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': checkpoint failed", e);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** What the storage found when this collection opened (replayed log, dropped records). */
    public CollectionStorage.OpenReport openReport() {
        return storage.openReport();
    }

    /**
     * Copies a consistent image of the collection's data files into {@code target}. Writers
     * wait while it runs; searches go on.
     */
    void snapshotTo(java.nio.file.Path target) throws IOException {
        lock.writeLock().lock();
        try {
            ensureOpen();
            storage.checkpoint(true);
            // Downgrade: searches may run while the immutable files are copied.
            lock.readLock().lock();
        } finally {
            lock.writeLock().unlock();
        }
        try {
            storage.snapshotTo(target);
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Destroys every key of this collection (it is being dropped). */
    void destroyAllKeys() throws IOException {
        lock.writeLock().lock();
        try {
            storage.destroyAllKeys();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** The index behind this collection, for integrity checks and tools. */
    VectorIndex index() {
        return index;
    }

    void close() throws IOException {
        lock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            try {
                storage.close();
            } finally {
                index.close();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("collection '" + spec.name() + "' is closed (its store was closed or it was dropped)");
        }
    }
}
