package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.record.RecordAccess;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    // Entries are told apart by identity (stillHolds), never by equals: an array component is fine.
    @SuppressWarnings("ArrayRecordComponent")
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

    /** Records published to reads ({@link #liveCount} as of the last publish). */
    private volatile int live;

    // ---- the writer's own state (under the writer mutex) -----------------------------------
    private final RoaringBitmap freeOrdinals = new RoaringBitmap();

    /** Each tenant's and subject's ordinals: the writer's and the published. */
    private final ScopeBitmaps scopes = new ScopeBitmaps();

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

    /** One past the highest ordinal ever linked. */
    private int ordinalHighWater;

    /** Per ordinal, the stamp of the write that last freed it. */
    private long[] freedAt = new long[16];

    private long nextStamp;

    /** Linked records, counted as they are linked and unlinked; published as {@link #live}. */
    private int liveCount;

    /** Ordinals no read may return, by the operation that hid them. */
    private final HiddenOrdinals hidden = new HiddenOrdinals(REMOVING);

    /** Reads of the records' text and metadata from their stored copies. */
    private final StoredPartReader parts = new StoredPartReader(this);

    /** The open's shared keys of values, buckets and names, until {@link #endOfOpenHashing}. */
    private volatile OpenMemo openMemo = new OpenMemo();

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
        parts.readFrom(copies);
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
        if (stillHolds(e)) {
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
            copy = parts.copyOf(e);
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
        return parts.text(e);
    }

    /**
     * The metadata of the record at {@code e}, decrypted from its stored copy (an empty map when it
     * has none); null when it left.
     */
    public Map<String, Object> metadata(Entry e) {
        return parts.metadata(e);
    }

    /**
     * The record at {@code e} with its text and metadata from its stored copy, without its vector;
     * null when it left. A forget's checks read records whole this way.
     */
    public VectorRecord withStoredParts(Entry e) {
        return parts.withStoredParts(e);
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

    /**
     * Whether {@code e} is still the entry at its ordinal: the very entry, not an equal one (a
     * record unlinked and linked again at its ordinal makes a new entry).
     */
    @SuppressWarnings("ReferenceEquality") // identity is the point: see above
    boolean stillHolds(Entry e) {
        return entry(e.ordinal()) == e;
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
        return scopes.publishedStamp();
    }

    /** Ordinals no read may return (an immutable bitmap). */
    public RoaringBitmap hidden() {
        return hidden.all();
    }

    /** Ordinals forgets and holds hide (an immutable bitmap); a get honours these. */
    public RoaringBitmap marked() {
        return hidden.byForgetsAndHolds();
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
        return scopes.publishedAsOf(tenant, subject);
    }

    /** A tenant's live ordinals as last published (immutable), or null. */
    public RoaringBitmap publishedTenant(String tenant) {
        return scopes.publishedTenant(tenant);
    }

    /** The tenants with live records, as last published (a copy). */
    public Set<String> publishedTenants() {
        return scopes.publishedTenants();
    }

    // ---- the writer's view (under the writer mutex) ------------------------------------------

    /** A tenant's live ordinals (the writer's bitmap: do not keep or change it), or null. */
    public RoaringBitmap tenantOrdinals(String tenant) {
        return scopes.tenantOrdinals(tenant);
    }

    /**
     * A subject's live ordinals in a tenant (the writer's bitmap: do not keep or change it), or
     * null.
     */
    public RoaringBitmap subjectOrdinals(String tenant, String subject) {
        return scopes.subjectOrdinals(tenant, subject);
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
     * OpenMemo}); the open {@link #endOfOpenHashing ends} it.
     */
    public MetadataIndex.Keys metadataKeysOfLoaded(VectorRecord r) {
        OpenMemo memo = openMemo;
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
        OpenMemo memo = openMemo;
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
        r = scopes.canonical(r);
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
        scopes.add(ord, r.tenant(), r.subject());
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
            ScopeBitmaps.removeFrom(byDerivedFrom, src, e.ordinal());
        }
        scopes.remove(e.ordinal(), r.tenant(), r.subject());
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
        hidden.release(ords);
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
        scopes.beginPublish();
        metadata.publish();
        scopes.publishViews();
        live = liveCount - leaving;
        scopes.endPublish(stamp);
    }

    /** Hides ordinals under an operation (a forget, a hold, or {@link #REMOVING}) and publishes. */
    public void hide(String operation, RoaringBitmap ords) {
        hidden.hide(operation, ords);
    }

    /** Lifts what an operation hid (its records are gone, or it ended). */
    public void unhide(String operation) {
        hidden.unhide(operation);
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
        long tenantBits = scopes.tenantOrdinalCount();
        if (tenantBits != live) {
            r.violation(
                    "bitmap-mismatch",
                    "tenant bitmaps hold " + tenantBits + ", collection " + live);
        }
        if (!scopes.publishedAgree()) {
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
        r.checked("tenants", scopes.tenants());
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
