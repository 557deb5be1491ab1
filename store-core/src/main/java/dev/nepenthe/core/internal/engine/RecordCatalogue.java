package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's records by ordinal and the bitmaps that find them: per tenant, per subject, by
 * keyed hashes of their metadata ({@link MetadataIndex}) and by {@code derivedFrom} source, plus
 * the set of ordinals no read may return. It keeps two copies of what changes: the writer's own
 * (changed only under the collection's writer mutex, by the caller's promise) and what lock-free
 * reads see, published by {@link #publish} after each write:
 *
 * <ul>
 *   <li>the records by ordinal, in an array whose elements are stored with release and loaded with
 *       acquire semantics (a grown array is published whole);
 *   <li>per-tenant and per-subject ordinal bitmaps, each published as an immutable copy, after the
 *       metadata index's (see {@link #publish});
 *   <li>{@link #hidden()}: ordinals no read may return (marked by a forget, under a legal hold, or
 *       being removed), an immutable bitmap replaced whole;
 *   <li>a write stamp, published last by every write; a search reads the tenant and subject views
 *       with the stamp of the publish they came from ({@link #publishedAsOf}).
 * </ul>
 *
 * It holds no index and no storage: {@link CollectionEngine} writes records through both and then
 * links them here; the forget engine reads scopes and hides ordinals here.
 *
 * <p>The records' vectors are not in the records: they live off the heap in a {@link VectorColumn}
 * by ordinal, and an entry's record holds none. A read joins them ({@link #materialise}, {@link
 * #readVector}) and then checks that the entry still holds its ordinal: a writer unlinks an entry
 * before it zeros or reuses the row, so a read that raced the change sees a different entry and is
 * dropped, never a record with another's vector.
 *
 * <p>Nor are the records' text and metadata in the entries: a record with text is marked so, one
 * with metadata keeps the keyed hashes the index holds it under, and a read that wants either
 * decrypts the record's one stored copy ({@link StoredCopies}), with the same check after it. The
 * heap holds neither between reads; filters and join keys read the hashes.
 */
public final class RecordCatalogue {

    /**
     * A live record at its ordinal. {@code ordinalFreedAt} is the write stamp at which the ordinal
     * was last freed (0 if never): a search that started before it must not trust a score the index
     * gave this ordinal. {@code metadataKeys} are the keys the metadata index holds it under, as
     * the entry keeps them ({@link MetadataIndex.Keys#kept}: one a name, a value, a join key, and a
     * number's finest bucket).
     */
    public record Entry(
            int ordinal,
            VectorRecord record,
            long ordinalFreedAt,
            boolean hasText,
            long[] metadataKeys) {
        /**
         * Whether the record has metadata, which only its stored copy holds (the index keeps {@link
         * #metadataKeys}).
         */
        public boolean hasMetadata() {
            return metadataKeys.length > 0;
        }

        /** Whether a read of the whole record decrypts its stored copy: it has text or metadata. */
        public boolean readsCopy() {
            return hasText || metadataKeys.length > 0;
        }
    }

    /** Where a record's text and metadata are read from: its stored copy, decrypted. */
    @FunctionalInterface
    public interface StoredCopies {
        /**
         * The record whose copy is stored at {@code ordinal} (perhaps one that has left it, or one
         * that has taken it since), or null when none is at hand; the caller may wipe it.
         */
        VectorRecord read(int ordinal) throws IOException;
    }

    private record SubjectKey(String tenant, String subject) {}

    private static final VarHandle ENTRIES = MethodHandles.arrayElementVarHandle(Entry[].class);

    /**
     * The key a plain delete or replacement hides its records under while the index removes them.
     */
    public static final String REMOVING = "\0removing";

    /** The records' vectors by ordinal, off the heap. */
    private final VectorColumn vectors;

    // ---- published for lock-free reads (written only under the writer mutex) --------------
    /** Entries by ordinal; elements through {@link #ENTRIES}. Replaced whole when grown. */
    private volatile Entry[] entries = new Entry[16];

    private final ConcurrentHashMap<String, RoaringBitmap> tenantView = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<SubjectKey, RoaringBitmap> subjectView =
            new ConcurrentHashMap<>();

    /** Records published to reads ({@link #liveCount} as of the last publish). */
    private volatile int live;

    /** The stamp of the last write whose effects are all published. */
    private volatile long publishedStamp;

    /**
     * Odd while {@link #publish} changes the tenant and subject views and the stamp, even between:
     * a reader that reads the same even value before and after its reads of them read them as of
     * one publish ({@link #publishedAsOf}).
     */
    private volatile long publishing;

    // ---- the writer's own state (under the writer mutex) -----------------------------------
    private final RoaringBitmap freeOrdinals = new RoaringBitmap();
    private final Map<String, RoaringBitmap> byTenant = new HashMap<>();
    private final Map<SubjectKey, RoaringBitmap> bySubject = new HashMap<>();

    /**
     * The records' metadata as keyed hashes: what filters and a forget's join-key check read, since
     * the entries hold no metadata. Its own writer and published views (see the class).
     */
    private final MetadataIndex metadata;

    /**
     * Join keys by source, so a forget's check looks up the ids it forgot instead of reading every
     * record: records by each id in their {@code derivedFrom}.
     */
    private final Map<String, RoaringBitmap> byDerivedFrom = new HashMap<>();

    /** The tenant and subject strings the records share, by themselves; see {@link #canonical}. */
    private final Map<String, String> tenantNames = new HashMap<>();

    private final Map<SubjectKey, SubjectKey> subjectNames = new HashMap<>();
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
     * Ordinals no read may return. Published whole (never mutated after publication) so a search
     * checks it at materialisation without a lock.
     */
    private volatile RoaringBitmap hidden = new RoaringBitmap();

    /**
     * The part of {@link #hidden} that forgets and holds put there, which a get honours; a record
     * being replaced is hidden from searches only, so a get finds one version or the other.
     */
    private volatile RoaringBitmap marked = new RoaringBitmap();

    private final Map<String, RoaringBitmap> hiddenByOperation = new HashMap<>();

    private volatile StoredCopies stored = ord -> null;

    /** The open's shared keys of values, buckets and names, until {@link #endOfOpenHashing}. */
    private volatile MetadataIndex.OpenMemo openMemo = new MetadataIndex.OpenMemo();

    /**
     * @param dimension the collection's vector dimension
     * @param hashes the store's keyed hash, under which the metadata index keeps its keys
     */
    public RecordCatalogue(int dimension, KeyedHash hashes) {
        this.vectors = new VectorColumn(dimension);
        this.metadata = new MetadataIndex(hashes);
    }

    /**
     * Where reads find the records' text and metadata from now on: the collection's storage, once
     * it is open.
     */
    public void readTextFrom(StoredCopies copies) {
        this.stored = copies;
    }

    // ---- reads (no lock) --------------------------------------------------------------------

    /**
     * Copies the vector of {@code e} into {@code out} (at least the dimension long) and returns
     * whether the copy is good: false when the entry no longer holds its ordinal (deleted or
     * replaced meanwhile, and its row perhaps zeroed or reused), so {@code out} holds nothing to
     * trust.
     */
    public boolean readVector(Entry e, float[] out) {
        vectors.read(e.ordinal(), out);
        // The row's loads before the entry's: a writer unlinks the entry, and only then changes the
        // row.
        VarHandle.loadLoadFence();
        if (entry(e.ordinal()) == e) {
            return true;
        }
        Arrays.fill(out, 0, vectors.dimension(), 0f);
        return false;
    }

    /**
     * A copy of the record at {@code e}, vector included, with arrays of its own (what get and
     * search hand out), or null when the entry no longer holds its ordinal.
     */
    public VectorRecord materialise(Entry e) {
        VectorRecord copy = null;
        if (e.readsCopy()) {
            copy = storedCopy(e);
            if (copy == null) {
                return null;
            }
        }
        float[] v = new float[vectors.dimension()];
        // The vector's read checks the entry after the copy's, so both belong to this entry.
        if (!readVector(e, v)) {
            if (copy != null) {
                RecordAccess.wipe(copy);
            }
            return null;
        }
        return copy == null
                ? RecordAccess.joined(e.record(), v, null, Map.of())
                : RecordAccess.joined(
                        e.record(), v, RecordAccess.textUnsafe(copy), copy.metadata());
    }

    /**
     * The text of the record at {@code e}, decrypted from its stored copy; null when it has none or
     * it left.
     */
    public String text(Entry e) {
        if (!e.hasText()) {
            return null;
        }
        VectorRecord copy = storedCopy(e);
        if (copy == null) {
            return null;
        }
        try {
            return copy.text();
        } finally {
            RecordAccess.wipe(copy);
        }
    }

    /**
     * The metadata of the record at {@code e}, decrypted from its stored copy (an empty map when it
     * has none); null when it left.
     */
    public Map<String, Object> metadata(Entry e) {
        if (!e.hasMetadata()) {
            return Map.of();
        }
        VectorRecord copy = storedCopy(e);
        if (copy == null) {
            return null;
        }
        RecordAccess.wipe(copy);
        return copy.metadata();
    }

    /**
     * The record at {@code e} with its text and metadata from its stored copy, without its vector;
     * null when it left. A forget's checks read records whole this way.
     */
    public VectorRecord withStoredParts(Entry e) {
        if (!e.readsCopy()) {
            return RecordAccess.joined(e.record(), null, null, Map.of());
        }
        VectorRecord copy = storedCopy(e);
        return copy == null
                ? null
                : RecordAccess.joined(
                        e.record(), null, RecordAccess.textUnsafe(copy), copy.metadata());
    }

    /**
     * The ordinals of {@code candidates} whose metadata passes {@code filter}, exactly as {@link
     * Filter#test} says of each: from the metadata index, decrypting only the records a part of the
     * filter it cannot answer must look at (see {@link MetadataIndex}).
     *
     * @param writer true under the writer mutex (the writer's view), false for a lock-free read
     *     (what was last published)
     */
    public RoaringBitmap matching(Filter filter, RoaringBitmap candidates, boolean writer) {
        return metadata.matching(
                filter,
                candidates,
                writer ? metadata::writerView : metadata::publishedView,
                ord -> {
                    Entry e = entry(ord);
                    return e == null ? null : metadata(e);
                });
    }

    /**
     * The decrypted copy of the record at {@code e}, its vector zeroed (the caller wipes its text),
     * or null when the entry no longer holds its ordinal or is hidden with its copy gone (a forget
     * destroyed the key). Fails when a live entry has no copy of its own where the storage says it
     * lies.
     */
    private VectorRecord storedCopy(Entry e) {
        VectorRecord copy;
        try {
            copy = stored.read(e.ordinal());
        } catch (IOException | RuntimeException x) {
            if (entry(e.ordinal()) != e) {
                return null; // the copy left with its record, or the ordinal's file was replaced
            }
            if (x instanceof IOException io) {
                throw new UncheckedIOException(io);
            }
            throw (RuntimeException) x;
        }
        if (copy != null) {
            float[] v = RecordAccess.vectorUnsafe(copy);
            if (v != null) {
                Arrays.fill(v, 0f);
            }
            if (copy.id().equals(e.record().id())
                    && copy.tenant().equals(e.record().tenant())
                    && (!e.hasText() || RecordAccess.textUnsafe(copy) != null)) {
                return copy;
            }
            RecordAccess.wipe(copy);
        }
        if (entry(e.ordinal()) != e || hidden.contains(e.ordinal())) {
            return null;
        }
        throw new IllegalStateException(
                "the live record at ordinal "
                        + e.ordinal()
                        + " has no stored copy of its own"
                        + (copy == null ? "" : " (the copy there is another record's)"));
    }

    /**
     * The record at {@code e} joined with a copy of its vector, without its text (which only its
     * stored copy holds; see {@link #text}): what a forget takes of the records it removes. Null
     * when the entry no longer holds its ordinal.
     */
    public VectorRecord withItsVector(Entry e) {
        float[] v = new float[vectors.dimension()];
        return readVector(e, v) ? RecordAccess.withVector(e.record(), v) : null;
    }

    /** The column itself, for tests that plant a fault in it. */
    VectorColumn vectors() {
        return vectors;
    }

    /** The live entry at an ordinal (acquire load), or null. */
    public Entry entry(int ord) {
        Entry[] es = entries;
        return ord >= 0 && ord < es.length ? (Entry) ENTRIES.getAcquire(es, ord) : null;
    }

    /** The entry at {@code ordinal} if it is the record (tenant, id), else null. */
    public Entry entryFor(String tenant, String id, int ordinal) {
        Entry e = entry(ordinal);
        // The id map is keyed by a hash: confirm the entry really is this record.
        return e != null && e.record().tenant().equals(tenant) && e.record().id().equals(id)
                ? e
                : null;
    }

    /** Records published to reads. */
    public int live() {
        return live;
    }

    /** The stamp of the last write whose effects are all published. */
    public long publishedStamp() {
        return publishedStamp;
    }

    /** Ordinals no read may return (an immutable bitmap). */
    public RoaringBitmap hidden() {
        return hidden;
    }

    /** Ordinals forgets and holds hide (an immutable bitmap); a get honours these. */
    public RoaringBitmap marked() {
        return marked;
    }

    /**
     * What one publish showed a search: its stamp, the tenant's and the subject's ordinals
     * (immutable; null when none), and how many tenants had records.
     */
    public record PublishedViews(
            long stamp, RoaringBitmap tenant, RoaringBitmap subject, int tenants) {}

    /**
     * The tenant's and the subject's (when not null) ordinals and the stamp, all as of the same
     * publish. A search follows replacements from what its candidates showed at each ordinal: it
     * must know which writes those views already hold, or a move out of an ordinal that was freed
     * and reused before it read them would name the wrong record. Waits out a publish in progress
     * (a few map writes; the writer does nothing slow inside one).
     */
    public PublishedViews publishedAsOf(String tenant, String subject) {
        for (int spins = 0; ; spins++) {
            long before = publishing;
            if ((before & 1) == 0) {
                RoaringBitmap t = tenantView.get(tenant);
                RoaringBitmap s =
                        subject == null ? null : subjectView.get(new SubjectKey(tenant, subject));
                int tenants = tenantView.size();
                long stamp = publishedStamp;
                if (publishing == before) {
                    return new PublishedViews(stamp, t, s, tenants);
                }
            }
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield(); // the writer may have been descheduled mid-publish
            }
        }
    }

    /** A tenant's live ordinals as last published (immutable), or null. */
    public RoaringBitmap publishedTenant(String tenant) {
        return tenantView.get(tenant);
    }

    /** The tenants with live records, as last published (a copy). */
    public Set<String> publishedTenants() {
        return Set.copyOf(tenantView.keySet());
    }

    // ---- the writer's view (under the writer mutex) ------------------------------------------

    /** A tenant's live ordinals (the writer's bitmap: do not keep or change it), or null. */
    public RoaringBitmap tenantOrdinals(String tenant) {
        return byTenant.get(tenant);
    }

    /**
     * A subject's live ordinals in a tenant (the writer's bitmap: do not keep or change it), or
     * null.
     */
    public RoaringBitmap subjectOrdinals(String tenant, String subject) {
        return bySubject.get(new SubjectKey(tenant, subject));
    }

    /** Records whose string metadata holds this folded join key (writer's bitmap), or null. */
    public RoaringBitmap withMetadataKey(String folded) {
        return metadata.writerView(metadata.joinKey(folded));
    }

    /** Records whose {@code derivedFrom} names this id (writer's bitmap), or null. */
    public RoaringBitmap derivedFrom(String id) {
        return byDerivedFrom.get(id);
    }

    /** One past the highest ordinal ever linked. */
    public int ordinalHighWater() {
        return ordinalHighWater;
    }

    /** The ordinals free for reuse, in ascending order. */
    public IntIterator freeOrdinals() {
        return freeOrdinals.getIntIterator();
    }

    /** The stamp for the next write. */
    public long nextStamp() {
        return ++nextStamp;
    }

    /**
     * Records of a tenant a scope names (hidden ones included), from the subject's bitmap when it
     * is a subject scope.
     */
    public RoaringBitmap scopeOrdinals(
            String tenant, Predicate<VectorRecord> inScope, String subject) {
        RoaringBitmap src =
                subject != null ? subjectOrdinals(tenant, subject) : tenantOrdinals(tenant);
        RoaringBitmap out = new RoaringBitmap();
        if (src != null) {
            src.forEach(
                    (int ord) -> {
                        if (inScope.test(entry(ord).record())) {
                            out.add(ord);
                        }
                    });
        }
        return out;
    }

    /**
     * Adds a record at an ordinal to the entries and the writer's bitmaps; takes the ordinal off
     * the free list. The record must be the store's own copy: its vector moves into the column and
     * the record's array is zeroed.
     */
    public void link(int ord, VectorRecord r) {
        float[] v = RecordAccess.vectorUnsafe(r);
        vectors.set(ord, v);
        Arrays.fill(v, 0f);
        linkStored(ord, r);
    }

    /**
     * At open, before the records are linked: grows the column to hold every ordinal below {@code
     * rows}, so that {@link #storeLoadedVector} may run on several threads.
     */
    public void reserveRows(int rows) {
        vectors.reserve(rows);
    }

    /**
     * At open: copies a loaded record's vector into its row (reserved by {@link #reserveRows}) and
     * wipes the record's own array. Safe on several threads at once for distinct ordinals; nothing
     * reads the row until {@link #linkStored} publishes its entry.
     */
    public void storeLoadedVector(int ord, VectorRecord r) {
        float[] v = RecordAccess.vectorUnsafe(r);
        vectors.setReserved(ord, v);
        Arrays.fill(v, 0f);
    }

    /** At open, before the records are linked: copies the row at {@code ord} into {@code out}. */
    void readLoadedRow(int ord, float[] out) {
        vectors.read(ord, out);
    }

    /** At open: zeros a row that took a vector whose record did not stay live. */
    void clearLoadedRow(int ord) {
        vectors.clear(ord);
    }

    /** After a failed open: zeros every row, so no plaintext vector outlives the catalogue. */
    public void wipeRows() {
        vectors.wipe();
    }

    /**
     * Links a record whose vector is already in its row ({@link #storeLoadedVector}), as {@link
     * #link} does. Writer only.
     */
    public void linkStored(int ord, VectorRecord r) {
        linkStored(ord, r, metadataKeysOf(r));
    }

    /**
     * The keys the metadata index keeps a record under ({@link #linkStored(int, VectorRecord,
     * MetadataIndex.Keys)} takes them): keyed hashes, computed on any thread.
     */
    private MetadataIndex.Keys metadataKeysOf(VectorRecord r) {
        return metadata.keysOf(r.metadata());
    }

    /**
     * The keys the metadata index keeps a loaded record under, for an open: values, names and the
     * coarser buckets of the records' numbers are hashed once for all of them (see {@link
     * MetadataIndex.OpenMemo}); the open {@link #endOfOpenHashing ends} it.
     */
    public MetadataIndex.Keys metadataKeysOfLoaded(VectorRecord r) {
        MetadataIndex.OpenMemo memo = openMemo;
        return metadata.keysOf(r.metadata(), memo);
    }

    /**
     * An open's linking starts: the metadata index notes each record's keys and adds them, value by
     * value, at {@link #endLinkingLoaded} (or before anything reads or removes them).
     */
    public void startLinkingLoaded() {
        metadata.startBulk();
    }

    /** An open's linking ends: the metadata index holds every linked record. */
    public void endLinkingLoaded() {
        metadata.endBulk();
    }

    /** After an open's hashing: drops the shared keys and the names and values they hold. */
    public void endOfOpenHashing() {
        MetadataIndex.OpenMemo memo = openMemo;
        openMemo = null;
        if (memo != null) {
            memo.clear();
        }
    }

    /**
     * {@link #linkStored(int, VectorRecord)} with the record's metadata keys ({@link
     * #metadataKeysOfLoaded}) computed already.
     */
    public void linkStored(int ord, VectorRecord r, MetadataIndex.Keys keys) {
        boolean hasText = RecordAccess.textUtf8Length(r) > 0;
        r = canonical(r);
        Entry[] es = entries;
        if (ord >= es.length) {
            int cap = Math.max(ord + 1, es.length + (es.length >> 1));
            es = Arrays.copyOf(es, cap);
            freedAt = Arrays.copyOf(freedAt, cap);
            entries = es;
        }
        freeOrdinals.remove(ord);
        ENTRIES.setRelease(es, ord, new Entry(ord, r, freedAt[ord], hasText, keys.kept()));
        ordinalHighWater = Math.max(ordinalHighWater, ord + 1);
        liveCount++;
        metadata.add(ord, keys);
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

    /**
     * The record without its vector, text and metadata (see {@link RecordAccess#catalogued}),
     * holding the tenant and subject strings the bitmaps' keys hold (decoded records each bring
     * copies of their own). The keys go when their last record does, so a forgotten subject's name
     * is not kept.
     */
    private VectorRecord canonical(VectorRecord r) {
        String tenant = tenantNames.computeIfAbsent(r.tenant(), t -> t);
        String subject = null;
        if (r.subject() != null) {
            subject =
                    subjectNames
                            .computeIfAbsent(new SubjectKey(tenant, r.subject()), k -> k)
                            .subject();
        }
        return RecordAccess.catalogued(r, tenant, subject);
    }

    /** After loading: every ordinal below the high water that holds no record is free. */
    public void freeGaps() {
        for (int ord = 0; ord < ordinalHighWater; ord++) {
            if (entries[ord] == null) {
                freeOrdinals.add(ord);
            }
        }
    }

    /** Takes an entry out of the entries and the writer's bitmaps (not yet free for reuse). */
    public void unlink(Entry e) {
        VectorRecord r = e.record();
        ENTRIES.setRelease(entries, e.ordinal(), (Entry) null);
        liveCount--;
        metadata.remove(e.ordinal(), e.metadataKeys());
        for (String src : r.derivedFrom()) {
            removeFrom(byDerivedFrom, src, e.ordinal());
        }
        removeFrom(byTenant, r.tenant(), e.ordinal());
        touchedTenants.add(r.tenant());
        if (!byTenant.containsKey(r.tenant())) {
            tenantNames.remove(r.tenant());
        }
        if (r.subject() != null) {
            SubjectKey key = new SubjectKey(r.tenant(), r.subject());
            removeFrom(bySubject, key, e.ordinal());
            touchedSubjects.add(key);
            if (!bySubject.containsKey(key)) {
                subjectNames.remove(key);
            }
        }
    }

    /**
     * Frees unlinked ordinals for reuse, stamped with the write that freed them, and takes them out
     * of every hidden set: a record that reuses one must not be hidden.
     */
    public void free(RoaringBitmap ords, long stamp) {
        // The unlinks before the zeroing: a read that sees a zeroed float sees its entry gone.
        VarHandle.storeStoreFence();
        ords.forEach(
                (int ord) -> {
                    vectors.clear(ord);
                    freedAt[ord] = stamp;
                    freeOrdinals.add(ord);
                });
        synchronized (hiddenByOperation) {
            hiddenByOperation.values().forEach(b -> b.andNot(ords));
            hiddenByOperation.values().removeIf(RoaringBitmap::isEmpty);
            publishHidden();
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

    /** Publishes the bitmaps the last write changed (immutable copies) and then its stamp. */
    public void publish(long stamp) {
        publish(stamp, 0);
    }

    /**
     * {@link #publish(long)} while {@code leaving} linked records are on their way out (replaced
     * versions, still searchable until their new versions are): the published count leaves them out
     * already, so a replacement never shows as one record more.
     */
    public void publish(long stamp, int leaving) {
        // The metadata first: a search reads the tenant's (or subject's) bitmap and then the
        // metadata's, so one that sees a new record among the tenant's sees its metadata keys
        // too, and a not-filter cannot let it through for want of a key not yet published.
        publishing = publishing + 1; // odd: the writer's only, under its mutex
        metadata.publish();
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
        live = liveCount - leaving;
        publishedStamp = stamp;
        publishing = publishing + 1; // even again: the views and the stamp agree
    }

    /** Hides ordinals under an operation (a forget, a hold, or {@link #REMOVING}) and publishes. */
    public void hide(String operation, RoaringBitmap ords) {
        synchronized (hiddenByOperation) {
            hiddenByOperation.merge(operation, ords.clone(), (a, b) -> RoaringBitmap.or(a, b));
            publishHidden();
        }
    }

    /** Lifts what an operation hid (its records are gone, or it ended). */
    public void unhide(String operation) {
        synchronized (hiddenByOperation) {
            if (hiddenByOperation.remove(operation) != null) {
                publishHidden();
            }
        }
    }

    private void publishHidden() {
        RoaringBitmap all = new RoaringBitmap();
        RoaringBitmap byForgetsAndHolds = new RoaringBitmap();
        hiddenByOperation.forEach(
                (op, b) -> {
                    all.or(b);
                    if (!op.equals(REMOVING)) {
                        byForgetsAndHolds.or(b);
                    }
                });
        marked = byForgetsAndHolds;
        hidden = all;
    }

    /** The ordinals of entries. */
    public static RoaringBitmap ordinalsOf(List<Entry> list) {
        RoaringBitmap out = new RoaringBitmap();
        for (Entry e : list) {
            out.add(e.ordinal());
        }
        return out;
    }

    /**
     * Checks that the bitmaps agree with the records: the tenant bitmaps count every live record,
     * what reads see equals what the writer holds (no write may be in flight), and the join-key
     * indexes equal the records' metadata and derivedFrom. Adds its findings to {@code r}.
     */
    public void checkBitmaps(IntegrityReport.Builder r) {
        r.expect("bitmap-mismatch")
                .expect("published-view-mismatch")
                .expect("join-index-mismatch")
                .expect("freed-vector-residue");
        float[] row = new float[vectors.dimension()];
        int freedRows = 0;
        for (IntIterator it = freeOrdinals.getIntIterator(); it.hasNext(); ) {
            int ord = it.next();
            vectors.read(ord, row);
            freedRows++;
            for (float x : row) {
                if (Float.floatToRawIntBits(x)
                        != 0) { // bits: a -0.0f left behind is not zero bytes
                    r.violation(
                            "freed-vector-residue",
                            "freed ordinal " + ord + " still holds a vector in the record column");
                    break;
                }
            }
        }
        Arrays.fill(row, 0f);
        r.checked("freed vector rows", freedRows);
        Map<MetadataIndex.Key, RoaringBitmap> keysExpected = new HashMap<>();
        Map<String, RoaringBitmap> derivedExpected = new HashMap<>();
        for (int ord = 0; ord < ordinalHighWater; ord++) {
            Entry e = entry(ord);
            if (e == null) {
                continue;
            }
            metadata.expect(keysExpected, ord, e.metadataKeys());
            for (String src : e.record().derivedFrom()) {
                derivedExpected.computeIfAbsent(src, k -> new RoaringBitmap()).add(ord);
            }
        }
        long tenantBits = 0;
        for (RoaringBitmap b : byTenant.values()) {
            tenantBits += b.getCardinality();
        }
        if (tenantBits != live) {
            r.violation(
                    "bitmap-mismatch",
                    "tenant bitmaps hold " + tenantBits + ", collection " + live);
        }
        if (!tenantView.equals(byTenant) || !subjectView.equals(bySubject)) {
            r.violation(
                    "published-view-mismatch",
                    "the tenant or subject bitmaps searches read differ from the records");
        }
        if (!metadata.holdsExactly(keysExpected) || !derivedExpected.equals(byDerivedFrom)) {
            r.violation(
                    "join-index-mismatch",
                    "the metadata and join-key indexes differ from the records' metadata keys"
                            + " and derivedFrom");
        }
        r.checked("tenants", byTenant.size());
        r.checked("metadata keys", metadata.size());
    }

    /** Every live entry, in ordinal order. */
    public List<Entry> liveEntries() {
        List<Entry> out = new ArrayList<>(liveCount);
        for (int ord = 0; ord < ordinalHighWater; ord++) {
            Entry e = entry(ord);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }
}
