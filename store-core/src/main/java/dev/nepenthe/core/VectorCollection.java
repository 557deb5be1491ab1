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
import java.util.function.Predicate;
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
    private final String id;
    private final CollectionStorage storage;
    private final java.util.function.Supplier<VectorIndex> indexFactory;
    private VectorIndex index;
    private final RecordValidator validator;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    private final ArrayList<Entry> byOrdinal = new ArrayList<>();
    private final RoaringBitmap freeOrdinals = new RoaringBitmap();
    private final Map<String, RoaringBitmap> byTenant = new HashMap<>();
    private final Map<SubjectKey, RoaringBitmap> bySubject = new HashMap<>();
    private int live;
    private boolean closed;

    /**
     * Tests hold a search here, between the index search and materialisation, to show that a
     * forget marked meanwhile still keeps its records out of the result. Null in production.
     */
    static volatile Runnable afterIndexSearch;

    /** Refuses writes that fall in a forgotten scope; set by the store once its protocol is up. */
    private volatile WriteFence fence = WriteFence.NONE;
    /**
     * Ordinals no read may return: records marked by a forget that has not removed them yet, or
     * kept under a legal hold. Published whole (never mutated after publication) so a search can
     * check it at materialisation without a lock; a mark does not wait for running searches.
     */
    private volatile RoaringBitmap blocked = new RoaringBitmap();
    private final Map<String, RoaringBitmap> blockedByOperation = new HashMap<>();

    /**
     * Opens the collection on its storage: every stored record is validated and indexed
     * before this returns.
     */
    VectorCollection(CollectionSpec spec, String id, java.util.function.Supplier<VectorIndex> indexFactory,
            StorageOpener opener) throws IOException {
        this.spec = spec;
        this.id = id;
        this.indexFactory = indexFactory;
        this.index = indexFactory.get();
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

    /** The collection's random incarnation id (a dropped and re-created collection gets a new one). */
    String id() {
        return id;
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
            // Under the write lock: a forget's mark either sees this batch (and blocks it) or
            // this check sees the mark's fence.
            fence.check(spec.name(), batch);
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
            return e == null || blocked.contains(e.ordinal()) ? Optional.empty() : Optional.of(e.record());
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
            return deleteEntries(doomed);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Deletes live entries (caller holds the write lock): journal and log first, then the index
     * and the maps, then the live files are rewritten without them.
     */
    private int deleteEntries(List<Entry> doomed) {
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
            // Records a forget has marked are left out of the candidates the index sees, so a
            // search still finds k visible records. A mark that lands while this search runs is
            // caught at materialisation; if it hid any of the hits, the search runs again
            // without them (bounded: marks are rare, and each retry sees every earlier one).
            for (int attempt = 1; ; attempt++) {
                RoaringBitmap hidden = blocked;
                RoaringBitmap accept = candidates(request, hidden);
                if (accept != null && accept.isEmpty()) {
                    return List.of();
                }
                SearchResult result = index.search(request.vector(), request.k(), accept, request.params());
                Runnable pause = afterIndexSearch;
                if (pause != null) {
                    pause.run();
                }
                // The volatile read sees every mark that returned before this point.
                RoaringBitmap nowHidden = blocked;
                List<SearchHit> hits = new ArrayList<>(result.size());
                boolean hidByNewMark = false;
                for (int i = 0; i < result.size(); i++) {
                    int ord = result.ordinals()[i];
                    Entry e = ord < byOrdinal.size() ? byOrdinal.get(ord) : null;
                    if (e == null || (accept != null && !accept.contains(ord))) {
                        continue;
                    }
                    if (nowHidden.contains(ord)) {
                        hidByNewMark = true;
                        continue;
                    }
                    hits.add(new SearchHit(e.record(), result.scores()[i]));
                }
                if (!hidByNewMark || attempt == 3) {
                    return hits;
                }
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Null means "every live ordinal"; otherwise the ordinals the index may return. */
    private RoaringBitmap candidates(SearchRequest request, RoaringBitmap hidden) {
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
        if (!hidden.isEmpty()) {
            accept = RoaringBitmap.andNot(accept, hidden);
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
                RoaringBitmap hidden = blocked;
                b.forEach((int ord) -> {
                    if (!hidden.contains(ord)) {
                        out.add(byOrdinal.get(ord).record().id());
                    }
                });
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
            // A rebuilt index leaves out records a forget or hold blocks; every other live
            // record must be in it, and nothing else.
            RoaringBitmap hidden = blocked;
            int indexed = 0;
            for (Entry e : byOrdinal) {
                if (e != null && index.contains(e.ordinal())) {
                    indexed++;
                }
            }
            if (index.size() != indexed || storage.size() != live) {
                r.violation("index-size-mismatch", "index holds " + index.size() + " (" + indexed + " of them live), storage "
                        + storage.size() + ", collection " + live);
            }
            long tenantBits = 0;
            for (RoaringBitmap b : byTenant.values()) {
                tenantBits += b.getCardinality();
            }
            if (tenantBits != live) {
                r.violation("bitmap-mismatch", "tenant bitmaps hold " + tenantBits + ", collection " + live);
            }
            for (Entry e : byOrdinal) {
                if (e != null && !index.contains(e.ordinal()) && !hidden.contains(e.ordinal())) {
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

    // ---- the forget protocol's hooks (package-private: driven by ForgetProtocol) -----------

    /** Checks every write batch against the scopes of forget operations. */
    interface WriteFence {
        WriteFence NONE = (collection, batch) -> {};

        /** @throws ForgottenScopeException naming the batch position and the operation */
        void check(String collection, List<VectorRecord> batch);
    }

    void setFence(WriteFence f) {
        this.fence = f;
    }

    /** Records of a tenant a scope names, from the subject's bitmap when it is a subject scope. */
    private RoaringBitmap scopeOrdinals(String tenant, Predicate<VectorRecord> inScope, String subject) {
        RoaringBitmap src = subject != null ? bySubject.get(new SubjectKey(tenant, subject)) : byTenant.get(tenant);
        RoaringBitmap out = new RoaringBitmap();
        if (src != null) {
            src.forEach((int ord) -> {
                if (inScope.test(byOrdinal.get(ord).record())) {
                    out.add(ord);
                }
            });
        }
        return out;
    }

    /**
     * The mark: from the moment this returns no read returns a record in scope, including
     * searches already running (they check at materialisation). Takes only the read lock, so it
     * waits for a writer but never for searches.
     *
     * @param subject the subject of a subject scope (a faster lookup), else null
     * @return how many records were blocked
     */
    int block(String operation, String tenant, Predicate<VectorRecord> inScope, String subject) {
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap mine = scopeOrdinals(tenant, inScope, subject);
            synchronized (blockedByOperation) {
                blockedByOperation.merge(operation, mine, (a, b) -> RoaringBitmap.or(a, b));
                publishBlocked();
            }
            return mine.getCardinality();
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Lifts an operation's block (its records are gone, or it ended). */
    void unblock(String operation) {
        synchronized (blockedByOperation) {
            if (blockedByOperation.remove(operation) != null) {
                publishBlocked();
            }
        }
    }

    private void publishBlocked() {
        RoaringBitmap all = new RoaringBitmap();
        blockedByOperation.values().forEach(all::or);
        blocked = all;
    }

    /** Live records a scope names (blocked ones included): for hold checks and verification. */
    List<VectorRecord> recordsInScope(String tenant, Predicate<VectorRecord> inScope, String subject) {
        lock.readLock().lock();
        try {
            ensureOpen();
            List<VectorRecord> out = new ArrayList<>();
            scopeOrdinals(tenant, inScope, subject).forEach((int ord) -> out.add(byOrdinal.get(ord).record()));
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Whether (tenant, id) is live, blocked or not: one id-map lookup. */
    boolean isLive(String tenant, String id) {
        lock.readLock().lock();
        try {
            return lookup(tenant, id) != null;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** A record the cleanup removed: its id, ordinal, version and a copy of its vector (the probe). */
    record Removed(VectorRecord record, int ordinal, long version) {}

    /** What a cleanup did in this collection. */
    record Cleanup(List<Removed> removed, List<dev.nepenthe.core.forget.Suspect> heldForRegeneration) {}

    /** Called with the records about to be removed, under the write lock, before anything is deleted. */
    @FunctionalInterface
    interface BeforeRemoval {
        void accept(List<Removed> doomed) throws IOException;
    }

    /**
     * The cleanup: resolves the scope and its provenance closure (records whose
     * {@code derivedFrom} names a record in scope, transitively, within the tenant), hands the
     * records to {@code before} (the protocol saves its probe vectors durably), then removes
     * them from the index, the maps and the storage files, and rebuilds the id map file. With
     * {@code cascade} false, derived records are not removed but blocked and returned as
     * regeneration-required.
     */
    Cleanup purge(String operation, String tenant, Predicate<VectorRecord> inScope, String subject, boolean cascade,
            BeforeRemoval before) throws IOException {
        // 1. Resolve under the read lock (searches go on). The set cannot grow meanwhile: writes
        //    in scope are refused by the fence, and records deriving from the scope are too.
        List<Entry> entries = new ArrayList<>();
        List<Removed> removed = new ArrayList<>();
        List<dev.nepenthe.core.forget.Suspect> held = new ArrayList<>();
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap doomed = scopeOrdinals(tenant, inScope, subject);
            RoaringBitmap derivedHeld = new RoaringBitmap();
            java.util.Set<String> reached = new java.util.HashSet<>();
            doomed.forEach((int ord) -> reached.add(byOrdinal.get(ord).record().id()));
            // Provenance closure: a fixpoint over the tenant's records that name sources.
            List<Entry> deriving = new ArrayList<>();
            RoaringBitmap tenantOrds = byTenant.get(tenant);
            if (tenantOrds != null) {
                tenantOrds.forEach((int ord) -> {
                    Entry e = byOrdinal.get(ord);
                    if (!e.record().derivedFrom().isEmpty()) {
                        deriving.add(e);
                    }
                });
            }
            boolean grew = true;
            while (grew) {
                grew = false;
                for (Entry e : deriving) {
                    int ord = e.ordinal();
                    if (doomed.contains(ord) || derivedHeld.contains(ord)) {
                        continue;
                    }
                    for (String src : e.record().derivedFrom()) {
                        if (reached.contains(src)) {
                            (cascade ? doomed : derivedHeld).add(ord);
                            reached.add(e.record().id());
                            grew = true;
                            break;
                        }
                    }
                }
            }
            derivedHeld.forEach((int ord) -> {
                VectorRecord r = byOrdinal.get(ord).record();
                List<String> surviving = r.derivedFrom().stream().filter(id -> !reached.contains(id)).toList();
                String forgottenSource = r.derivedFrom().stream().filter(reached::contains).findFirst().orElse("");
                held.add(new dev.nepenthe.core.forget.Suspect("regeneration-required", spec.name(), r.id(), Double.NaN,
                        forgottenSource + (surviving.isEmpty() ? "" : "; surviving sources: " + String.join(",", surviving))));
            });
            if (!derivedHeld.isEmpty()) {
                synchronized (blockedByOperation) {
                    blockedByOperation.merge(operation, derivedHeld, (a, b) -> RoaringBitmap.or(a, b));
                    publishBlocked();
                }
            }
            doomed.forEach((int ord) -> {
                Entry e = byOrdinal.get(ord);
                entries.add(e);
                removed.add(new Removed(e.record(), ord, storage.versionOf(ord)));
            });
        } finally {
            lock.readLock().unlock();
        }
        // 2. The caller saves the probe vectors durably before anything is deleted.
        before.accept(removed);
        if (entries.isEmpty()) {
            return new Cleanup(removed, held);
        }
        // 3. Drop them from what reads see, under the write lock: in-memory work only, so
        //    searches wait microseconds, not for an fsync.
        lock.writeLock().lock();
        boolean readLocked = false;
        try {
            ensureOpen();
            List<Entry> current = new ArrayList<>(entries.size());
            for (Entry e : entries) {
                if (byOrdinal.get(e.ordinal()) == e) {
                    current.add(e);
                }
            }
            int[] ords = new int[current.size()];
            RoaringBitmap freed = new RoaringBitmap();
            for (int i = 0; i < ords.length; i++) {
                ords[i] = current.get(i).ordinal();
                freed.add(ords[i]);
                dropFromMaps(current.get(i));
            }
            synchronized (blockedByOperation) {
                // The freed ordinals will be reused by new records, which must not be hidden.
                for (RoaringBitmap b : blockedByOperation.values()) {
                    b.andNot(freed);
                }
                publishBlocked();
            }
            // 4. Downgrade: searches run while the deletion is journaled, the index repairs
            //    itself and the storage files are rewritten; writers (which could reuse the freed
            //    ordinals, or touch the storage) still wait. A crash before the journal entry is
            //    safe: the records were blocked, and the resumed operation deletes them again.
            lock.readLock().lock();
            readLocked = true;
            lock.writeLock().unlock();
            // Two forget threads (the worker and an operator's override) may both be here under
            // the read lock: the storage takes them one at a time.
            synchronized (storage) {
                storage.delete(placed(current));
                // One batch call lets the index share repair work across the removals.
                index.removeAll(ords);
                storage.purgeDeleted();
            }
            return new Cleanup(removed, held);
        } finally {
            if (readLocked) {
                lock.readLock().unlock();
            } else {
                lock.writeLock().unlock();
            }
        }
    }

    /**
     * Runs the index's own residue purge (an IVF-PQ retrain when a removed vector trained it).
     * Under the read lock: writers wait, searches do not (an index that retrains computes aside
     * and swaps, see {@link VectorIndex#purgeResidue()}); the storage monitor keeps it apart from
     * another forget's purge.
     */
    boolean purgeIndexResidue() {
        lock.readLock().lock();
        try {
            ensureOpen();
            synchronized (storage) {
                boolean had = index.hasResidue();
                if (had) {
                    index.purgeResidue();
                }
                return had;
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The index surface's proof: the index's integrity checker is clean, none of the removed
     * ordinals is indexed unless a different record has reused it, and no residue is left.
     */
    dev.nepenthe.core.forget.SurfaceOutcome verifyIndex(List<Removed> removed, long purged) {
        lock.readLock().lock();
        try {
            ensureOpen();
            IntegrityReport report = index.verifyIntegrity();
            List<String> problems = new ArrayList<>();
            if (!report.isClean()) {
                problems.add("integrity checker: " + report.violations());
            }
            int stillIndexed = 0;
            for (Removed r : removed) {
                Entry now = r.ordinal() < byOrdinal.size() ? byOrdinal.get(r.ordinal()) : null;
                boolean reused = now != null && !(now.record().tenant().equals(r.record().tenant())
                        && now.record().id().equals(r.record().id()));
                if (index.contains(r.ordinal()) && !reused) {
                    stillIndexed++;
                }
            }
            if (stillIndexed > 0) {
                problems.add(stillIndexed + " forgotten ordinals are still in the index");
            }
            if (index.hasResidue()) {
                problems.add("the index reports residue of removed vectors (e.g. codebooks trained on them)");
            }
            long checked = report.checked().values().stream().mapToLong(Long::longValue).sum() + removed.size();
            return new dev.nepenthe.core.forget.SurfaceOutcome("collection:" + spec.name() + "/index:" + index.kind(),
                    dev.nepenthe.core.forget.ErasureClass.PHYSICAL, purged, checked, problems, index.erasureResidual());
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The index surface of a collection a forget removed nothing from: nothing to prove there
     * beyond the absence of residue, so the (whole-index) integrity checker does not run.
     */
    dev.nepenthe.core.forget.SurfaceOutcome untouchedIndex() {
        lock.readLock().lock();
        try {
            ensureOpen();
            List<String> problems = index.hasResidue()
                    ? List.of("the index reports residue of removed vectors (e.g. codebooks trained on them)") : List.of();
            return new dev.nepenthe.core.forget.SurfaceOutcome("collection:" + spec.name() + "/index:" + index.kind(),
                    dev.nepenthe.core.forget.ErasureClass.PHYSICAL, 0, 0, problems,
                    "nothing in scope was stored here; the index was not re-checked");
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The storage surface's proof: a byte scan of the files that could hold the removed records
     * (their buckets' segments, the log, the id map) finds none of their keyed hashes, and no
     * id resolves any more.
     */
    dev.nepenthe.core.forget.SurfaceOutcome verifyStorage(List<Removed> removed) throws IOException {
        lock.readLock().lock();
        try {
            ensureOpen();
            List<VectorRecord> records = removed.stream().map(Removed::record).toList();
            CollectionStorage.Residue residue = storage.scanForCopies(records);
            List<String> problems = new ArrayList<>();
            if (residue.occurrences() > 0) {
                problems.add(residue.occurrences() + " copies of forgotten records' hashes in " + residue.files());
            }
            long addressable = records.stream().filter(r -> lookup(r.tenant(), r.id()) != null).count();
            if (addressable > 0) {
                problems.add(addressable + " forgotten ids still resolve to a live record");
            }
            return new dev.nepenthe.core.forget.SurfaceOutcome("collection:" + spec.name() + "/storage",
                    dev.nepenthe.core.forget.ErasureClass.PHYSICAL, removed.size(), residue.filesScanned(), problems,
                    null);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The negative-space probe: every unblocked record of the tenant whose vector has cosine
     * similarity at or above {@code threshold} with a forgotten vector. Exact, over every
     * record (an approximate search could miss the one residue that matters); parallel over
     * records, each record's vector compared with every probe while it is in cache.
     *
     * @return suspects, best score first, at most one per surviving record
     */
    List<dev.nepenthe.core.forget.Suspect> probe(String tenant, List<Removed> probes, double threshold) {
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap tenantOrds = byTenant.get(tenant);
            if (tenantOrds == null || probes.isEmpty()) {
                return List.of();
            }
            List<Removed> same = probes.stream().filter(p -> p.record().dimension() == spec.dimension()).toList();
            if (same.isEmpty()) {
                return List.of();
            }
            var kernels = dev.nepenthe.core.vector.Kernels.get();
            int dim = spec.dimension();
            // The unit-length probes in one block: each record is scored against all of them in
            // one batch call while its vector is in cache.
            float[] probeBlock = new float[same.size() * dim];
            for (int i = 0; i < same.size(); i++) {
                System.arraycopy(dev.nepenthe.core.Metric.COSINE.prepare(same.get(i).record().vectorUnsafe()), 0,
                        probeBlock, i * dim, dim);
            }
            int[] ords = RoaringBitmap.andNot(tenantOrds, blocked).toArray();
            java.util.concurrent.ConcurrentLinkedQueue<dev.nepenthe.core.forget.Suspect> found =
                    new java.util.concurrent.ConcurrentLinkedQueue<>();
            ThreadLocal<float[]> scores = ThreadLocal.withInitial(() -> new float[same.size()]);
            // Parallel only where a core is left over for searches: on two cores the probe runs
            // on the forget worker alone (measured: search p99 while forgets run, BENCHMARKS.md).
            java.util.stream.IntStream range = java.util.stream.IntStream.range(0, ords.length);
            if (Runtime.getRuntime().availableProcessors() > 2) {
                range = range.parallel();
            }
            range.forEach(i -> {
                VectorRecord r = byOrdinal.get(ords[i]).record();
                float[] v = r.vectorUnsafe();
                float norm = (float) Math.sqrt(kernels.dot(v, v));
                if (norm == 0) {
                    return;
                }
                float[] out = scores.get();
                kernels.dotBatch(v, probeBlock, 0, out.length, dim, out, 0);
                int bestProbe = 0;
                for (int p = 1; p < out.length; p++) {
                    if (out[p] > out[bestProbe]) {
                        bestProbe = p;
                    }
                }
                float best = out[bestProbe] / norm;
                if (best >= threshold) {
                    found.add(new dev.nepenthe.core.forget.Suspect("vector-residue", spec.name(), r.id(), best,
                            same.get(bestProbe).record().id()));
                }
            });
            List<dev.nepenthe.core.forget.Suspect> out = new ArrayList<>(found);
            out.sort(java.util.Comparator.comparingDouble(dev.nepenthe.core.forget.Suspect::score).reversed());
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Join keys: unblocked records of the tenant whose metadata holds one of {@code names} (the
     * forgotten subject, forgotten record ids) as a string value, ignoring case and surrounding
     * blanks, or whose {@code derivedFrom} still names a forgotten record.
     */
    List<dev.nepenthe.core.forget.Suspect> joinKeys(String tenant, java.util.Set<String> names,
            java.util.Set<String> forgottenIds) {
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap tenantOrds = byTenant.get(tenant);
            if (tenantOrds == null) {
                return List.of();
            }
            java.util.Set<String> folded = new java.util.HashSet<>();
            names.forEach(n -> folded.add(n.strip().toLowerCase(java.util.Locale.ROOT)));
            List<dev.nepenthe.core.forget.Suspect> out = new ArrayList<>();
            RoaringBitmap.andNot(tenantOrds, blocked).forEach((int ord) -> {
                VectorRecord r = byOrdinal.get(ord).record();
                for (Map.Entry<String, Object> m : r.metadata().entrySet()) {
                    if (m.getValue() instanceof String sv && folded.contains(sv.strip().toLowerCase(java.util.Locale.ROOT))) {
                        out.add(new dev.nepenthe.core.forget.Suspect("join-key", spec.name(), r.id(), Double.NaN,
                                "metadata key " + m.getKey()));
                        return;
                    }
                }
                for (String src : r.derivedFrom()) {
                    if (forgottenIds.contains(src)) {
                        out.add(new dev.nepenthe.core.forget.Suspect("join-key", spec.name(), r.id(), Double.NaN,
                                "derivedFrom"));
                        return;
                    }
                }
            });
            return out;
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Destroys the data key of (tenant, subject) in this collection and journals the drop, so
     * every copy of its ciphertext anywhere becomes unreadable. Returns true once the key is gone.
     */
    boolean destroySubjectKey(String tenant, String subject) throws IOException {
        // The read lock keeps writers (the storage's other users) out but lets searches run
        // through the journal and keystore fsyncs.
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap left = bySubject.get(new SubjectKey(tenant, subject));
            if (left != null && !left.isEmpty()) {
                throw new IllegalStateException("collection '" + spec.name() + "': " + left.getCardinality()
                        + " records of the scope are still live; the key is not destroyed");
            }
            synchronized (storage) {
                storage.destroySubjectKey(tenant, subject);
                return !storage.hasKey(tenant, subject);
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Live records for which {@code resurrected} holds, removed again (reconciliation). */
    int removeWhere(Predicate<VectorRecord> resurrected) {
        lock.writeLock().lock();
        try {
            ensureOpen();
            List<Entry> doomed = new ArrayList<>();
            for (Entry e : byOrdinal) {
                if (e != null && resurrected.test(e.record())) {
                    doomed.add(e);
                }
            }
            return deleteEntries(doomed);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** The version below which a snapshot taken now holds every record. */
    long nextVersion() {
        lock.readLock().lock();
        try {
            return storage.nextVersion();
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Rebuilds the index from scratch from the live records that no forget or hold blocks (a
     * reindex reads only live, untombstoned records), then swaps it in. Searches and writes go on
     * against the old index during the build; writes that land meanwhile are applied to the new
     * one under the write lock before the swap.
     */
    public void rebuildIndex() {
        List<Entry> sources = new ArrayList<>();
        lock.readLock().lock();
        try {
            ensureOpen();
            RoaringBitmap hidden = blocked;
            for (Entry e : byOrdinal) {
                if (e != null && !hidden.contains(e.ordinal())) {
                    sources.add(e);
                }
            }
        } finally {
            lock.readLock().unlock();
        }
        VectorIndex fresh = indexFactory.get();
        sources.parallelStream().forEach(e -> fresh.add(e.ordinal(), e.record().vectorUnsafe()));
        fresh.afterBulkLoad();
        lock.writeLock().lock();
        try {
            ensureOpen();
            // Writes that landed during the build: add the new, drop the gone.
            RoaringBitmap hidden = blocked;
            for (Entry e : byOrdinal) {
                if (e != null && !hidden.contains(e.ordinal()) && !fresh.contains(e.ordinal())) {
                    fresh.add(e.ordinal(), e.record().vectorUnsafe());
                }
            }
            List<Integer> stale = new ArrayList<>();
            for (Entry e : sources) {
                Entry now = byOrdinal.get(e.ordinal());
                if (now != e) {
                    stale.add(e.ordinal());
                }
            }
            for (int ord : stale) {
                fresh.remove(ord);
                Entry now = byOrdinal.get(ord);
                if (now != null && !hidden.contains(ord)) {
                    fresh.add(ord, now.record().vectorUnsafe());
                }
            }
            VectorIndex old = index;
            index = fresh;
            old.close();
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
