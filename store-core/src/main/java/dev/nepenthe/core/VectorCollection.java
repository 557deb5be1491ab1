package dev.nepenthe.core;

import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.storage.CollectionStorage;
import dev.nepenthe.core.storage.CollectionStorage.Placed;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * A named set of records of one dimension and metric, with one index over all of them.
 * Obtained from {@link Nepenthe}; safe for concurrent use.
 *
 * <p>Each record gets an int ordinal; the index and the candidate bitmaps (per tenant, per
 * subject) speak ordinals.
 *
 * <p>Concurrency. Writes (upserts, deletes, a forget's cleanup, checkpoints) take turns on one
 * mutex, which they hold across their fsyncs: the log has one writer. Reads (search, get, size,
 * ids, and the forget probe) take no lock at all, so no read ever waits for a write, for a
 * queued writer, or for a forget's cleanup. They read state the writer publishes:
 * <ul>
 *   <li>the records by ordinal, in an array whose elements are stored with release and loaded
 *       with acquire semantics (a grown array is published whole);</li>
 *   <li>per-tenant and per-subject ordinal bitmaps, each published as an immutable copy after
 *       the write that changed it;</li>
 *   <li>{@code hidden}: ordinals no read may return (marked by a forget, under a legal hold, or
 *       being removed), an immutable bitmap replaced whole;</li>
 *   <li>a write stamp, published last by every write.</li>
 * </ul>
 * A record leaves reads in this order: hidden, then unlinked from the records, then removed
 * from the index, and only then is its ordinal free for reuse (stamped with the write that
 * freed it) and unhidden. A search reads the stamp first; a hit whose ordinal was freed after
 * that might have been scored against a vector the ordinal no longer holds, so it is dropped and
 * the search runs again. Hence a record deleted before a search starts is never returned, a
 * record deleted before a search materialises its hits is never returned, and a returned score
 * is the score of the returned record.
 */
public final class VectorCollection {

    private record SubjectKey(String tenant, String subject) {}

    /**
     * A live record at its ordinal. {@code ordinalFreedAt} is the write stamp at which the
     * ordinal was last freed (0 if never): a search that started before it must not trust a
     * score the index gave this ordinal.
     */
    private record Entry(int ordinal, VectorRecord record, long ordinalFreedAt) {}

    private static final VarHandle ENTRIES = MethodHandles.arrayElementVarHandle(Entry[].class);
    /** A search reruns at most this often when writes or marks changed its hits under it. */
    private static final int SEARCH_ATTEMPTS = 3;

    private final CollectionSpec spec;
    private final String id;
    private final CollectionStorage storage;
    private final java.util.function.Supplier<VectorIndex> indexFactory;
    private volatile VectorIndex index;
    private final RecordValidator validator;
    /** Writes take turns on this; reads never take it. */
    private final ReentrantLock writer = new ReentrantLock();

    // ---- published for lock-free reads (written only under the writer mutex) --------------
    /** Entries by ordinal; elements through {@link #ENTRIES}. Replaced whole when grown. */
    private volatile Entry[] entries = new Entry[16];
    private final ConcurrentHashMap<String, RoaringBitmap> tenantView = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<SubjectKey, RoaringBitmap> subjectView = new ConcurrentHashMap<>();
    /** Records published to reads ({@link #liveCount} as of the last publish). */
    private volatile int live;
    /** The stamp of the last write whose effects are all published. */
    private volatile long publishedStamp;
    private volatile boolean closed;

    // ---- the writer's own state (under the writer mutex) -----------------------------------
    private final RoaringBitmap freeOrdinals = new RoaringBitmap();
    private final Map<String, RoaringBitmap> byTenant = new HashMap<>();
    private final Map<SubjectKey, RoaringBitmap> bySubject = new HashMap<>();
    /**
     * Join keys, so a forget's check looks up the names it forgot instead of reading every
     * record: records by string metadata value (folded, see {@link #fold}) and by each id in
     * their {@code derivedFrom}. Writer-owned.
     */
    private final Map<String, RoaringBitmap> byMetadataValue = new HashMap<>();
    private final Map<String, RoaringBitmap> byDerivedFrom = new HashMap<>();
    private final Set<String> touchedTenants = new HashSet<>();
    private final Set<SubjectKey> touchedSubjects = new HashSet<>();
    /** One past the highest ordinal ever linked. */
    private int ordinalHighWater;
    /** Per ordinal, the stamp of the write that last freed it. */
    private long[] freedAt = new long[16];
    private long nextStamp;
    /** Linked records, counted as they are linked and unlinked; published as {@link #live}. */
    private int liveCount;

    /**
     * Tests hold a search here, between the index search and materialisation, to show that a
     * forget marked meanwhile still keeps its records out of the result. Null in production.
     */
    static volatile Runnable afterIndexSearch;

    /** Refuses writes that fall in a forgotten scope; set by the store once its protocol is up. */
    private volatile WriteFence fence = WriteFence.NONE;
    /**
     * Ordinals no read may return: records marked by a forget that has not removed them yet,
     * kept under a legal hold, or being removed by a write. Published whole (never mutated after
     * publication) so a search checks it at materialisation without a lock.
     */
    private volatile RoaringBitmap hidden = new RoaringBitmap();
    /**
     * The part of {@link #hidden} that forgets and holds put there, which {@link #get} honours; a
     * record being replaced is hidden from searches only, so a get finds one version or the other.
     */
    private volatile RoaringBitmap marked = new RoaringBitmap();
    private final Map<String, RoaringBitmap> hiddenByOperation = new HashMap<>();
    /** The key a plain delete hides its records under while the index removes them. */
    private static final String REMOVING = "\0removing";

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
        List<Entry> all = new ArrayList<>(liveCount);
        for (int ord = 0; ord < ordinalHighWater; ord++) {
            Entry e = entries[ord];
            if (e == null) {
                freeOrdinals.add(ord);
            } else {
                all.add(e);
            }
        }
        VectorIndex idx = index;
        all.parallelStream().forEach(e -> idx.add(e.ordinal(), e.record().vectorUnsafe()));
        idx.afterBulkLoad();
        publish(0);
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
     * with one bad record stores none of it. Durable (fsynced) when this returns. Waits for
     * other writes; searches go on meanwhile.
     *
     * @throws IllegalArgumentException naming the first bad record by its batch position
     */
    public void upsertAll(List<VectorRecord> batch) {
        validator.validateBatch(batch);
        writer.lock();
        try {
            ensureOpen();
            // Under the writer mutex: a forget's mark either sees this batch (and hides it) or
            // this check sees the mark's fence.
            fence.check(spec.name(), batch);
            // 1. Place every record (new ordinals; the versions they replace), 2. make the batch
            //    durable, 3. only then change what reads see.
            List<Placed> placed = new ArrayList<>(batch.size());
            List<Entry> replaced = new ArrayList<>();
            List<Placed> replacedPlaced = new ArrayList<>();
            IntIterator free = freeOrdinals.getIntIterator();
            int fresh = Math.max(ordinalHighWater, storage.nextOrdinal());
            for (VectorRecord given : batch) {
                // The store keeps a copy of its own: a forget wipes it in place, never the caller's.
                VectorRecord r = given.copy();
                Entry old = lookup(r.tenant(), r.id());
                if (old != null) {
                    replaced.add(old);
                    replacedPlaced.add(new Placed(old.ordinal(), old.record()));
                }
                placed.add(new Placed(free.hasNext() ? free.next() : fresh++, r));
            }
            storage.put(placed, replacedPlaced);
            long stamp = ++nextStamp;
            // The old versions leave searches before the new ones can be found, so no search
            // sees a record twice; a get keeps finding the old version (the id map still points
            // at it, and it is hidden from searches only) until the new one is linked.
            if (!replaced.isEmpty()) {
                hide(REMOVING, ordinalsOf(replaced));
            }
            VectorIndex idx = index;
            for (Placed p : placed) {
                freeOrdinals.remove(p.ordinal());
                idx.add(p.ordinal(), p.record().vectorUnsafe());
                linkRecord(p.ordinal(), p.record());
            }
            storage.publishIds(placed);
            removeFromReads(replaced, stamp);
            publish(stamp);
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': writing the batch failed; nothing was stored", e);
        } finally {
            writer.unlock();
        }
        checkpointIfDue();
    }

    private void checkpointIfDue() {
        writer.lock();
        try {
            if (!closed) {
                storage.checkpointIfDue();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': the batch is stored (in the write-ahead"
                    + " log) but folding the log into segments failed; the next checkpoint retries", e);
        } finally {
            writer.unlock();
        }
    }

    /** The live entry at an ordinal (acquire load), or null. */
    private Entry entry(int ord) {
        Entry[] es = entries;
        return ord >= 0 && ord < es.length ? (Entry) ENTRIES.getAcquire(es, ord) : null;
    }

    /** The live entry for (tenant, id), through the persistent id map. */
    private Entry lookup(String tenant, String id) {
        return lookup(tenant, id, storage.ordinalOf(tenant, id));
    }

    private Entry lookup(String tenant, String id, int ordinal) {
        Entry e = entry(ordinal);
        // The map is keyed by a hash: confirm the entry really is this record.
        return e != null && e.record().tenant().equals(tenant) && e.record().id().equals(id) ? e : null;
    }

    /** Adds a record to the entries and the writer's bitmaps (not the index); under the writer mutex. */
    private void linkRecord(int ord, VectorRecord r) {
        Entry[] es = entries;
        if (ord >= es.length) {
            int cap = Math.max(ord + 1, es.length + (es.length >> 1));
            es = Arrays.copyOf(es, cap);
            freedAt = Arrays.copyOf(freedAt, cap);
            entries = es;
        }
        ENTRIES.setRelease(es, ord, new Entry(ord, r, freedAt[ord]));
        ordinalHighWater = Math.max(ordinalHighWater, ord + 1);
        liveCount++;
        for (String key : metadataKeys(r)) {
            byMetadataValue.computeIfAbsent(key, k -> new RoaringBitmap()).add(ord);
        }
        for (String src : r.derivedFrom()) {
            byDerivedFrom.computeIfAbsent(src, k -> new RoaringBitmap()).add(ord);
        }
        byTenant.computeIfAbsent(r.tenant(), t -> new RoaringBitmap()).add(ord);
        touchedTenants.add(r.tenant());
        if (r.subject() != null) {
            SubjectKey key = new SubjectKey(r.tenant(), r.subject());
            bySubject.computeIfAbsent(key, s -> new RoaringBitmap()).add(ord);
            touchedSubjects.add(key);
        }
    }

    /** Takes an entry out of the entries and the writer's bitmaps (not the index). */
    private void unlinkRecord(Entry e) {
        VectorRecord r = e.record();
        ENTRIES.setRelease(entries, e.ordinal(), (Entry) null);
        liveCount--;
        for (String key : metadataKeys(r)) {
            removeFrom(byMetadataValue, key, e.ordinal());
        }
        for (String src : r.derivedFrom()) {
            removeFrom(byDerivedFrom, src, e.ordinal());
        }
        removeFrom(byTenant, r.tenant(), e.ordinal());
        touchedTenants.add(r.tenant());
        if (r.subject() != null) {
            SubjectKey key = new SubjectKey(r.tenant(), r.subject());
            removeFrom(bySubject, key, e.ordinal());
            touchedSubjects.add(key);
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

    /**
     * Removes entries from what reads see (the caller has deleted them durably, or they are
     * hidden already): hidden, unlinked, removed from the index in one batch, and only then
     * their ordinals freed (stamped) and unhidden. Under the writer mutex.
     */
    private void removeFromReads(List<Entry> doomed, long stamp) {
        if (doomed.isEmpty()) {
            return;
        }
        RoaringBitmap ords = ordinalsOf(doomed);
        hide(REMOVING, ords);
        for (Entry e : doomed) {
            unlinkRecord(e);
        }
        // One batch call lets the index share repair work across the removals.
        index.removeAll(ords.toArray());
        ords.forEach((int ord) -> {
            freedAt[ord] = stamp;
            freeOrdinals.add(ord);
        });
        // A freed ordinal will be reused by a new record, which must not be hidden.
        unhideEverywhere(ords);
    }

    private static RoaringBitmap ordinalsOf(List<Entry> list) {
        RoaringBitmap out = new RoaringBitmap();
        for (Entry e : list) {
            out.add(e.ordinal());
        }
        return out;
    }

    /**
     * Publishes the bitmaps the last write changed (immutable copies) and then its stamp.
     * Under the writer mutex.
     */
    private void publish(long stamp) {
        for (String t : touchedTenants) {
            RoaringBitmap b = byTenant.get(t);
            if (b == null) {
                tenantView.remove(t);
            } else {
                tenantView.put(t, b.clone());
            }
        }
        for (SubjectKey s : touchedSubjects) {
            RoaringBitmap b = bySubject.get(s);
            if (b == null) {
                subjectView.remove(s);
            } else {
                subjectView.put(s, b.clone());
            }
        }
        touchedTenants.clear();
        touchedSubjects.clear();
        live = liveCount;
        publishedStamp = stamp;
    }

    /** The record with this id in the default tenant. */
    public Optional<VectorRecord> get(String id) {
        return get(VectorRecord.DEFAULT_TENANT, id);
    }

    /** The record (tenant, id), unless it is absent or a forget or hold hides it. Takes no lock. */
    public Optional<VectorRecord> get(String tenant, String id) {
        ensureOpen();
        Entry e = lookupWhileWritten(tenant, id);
        return e == null || marked.contains(e.ordinal()) ? Optional.empty() : Optional.of(e.record().copy());
    }

    /**
     * {@link #lookup} for a reader that holds no lock. A replacement switches the id map to the
     * new ordinal and only then unlinks the old entry, so a reader that read the old ordinal and
     * then found its entry gone (or reused) reads the map again and finds the new version.
     */
    private Entry lookupWhileWritten(String tenant, String id) {
        int ord = storage.ordinalOf(tenant, id);
        Entry e = lookup(tenant, id, ord);
        for (int attempt = 0; e == null && ord >= 0 && attempt < 3; attempt++) {
            int again = storage.ordinalOf(tenant, id);
            if (again == ord) {
                break;
            }
            ord = again;
            e = lookup(tenant, id, ord);
        }
        return e;
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
        writer.lock();
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
            writer.unlock();
        }
    }

    /**
     * Deletes live entries (caller holds the writer mutex): journal and log first, then what
     * reads see, then the live files are rewritten without them.
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
        long stamp = ++nextStamp;
        removeFromReads(doomed, stamp);
        publish(stamp);
        purgeDeleted();
        return doomed.size();
    }

    /**
     * Deletes every record of one subject in one tenant (another tenant's subject with the same
     * name is untouched). This is a plain delete; the forget protocol with verification and
     * receipts is built on top of it.
     *
     * @return how many records were deleted
     */
    public int deleteSubject(String tenant, String subject) {
        writer.lock();
        try {
            ensureOpen();
            RoaringBitmap ords = bySubject.get(new SubjectKey(tenant, subject));
            List<Entry> doomed = new ArrayList<>();
            if (ords != null) {
                ords.forEach((int ord) -> doomed.add(entry(ord)));
            }
            try {
                // Even with no live records the scope's key is destroyed: it may still decrypt
                // copies in snapshots or backups.
                storage.dropSubject(tenant, subject, placed(doomed));
            } catch (IOException ex) {
                throw new UncheckedIOException("collection '" + spec.name() + "': deleting the subject failed", ex);
            }
            long stamp = ++nextStamp;
            removeFromReads(doomed, stamp);
            publish(stamp);
            purgeDeleted();
            return doomed.size();
        } finally {
            writer.unlock();
        }
    }

    /** Called under the writer mutex once deleted records are out of the index and maps. */
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

    /**
     * The k records of the request's tenant closest to its vector, best first, narrowed by the
     * request's subject and metadata filter. Takes no lock: it runs beside writes and forgets.
     */
    public List<SearchHit> search(SearchRequest request) {
        validator.checkVector(request.vector(), "query");
        ensureOpen();
        // Records a forget has marked are left out of the candidates the index sees, so a
        // search still finds k visible records. A mark, delete or ordinal reuse that lands while
        // this search runs is caught at materialisation; if it cost any of the hits, the search
        // runs again (bounded: each retry sees every earlier change).
        List<SearchHit> hits = List.of();
        for (int attempt = 1; attempt <= SEARCH_ATTEMPTS; attempt++) {
            long start = publishedStamp;
            RoaringBitmap hiddenAtStart = hidden;
            RoaringBitmap accept = candidates(request, hiddenAtStart);
            if (accept != null && accept.isEmpty()) {
                return List.of();
            }
            SearchResult result = index.search(request.vector(), request.k(),
                    accept == null ? dev.nepenthe.core.index.Accept.ALL : new BitmapAccept(accept), request.params());
            Runnable pause = afterIndexSearch;
            if (pause != null) {
                pause.run();
            }
            // The volatile read sees every mark and delete that returned before this point.
            RoaringBitmap nowHidden = hidden;
            hits = new ArrayList<>(result.size());
            boolean lostToAConcurrentChange = false;
            for (int i = 0; i < result.size(); i++) {
                int ord = result.ordinals()[i];
                if (accept != null && !accept.contains(ord)) {
                    continue;
                }
                Entry e = entry(ord);
                if (e == null || e.ordinalFreedAt() > start || nowHidden.contains(ord) || !matches(e, request)) {
                    lostToAConcurrentChange = true;
                    continue;
                }
                hits.add(new SearchHit(e.record().copy(), result.scores()[i]));
            }
            if (!lostToAConcurrentChange) {
                return hits;
            }
        }
        return hits;
    }

    /** Whether an entry is in the request's tenant and subject (checked when the index saw every ordinal). */
    private static boolean matches(Entry e, SearchRequest request) {
        VectorRecord r = e.record();
        return r.tenant().equals(request.tenant())
                && (request.subject() == null || request.subject().equals(r.subject()));
    }

    /** Null means "every live ordinal"; otherwise the ordinals the index may return. */
    private RoaringBitmap candidates(SearchRequest request, RoaringBitmap hiddenNow) {
        RoaringBitmap tenant = tenantView.get(request.tenant());
        if (tenant == null) {
            return new RoaringBitmap();
        }
        RoaringBitmap accept = tenant;
        if (request.subject() != null) {
            RoaringBitmap s = subjectView.get(new SubjectKey(request.tenant(), request.subject()));
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
                Entry e = entry(ord);
                if (e != null && request.filter().test(e.record().metadata())) {
                    matching.add(ord);
                }
            }
            accept = matching;
        }
        if (!hiddenNow.isEmpty()) {
            accept = RoaringBitmap.andNot(accept, hiddenNow);
        }
        // One tenant, no narrowing: let the index skip the per-candidate check (a record of
        // another tenant written meanwhile is caught at materialisation).
        boolean everything = accept == tenant && request.subject() == null && tenantView.size() == 1;
        return everything ? null : accept;
    }

    /** Number of records in all tenants. */
    public int size() {
        return live;
    }

    /** Number of records in one tenant. */
    public int size(String tenant) {
        RoaringBitmap b = tenantView.get(tenant);
        return b == null ? 0 : b.getCardinality();
    }

    /**
     * Ids of a tenant's records, in no particular order. A listing, not a search: it waits for a
     * write in flight, so a record being replaced is listed once.
     */
    public List<String> ids(String tenant) {
        writer.lock();
        try {
            RoaringBitmap b = byTenant.get(tenant);
            List<String> out = new ArrayList<>();
            if (b != null) {
                RoaringBitmap hiddenNow = hidden;
                b.forEach((int ord) -> {
                    if (!hiddenNow.contains(ord)) {
                        out.add(entry(ord).record().id());
                    }
                });
            }
            return out;
        } finally {
            writer.unlock();
        }
    }

    /**
     * The index's structure by record (see {@link IndexView}); writes wait while it is read.
     * Costs a pass over the index's lists or nodes.
     */
    public IndexView describeIndex() {
        writer.lock();
        try {
            ensureOpen();
            dev.nepenthe.core.index.IndexDescription d = index.describe();
            List<IndexView.Partition> parts = new ArrayList<>();
            for (dev.nepenthe.core.index.IndexDescription.Partition p : d.partitions()) {
                parts.add(new IndexView.Partition(p.id(), p.centroid(), refs(p.members())));
            }
            return new IndexView(d.kind(), d.size(), d.stats(), parts, d.lineage() == null ? null : refs(d.lineage()));
        } finally {
            writer.unlock();
        }
    }

    private List<IndexView.Ref> refs(int[] ordinals) {
        List<IndexView.Ref> out = new ArrayList<>(ordinals.length);
        for (int ord : ordinals) {
            Entry e = entry(ord);
            if (e != null) {
                out.add(new IndexView.Ref(e.record().tenant(), e.record().id()));
            }
        }
        return out;
    }

    /**
     * The index's own integrity check plus the collection's: the index holds exactly the live
     * ordinals, and the bitmaps agree with the records. Writes wait while it runs; reads do not.
     */
    public Map<String, IntegrityReport> verifyIntegrity() {
        writer.lock();
        try {
            Map<String, IntegrityReport> out = new LinkedHashMap<>();
            VectorIndex idx = index;
            out.put("index:" + idx.kind(), idx.verifyIntegrity());
            IntegrityReport.Builder r = IntegrityReport.builder("collection:" + spec.name())
                    .expect("index-size-mismatch").expect("live-record-missing-from-index")
                    .expect("bitmap-mismatch").expect("published-view-mismatch");
            // A rebuilt index leaves out records a forget or hold hides; every other live
            // record must be in it, and nothing else.
            RoaringBitmap hiddenNow = hidden;
            int indexed = 0;
            int linked = 0;
            Map<String, RoaringBitmap> valuesExpected = new HashMap<>();
            Map<String, RoaringBitmap> derivedExpected = new HashMap<>();
            for (int ord = 0; ord < ordinalHighWater; ord++) {
                Entry e = entry(ord);
                if (e == null) {
                    continue;
                }
                linked++;
                for (String key : metadataKeys(e.record())) {
                    valuesExpected.computeIfAbsent(key, k -> new RoaringBitmap()).add(ord);
                }
                for (String src : e.record().derivedFrom()) {
                    derivedExpected.computeIfAbsent(src, k -> new RoaringBitmap()).add(ord);
                }
                if (idx.contains(ord)) {
                    indexed++;
                } else if (!hiddenNow.contains(ord)) {
                    r.violation("live-record-missing-from-index", "ordinal " + ord);
                }
                if (lookup(e.record().tenant(), e.record().id()) != e) {
                    r.violation("id-map-mismatch", "ordinal " + ord);
                }
            }
            if (idx.size() != indexed || storage.size() != live || linked != live) {
                r.violation("index-size-mismatch", "index holds " + idx.size() + " (" + indexed + " of them live), storage "
                        + storage.size() + ", collection " + live + " (" + linked + " linked)");
            }
            long tenantBits = 0;
            for (RoaringBitmap b : byTenant.values()) {
                tenantBits += b.getCardinality();
            }
            if (tenantBits != live) {
                r.violation("bitmap-mismatch", "tenant bitmaps hold " + tenantBits + ", collection " + live);
            }
            // What reads see must be what the writer holds once no write is in flight.
            if (!tenantView.equals(byTenant) || !subjectView.equals(bySubject)) {
                r.violation("published-view-mismatch", "the tenant or subject bitmaps searches read differ from the records");
            }
            r.expect("id-map-mismatch").expect("join-index-mismatch");
            if (!valuesExpected.equals(byMetadataValue) || !derivedExpected.equals(byDerivedFrom)) {
                r.violation("join-index-mismatch", "the join-key indexes differ from the records' metadata and derivedFrom");
            }
            r.checked("records", live).checked("tenants", byTenant.size());
            out.put("collection", r.build());
            return out;
        } finally {
            writer.unlock();
        }
    }

    /**
     * Folds the write-ahead log into segments now (it also happens by itself as the log grows,
     * after every delete and on close).
     */
    public void checkpoint() {
        writer.lock();
        try {
            ensureOpen();
            storage.checkpoint(true);
        } catch (IOException e) {
            throw new UncheckedIOException("collection '" + spec.name() + "': checkpoint failed", e);
        } finally {
            writer.unlock();
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
        writer.lock();
        try {
            ensureOpen();
            storage.checkpoint(true);
            storage.snapshotTo(target);
        } finally {
            writer.unlock();
        }
    }

    /** Destroys every key of this collection (it is being dropped). */
    void destroyAllKeys() throws IOException {
        writer.lock();
        try {
            storage.destroyAllKeys();
        } finally {
            writer.unlock();
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

    /** Records of a tenant a scope names, from the subject's bitmap when it is a subject scope. Writer mutex. */
    private RoaringBitmap scopeOrdinals(String tenant, Predicate<VectorRecord> inScope, String subject) {
        RoaringBitmap src = subject != null ? bySubject.get(new SubjectKey(tenant, subject)) : byTenant.get(tenant);
        RoaringBitmap out = new RoaringBitmap();
        if (src != null) {
            src.forEach((int ord) -> {
                if (inScope.test(entry(ord).record())) {
                    out.add(ord);
                }
            });
        }
        return out;
    }

    /**
     * The mark: from the moment this returns no read returns a record in scope, including
     * searches already running (they check at materialisation). Waits for a write in flight (so
     * the write either lands before the mark and is hidden, or meets the fence), never for reads.
     *
     * @param subject the subject of a subject scope (a faster lookup), else null
     * @return the ids of the records hidden (for the registered surfaces to block too)
     */
    Set<String> block(String operation, String tenant, Predicate<VectorRecord> inScope, String subject) {
        writer.lock();
        try {
            ensureOpen();
            RoaringBitmap mine = scopeOrdinals(tenant, inScope, subject);
            hide(operation, mine);
            Set<String> ids = new HashSet<>();
            mine.forEach((int ord) -> ids.add(entry(ord).record().id()));
            return ids;
        } finally {
            writer.unlock();
        }
    }

    /** Lifts an operation's block (its records are gone, or it ended). */
    void unblock(String operation) {
        synchronized (hiddenByOperation) {
            if (hiddenByOperation.remove(operation) != null) {
                publishHidden();
            }
        }
    }

    private void hide(String operation, RoaringBitmap ords) {
        synchronized (hiddenByOperation) {
            hiddenByOperation.merge(operation, ords.clone(), (a, b) -> RoaringBitmap.or(a, b));
            publishHidden();
        }
    }

    /** Freed ordinals leave every hidden set: a record that reuses one must not be hidden. */
    private void unhideEverywhere(RoaringBitmap freed) {
        synchronized (hiddenByOperation) {
            hiddenByOperation.values().forEach(b -> b.andNot(freed));
            hiddenByOperation.values().removeIf(RoaringBitmap::isEmpty);
            publishHidden();
        }
    }

    private void publishHidden() {
        RoaringBitmap all = new RoaringBitmap();
        RoaringBitmap byForgetsAndHolds = new RoaringBitmap();
        hiddenByOperation.forEach((op, b) -> {
            all.or(b);
            if (!op.equals(REMOVING)) {
                byForgetsAndHolds.or(b);
            }
        });
        marked = byForgetsAndHolds;
        hidden = all;
    }

    /** Live records a scope names (hidden ones included): for hold checks and verification. */
    List<VectorRecord> recordsInScope(String tenant, Predicate<VectorRecord> inScope, String subject) {
        writer.lock();
        try {
            ensureOpen();
            List<VectorRecord> out = new ArrayList<>();
            scopeOrdinals(tenant, inScope, subject).forEach((int ord) -> out.add(entry(ord).record()));
            return out;
        } finally {
            writer.unlock();
        }
    }

    /** Whether (tenant, id) is live, hidden or not: one id-map lookup. */
    boolean isLive(String tenant, String id) {
        return lookup(tenant, id) != null;
    }

    /** A record the cleanup removed: its id, ordinal, version and a copy of its vector (the probe). */
    record Removed(VectorRecord record, int ordinal, long version) {}

    /** What a cleanup did in this collection. */
    record Cleanup(List<Removed> removed, List<dev.nepenthe.core.forget.Suspect> heldForRegeneration) {}

    /** Called with the records about to be removed, before anything is deleted. */
    @FunctionalInterface
    interface BeforeRemoval {
        void accept(List<Removed> doomed) throws IOException;
    }

    /**
     * The cleanup: resolves the scope and its provenance closure (records whose
     * {@code derivedFrom} names a record in scope, transitively, within the tenant), hands the
     * records to {@code before} (the protocol saves its probe vectors durably), then removes
     * them from the index, the maps and the storage files, and rebuilds the id map file. With
     * {@code cascade} false, derived records are not removed but hidden and returned as
     * regeneration-required. Writes wait while it runs; reads go on throughout (the records
     * are hidden since the mark).
     */
    Cleanup purge(String operation, String tenant, Predicate<VectorRecord> inScope, String subject, boolean cascade,
            BeforeRemoval before) throws IOException {
        // 1. Resolve. The set cannot grow afterwards: writes in scope are refused by the fence,
        //    and records deriving from the scope are too.
        List<Entry> resolved = new ArrayList<>();
        List<Removed> removed = new ArrayList<>();
        List<dev.nepenthe.core.forget.Suspect> held = new ArrayList<>();
        writer.lock();
        try {
            ensureOpen();
            RoaringBitmap doomed = scopeOrdinals(tenant, inScope, subject);
            RoaringBitmap derivedHeld = new RoaringBitmap();
            Set<String> reached = new HashSet<>();
            doomed.forEach((int ord) -> reached.add(entry(ord).record().id()));
            // Provenance closure: a fixpoint over the tenant's records that name sources.
            List<Entry> deriving = new ArrayList<>();
            RoaringBitmap tenantOrds = byTenant.get(tenant);
            if (tenantOrds != null) {
                tenantOrds.forEach((int ord) -> {
                    Entry e = entry(ord);
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
                VectorRecord r = entry(ord).record();
                List<String> surviving = r.derivedFrom().stream().filter(id -> !reached.contains(id)).toList();
                String forgottenSource = r.derivedFrom().stream().filter(reached::contains).findFirst().orElse("");
                held.add(new dev.nepenthe.core.forget.Suspect("regeneration-required", spec.name(), r.id(), Double.NaN,
                        forgottenSource + (surviving.isEmpty() ? "" : "; surviving sources: " + String.join(",", surviving))));
            });
            if (!derivedHeld.isEmpty()) {
                hide(operation, derivedHeld);
            }
            // Cascaded records are hidden too before anything is deleted.
            hide(operation, doomed);
            doomed.forEach((int ord) -> {
                Entry e = entry(ord);
                resolved.add(e);
                removed.add(new Removed(e.record(), ord, storage.versionOf(ord)));
            });
        } finally {
            writer.unlock();
        }
        // 2. The caller saves the probe vectors durably before anything is deleted (no lock:
        //    the records are hidden, and only this operation removes them).
        before.accept(removed);
        if (resolved.isEmpty()) {
            return new Cleanup(removed, held);
        }
        // 3. Journal and log the deletion, take the records out of what reads see, let the index
        //    repair itself, free the ordinals, rewrite the live files. Reads run throughout; a
        //    crash before the journal entry is safe (the resumed operation deletes them again).
        writer.lock();
        try {
            ensureOpen();
            List<Entry> current = new ArrayList<>(resolved.size());
            for (Entry e : resolved) {
                if (entry(e.ordinal()) == e) {
                    current.add(e);
                }
            }
            storage.delete(placed(current));
            // Journaled and logged, not yet out of the index: a crash image here must resume.
            dev.nepenthe.core.io.CrashPoints.reached("cleanup.deleted");
            long stamp = ++nextStamp;
            removeFromReads(current, stamp);
            publish(stamp);
            storage.purgeDeleted();
            return new Cleanup(removed, held);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Runs the index's own residue purge (an IVF-PQ retrain when a removed vector trained it).
     * Writes wait (the SPI asks that adds and removes stay out meanwhile); searches do not (an
     * index that retrains computes aside and swaps, see {@link VectorIndex#purgeResidue()}).
     */
    boolean purgeIndexResidue() {
        writer.lock();
        try {
            ensureOpen();
            VectorIndex idx = index;
            boolean had = idx.hasResidue();
            if (had) {
                idx.purgeResidue();
            }
            return had;
        } finally {
            writer.unlock();
        }
    }

    /**
     * The index surface's proof: the index's integrity checker is clean, none of the removed
     * ordinals is indexed unless a different record has reused it, and no residue is left.
     */
    dev.nepenthe.core.forget.SurfaceOutcome verifyIndex(List<Removed> removed, long purged) {
        writer.lock();
        try {
            ensureOpen();
            VectorIndex idx = index;
            // A plain delete or replacement since the cleanup may have left residue of its own
            // (an IVF-PQ training member gone): purged here, in the same hold as the check, so
            // no write slips in between.
            if (idx.hasResidue()) {
                idx.purgeResidue();
            }
            int[] ords = removed.stream().mapToInt(Removed::ordinal).toArray();
            // Scoped: the index proves the removals where they changed it (the whole-index
            // checker runs on demand, verifyIntegrity), so the proof costs what the scope costs.
            IntegrityReport report = idx.verifyRemoval(ords);
            List<String> problems = new ArrayList<>();
            if (!report.isClean()) {
                problems.add("integrity checker: " + report.violations());
            }
            int stillIndexed = 0;
            for (Removed r : removed) {
                Entry now = entry(r.ordinal());
                boolean reused = now != null && !(now.record().tenant().equals(r.record().tenant())
                        && now.record().id().equals(r.record().id()));
                if (idx.contains(r.ordinal()) && !reused) {
                    stillIndexed++;
                }
            }
            if (stillIndexed > 0) {
                problems.add(stillIndexed + " forgotten ordinals are still in the index");
            }
            if (idx.hasResidue()) {
                problems.add("the index reports residue of removed vectors (e.g. codebooks trained on them)");
            }
            long checked = report.checked().values().stream().mapToLong(Long::longValue).sum() + removed.size();
            return new dev.nepenthe.core.forget.SurfaceOutcome("collection:" + spec.name() + "/index:" + idx.kind(),
                    dev.nepenthe.core.forget.ErasureClass.PHYSICAL, purged, checked, problems, idx.erasureResidual());
        } finally {
            writer.unlock();
        }
    }

    /**
     * The index surface of a collection a forget removed nothing from: nothing to prove there
     * beyond the absence of residue, so the (whole-index) integrity checker does not run.
     */
    dev.nepenthe.core.forget.SurfaceOutcome untouchedIndex() {
        writer.lock();
        try {
            ensureOpen();
            VectorIndex idx = index;
            if (idx.hasResidue()) {
                idx.purgeResidue(); // left by a plain delete, as in verifyIndex
            }
            List<String> problems = idx.hasResidue()
                    ? List.of("the index reports residue of removed vectors (e.g. codebooks trained on them)") : List.of();
            return new dev.nepenthe.core.forget.SurfaceOutcome("collection:" + spec.name() + "/index:" + idx.kind(),
                    dev.nepenthe.core.forget.ErasureClass.PHYSICAL, 0, 0, problems,
                    "nothing in scope was stored here; the index was not re-checked");
        } finally {
            writer.unlock();
        }
    }

    /**
     * The storage surface's proof: a byte scan of the files that could hold the removed records
     * (their buckets' segments, the log, the id map) finds none of their keyed hashes, and no
     * id resolves any more. Writes wait (they would change the files under the scan).
     */
    dev.nepenthe.core.forget.SurfaceOutcome verifyStorage(List<Removed> removed) throws IOException {
        writer.lock();
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
            writer.unlock();
        }
    }

    /**
     * The negative-space probe: every unhidden record of the tenant whose vector has cosine
     * similarity at or above {@code threshold} with a forgotten vector. Exact, over every
     * record (an approximate search could miss the one residue that matters); each record's
     * vector compared with every probe while it is in cache. Takes no lock: it reads what
     * searches read, so writes go on.
     *
     * @return suspects, best score first, at most one per surviving record
     */
    List<dev.nepenthe.core.forget.Suspect> probe(String tenant, List<Removed> probes, double threshold) {
        ensureOpen();
        RoaringBitmap tenantOrds = tenantView.get(tenant);
        if (tenantOrds == null || probes.isEmpty()) {
            return List.of();
        }
        // A zero vector has no direction, so no cosine: it cannot be near anything.
        List<Removed> same = probes.stream().filter(p -> p.record().dimension() == spec.dimension()
                && !isZero(p.record().vectorUnsafe())).toList();
        if (same.isEmpty()) {
            return List.of();
        }
        var kernels = dev.nepenthe.core.vector.Kernels.get();
        int dim = spec.dimension();
        // The unit-length probes in one block: each record is scored against all of them in
        // one batch call while its vector is in cache.
        float[] probeBlock = new float[same.size() * dim];
        for (int i = 0; i < same.size(); i++) {
            float[] unit = dev.nepenthe.core.Metric.COSINE.prepare(same.get(i).record().vectorUnsafe());
            System.arraycopy(unit, 0, probeBlock, i * dim, dim);
            Arrays.fill(unit, 0f); // copies of forgotten vectors are wiped, not left to the collector
        }
        int[] ords = RoaringBitmap.andNot(tenantOrds, hidden).toArray();
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
            Entry e = entry(ords[i]);
            if (e == null) {
                return; // deleted since the bitmap was published
            }
            VectorRecord r = e.record();
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
        Arrays.fill(probeBlock, 0f);
        List<dev.nepenthe.core.forget.Suspect> out = new ArrayList<>(found);
        out.sort(java.util.Comparator.comparingDouble(dev.nepenthe.core.forget.Suspect::score).reversed());
        return out;
    }

    private static boolean isZero(float[] v) {
        for (float x : v) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** The join keys of a record's string metadata values: each whole value and each of its tokens. */
    private static Set<String> metadataKeys(VectorRecord r) {
        Set<String> keys = new HashSet<>();
        for (Object v : r.metadata().values()) {
            if (v instanceof String sv) {
                keys.addAll(JoinKeys.keysOf(sv));
            }
        }
        return keys;
    }

    /** Whether the tenant has at least one live record here. */
    boolean hasTenant(String tenant) {
        return tenantView.containsKey(tenant);
    }

    /** The tenants that have at least one live record here (a snapshot of the published view). */
    public Set<String> tenants() {
        ensureOpen();
        return Set.copyOf(tenantView.keySet());
    }

    /**
     * Join keys: unhidden records of the tenant whose metadata holds one of {@code names} (the
     * forgotten subject, forgotten record ids) as a string value or as a token inside one
     * ("alice, bob"), ignoring case and surrounding blanks, or whose {@code derivedFrom} still
     * names a forgotten record. Looked up by name (the writer keeps both indexes), so it costs
     * the names and what they find. Declared identifiers (names, emails, phone numbers of the
     * subject) are searched for in every unhidden record's metadata and text of the tenant: that
     * part costs what the tenant holds, and only forgets that declare identifiers pay it. Holds
     * the writer mutex throughout.
     */
    List<dev.nepenthe.core.forget.Suspect> joinKeys(String tenant, Set<String> names, Set<String> forgottenIds,
            List<JoinKeys.Identifier> identifiers) {
        Set<String> folded = new HashSet<>();
        names.forEach(n -> folded.add(JoinKeys.fold(n)));
        List<dev.nepenthe.core.forget.Suspect> out = new ArrayList<>();
        writer.lock();
        try {
            ensureOpen();
            RoaringBitmap tenantOrds = byTenant.get(tenant);
            if (tenantOrds == null) {
                return List.of();
            }
            RoaringBitmap found = new RoaringBitmap();
            for (String n : folded) {
                RoaringBitmap b = byMetadataValue.get(n);
                if (b != null) {
                    found.or(b);
                }
            }
            for (String id : forgottenIds) {
                RoaringBitmap b = byDerivedFrom.get(id);
                if (b != null) {
                    found.or(b);
                }
            }
            found.and(tenantOrds);
            found.andNot(hidden);
            found.forEach((int ord) -> {
                VectorRecord r = entry(ord).record();
                for (Map.Entry<String, Object> m : r.metadata().entrySet()) {
                    if (m.getValue() instanceof String sv && JoinKeys.keysOf(sv).stream().anyMatch(folded::contains)) {
                        out.add(new dev.nepenthe.core.forget.Suspect("join-key", spec.name(), r.id(), Double.NaN,
                                "metadata key " + m.getKey()));
                        return;
                    }
                }
                out.add(new dev.nepenthe.core.forget.Suspect("join-key", spec.name(), r.id(), Double.NaN, "derivedFrom"));
            });
            if (!identifiers.isEmpty()) {
                RoaringBitmap scan = RoaringBitmap.andNot(tenantOrds, hidden);
                scan.forEach((int ord) -> {
                    String where = identifierIn(entry(ord).record(), identifiers);
                    if (where != null) {
                        out.add(new dev.nepenthe.core.forget.Suspect("declared-identifier", spec.name(),
                                entry(ord).record().id(), Double.NaN, where));
                    }
                });
            }
            return out;
        } finally {
            writer.unlock();
        }
    }

    /** Where a record holds one of the identifiers ("metadata key K", "text"), or null. Never the identifier. */
    private static String identifierIn(VectorRecord r, List<JoinKeys.Identifier> identifiers) {
        for (Map.Entry<String, Object> m : r.metadata().entrySet()) {
            if (m.getValue() instanceof String sv) {
                for (JoinKeys.Identifier id : identifiers) {
                    if (id.foundIn(sv)) {
                        return "metadata key " + m.getKey();
                    }
                }
            }
        }
        if (r.text() != null) {
            for (JoinKeys.Identifier id : identifiers) {
                if (id.foundIn(r.text())) {
                    return "text";
                }
            }
        }
        return null;
    }

    /**
     * Destroys the data key of (tenant, subject) in this collection and journals the drop, so
     * every copy of its ciphertext anywhere becomes unreadable. Returns 1 if a key was destroyed
     * now, 0 if there was none to destroy, -1 if one is still there.
     */
    int destroySubjectKey(String tenant, String subject) throws IOException {
        writer.lock();
        try {
            ensureOpen();
            RoaringBitmap left = bySubject.get(new SubjectKey(tenant, subject));
            if (left != null && !left.isEmpty()) {
                throw new IllegalStateException("collection '" + spec.name() + "': " + left.getCardinality()
                        + " records of the scope are still live; the key is not destroyed");
            }
            boolean destroyed = storage.destroySubjectKey(tenant, subject);
            return storage.hasKey(tenant, subject) ? -1 : destroyed ? 1 : 0;
        } finally {
            writer.unlock();
        }
    }

    /** Live records for which {@code resurrected} holds, removed again (reconciliation). */
    int removeWhere(Predicate<VectorRecord> resurrected) {
        writer.lock();
        try {
            ensureOpen();
            List<Entry> doomed = new ArrayList<>();
            for (int ord = 0; ord < ordinalHighWater; ord++) {
                Entry e = entry(ord);
                if (e != null && resurrected.test(e.record())) {
                    doomed.add(e);
                }
            }
            return deleteEntries(doomed);
        } finally {
            writer.unlock();
        }
    }

    /** The version below which a snapshot taken now holds every record. */
    long nextVersion() {
        writer.lock();
        try {
            return storage.nextVersion();
        } finally {
            writer.unlock();
        }
    }

    /**
     * Rebuilds the index from scratch from the live records that no forget or hold hides (a
     * reindex reads only live, untombstoned records), then swaps it in. Searches and writes go
     * on against the old index during the build; writes that landed meanwhile are applied to
     * the new one under the writer mutex before the swap.
     */
    public void rebuildIndex() {
        ensureOpen();
        List<Entry> sources = new ArrayList<>();
        RoaringBitmap hiddenNow = hidden;
        Entry[] es = entries;
        for (int ord = 0; ord < es.length; ord++) {
            Entry e = entry(ord);
            if (e != null && !hiddenNow.contains(ord)) {
                sources.add(e);
            }
        }
        VectorIndex fresh = indexFactory.get();
        sources.parallelStream().forEach(e -> fresh.add(e.ordinal(), e.record().vectorUnsafe()));
        fresh.afterBulkLoad();
        writer.lock();
        try {
            ensureOpen();
            // Writes that landed during the build: drop the gone, add the new.
            RoaringBitmap hiddenAtSwap = hidden;
            for (Entry e : sources) {
                if (entry(e.ordinal()) != e) {
                    fresh.remove(e.ordinal());
                }
            }
            for (int ord = 0; ord < ordinalHighWater; ord++) {
                Entry e = entry(ord);
                if (e != null && !hiddenAtSwap.contains(ord) && !fresh.contains(ord)) {
                    fresh.add(ord, e.record().vectorUnsafe());
                }
            }
            VectorIndex old = index;
            index = fresh;
            old.close();
        } finally {
            writer.unlock();
        }
    }

    /** The index behind this collection, for integrity checks and tools. */
    VectorIndex index() {
        return index;
    }

    void close() throws IOException {
        writer.lock();
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
            writer.unlock();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("collection '" + spec.name() + "' is closed (its store was closed or it was dropped)");
        }
    }
}
