package dev.nepenthe.core;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.storage.RecordLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

    private record Key(String tenant, String id) {}

    private record SubjectKey(String tenant, String subject) {}

    private record Entry(int ordinal, VectorRecord record) {}

    private final CollectionSpec spec;
    private final RecordLog log;
    private final VectorIndex index;
    private final RecordValidator validator;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private final Map<Key, Entry> byKey = new HashMap<>();
    private final ArrayList<Entry> byOrdinal = new ArrayList<>();
    private final RoaringBitmap freeOrdinals = new RoaringBitmap();
    private final Map<String, RoaringBitmap> byTenant = new HashMap<>();
    private final Map<SubjectKey, RoaringBitmap> bySubject = new HashMap<>();
    /** Superseded record versions still in the log; {@link #compact()} removes them. */
    private long supersededInLog;
    private boolean closed;

    VectorCollection(CollectionSpec spec, RecordLog log, VectorIndex index) throws IOException {
        this.spec = spec;
        this.log = log;
        this.index = index;
        this.validator = new RecordValidator(spec);
        List<VectorRecord> replayed = log.replay();
        for (VectorRecord r : replayed) {
            validator.validate(r, "stored record");
            if (byKey.containsKey(new Key(r.tenant(), r.id()))) {
                supersededInLog++;
            }
            put(r);
        }
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
            log.append(batch);
            for (VectorRecord r : batch) {
                if (byKey.containsKey(new Key(r.tenant(), r.id()))) {
                    supersededInLog++;
                }
                put(r);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': writing the batch failed; nothing was stored", e);
        } finally {
            lock.writeLock().unlock();
        }
    }

    private void put(VectorRecord r) {
        Key key = new Key(r.tenant(), r.id());
        Entry old = byKey.get(key);
        if (old != null) {
            unlink(old);
        }
        int ord = freeOrdinals.isEmpty() ? byOrdinal.size() : freeOrdinals.first();
        index.add(ord, r.vectorUnsafe());
        if (ord == byOrdinal.size()) {
            byOrdinal.add(null);
        } else {
            freeOrdinals.remove(ord);
        }
        Entry e = new Entry(ord, r);
        byOrdinal.set(ord, e);
        byKey.put(key, e);
        byTenant.computeIfAbsent(r.tenant(), t -> new RoaringBitmap()).add(ord);
        if (r.subject() != null) {
            bySubject.computeIfAbsent(new SubjectKey(r.tenant(), r.subject()), s -> new RoaringBitmap()).add(ord);
        }
    }

    private void unlink(Entry e) {
        VectorRecord r = e.record();
        index.remove(e.ordinal());
        byOrdinal.set(e.ordinal(), null);
        freeOrdinals.add(e.ordinal());
        byKey.remove(new Key(r.tenant(), r.id()));
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
            Entry e = byKey.get(new Key(tenant, id));
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
            for (String id : ids) {
                Entry e = byKey.get(new Key(tenant, id));
                if (e != null && !doomed.contains(e)) {
                    doomed.add(e);
                }
            }
            return removeEntries(doomed);
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
            if (ords == null) {
                return 0;
            }
            List<Entry> doomed = new ArrayList<>();
            ords.forEach((int ord) -> doomed.add(byOrdinal.get(ord)));
            return removeEntries(doomed);
        } finally {
            lock.writeLock().unlock();
        }
    }

    private int removeEntries(List<Entry> doomed) {
        if (doomed.isEmpty()) {
            return 0;
        }
        // 1. Rewrite the log without the records first: if that fails nothing changes, and once it
        //    succeeds a restart cannot bring them back. 2. Then drop them from memory and the index.
        Set<Entry> gone = Collections.newSetFromMap(new IdentityHashMap<>());
        gone.addAll(doomed);
        try {
            log.rewrite(liveRecordsExcept(gone));
        } catch (IOException ex) {
            throw new UncheckedIOException("collection '" + spec.name() + "': rewriting the record log failed;"
                    + " nothing was deleted", ex);
        }
        supersededInLog = 0;
        int[] ords = new int[doomed.size()];
        for (int i = 0; i < ords.length; i++) {
            ords[i] = doomed.get(i).ordinal();
        }
        // One batch call lets the index share repair work across the removals.
        index.removeAll(ords);
        for (Entry e : doomed) {
            VectorRecord r = e.record();
            byOrdinal.set(e.ordinal(), null);
            freeOrdinals.add(e.ordinal());
            byKey.remove(new Key(r.tenant(), r.id()));
            removeFrom(byTenant, r.tenant(), e.ordinal());
            if (r.subject() != null) {
                removeFrom(bySubject, new SubjectKey(r.tenant(), r.subject()), e.ordinal());
            }
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
        return accept.getCardinality() == byKey.size() ? null : accept;
    }

    /** Number of records in all tenants. */
    public int size() {
        lock.readLock().lock();
        try {
            return byKey.size();
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
            if (index.size() != byKey.size()) {
                r.violation("index-size-mismatch", "index holds " + index.size() + ", collection " + byKey.size());
            }
            long tenantBits = 0;
            for (RoaringBitmap b : byTenant.values()) {
                tenantBits += b.getCardinality();
            }
            if (tenantBits != byKey.size()) {
                r.violation("bitmap-mismatch", "tenant bitmaps hold " + tenantBits + ", collection " + byKey.size());
            }
            for (Entry e : byKey.values()) {
                if (!index.contains(e.ordinal())) {
                    r.violation("live-record-missing-from-index", "ordinal " + e.ordinal());
                }
            }
            r.checked("records", byKey.size()).checked("tenants", byTenant.size());
            out.put("collection", r.build());
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Rewrites the record log without superseded versions. */
    public void compact() {
        lock.writeLock().lock();
        try {
            ensureOpen();
            log.rewrite(liveRecordsExcept(Set.of()));
            supersededInLog = 0;
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': compaction failed", e);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Superseded record versions the log still holds (0 after {@link #compact()}). */
    public long supersededInLog() {
        lock.readLock().lock();
        try {
            return supersededInLog;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Live records in ordinal order, leaving out {@code except} (compared by identity). */
    private List<VectorRecord> liveRecordsExcept(Set<Entry> except) {
        List<VectorRecord> live = new ArrayList<>(byKey.size());
        for (Entry e : byOrdinal) {
            if (e != null && !except.contains(e)) {
                live.add(e.record());
            }
        }
        return live;
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
            if (supersededInLog > 0) {
                log.rewrite(liveRecordsExcept(Set.of()));
            }
            closed = true;
            log.close();
            index.close();
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
