package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexView;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.io.TestPoints;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.CollectionStorage.Placed;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.internal.text.TextIndexOpener;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.roaringbitmap.RoaringBitmap;

/**
 * How a collection stores, indexes and finds its records: the engine behind the public {@code
 * VectorCollection}. Each record gets an int ordinal; the index and the candidate bitmaps (per
 * tenant, per subject, in the {@link RecordCatalogue}) speak ordinals.
 *
 * <p>Concurrency. Writes (upserts, deletes, a forget's cleanup, checkpoints) take turns on one
 * mutex ({@link #writer()}), which they hold across their fsyncs: the log has one writer. Reads
 * (search, get, size, ids, and the forget probe) take no lock at all, so no read ever waits for a
 * write, for a queued writer, or for a forget's cleanup; they read what the catalogue publishes. A
 * record leaves reads in this order: hidden, then unlinked from the records, then removed from the
 * index, and only then is its ordinal free for reuse (stamped with the write that freed it) and
 * unhidden. A search reads the stamp with its candidates' bitmaps, both of one publish; a hit whose
 * ordinal was freed after that might have been scored against a vector the ordinal no longer holds,
 * so it is dropped and the search runs again. Hence a record deleted before a search starts is
 * never returned, a record deleted before a search materialises its hits is never returned, and a
 * returned score is the score of the returned record.
 *
 * <p>Its parts: {@link CollectionOpening} opens it, {@link CollectionWrites} changes its records,
 * {@link CollectionIndex} keeps its vector index and the index's persisted generations, {@link
 * CollectionSearch} and {@link SearchModes} search it, {@link CollectionIntegrity} checks it.
 *
 * <p>The forget protocol's work on a collection (mark, cleanup, proofs, probe) is not here: the
 * forget engine's {@code CollectionEraser} does it over {@link #catalogue()}, {@link #storage()}
 * and {@link #index()}, under {@link #writer()}.
 */
public final class CollectionEngine {

    /** Checks every write batch against the scopes of forget operations. */
    @FunctionalInterface
    public interface WriteFence {
        WriteFence NONE = (collection, batch) -> {};

        /**
         * Refuses a batch that writes into a forgotten scope.
         *
         * @throws dev.nepenthe.core.forget.ForgottenScopeException naming the batch position and
         *     the operation
         */
        void check(String collection, List<VectorRecord> batch);
    }

    /** Checks every plain delete, and every replacement, against the legal holds. */
    @FunctionalInterface
    public interface DeleteGuard {
        DeleteGuard NONE = (what, tenant, subject, doomed) -> {};

        /**
         * Refuses a delete that would remove a held record, or a subject's key under a hold.
         *
         * @param what what the delete is, for the message (no record data)
         * @param tenant the records' tenant
         * @param subject the subject whose key the delete destroys, or null
         * @param doomed the records the delete would remove
         * @throws dev.nepenthe.core.forget.HeldRecordsException naming the holds
         */
        void check(String what, String tenant, String subject, List<VectorRecord> doomed);
    }

    /** Opens the storage, feeding each stored record to the sink. */
    @FunctionalInterface
    public interface StorageOpener {
        CollectionStorage open(CollectionStorage.LoadSink sink) throws IOException;
    }

    /** Opens the collection's text index reconciled with the records (or rebuilt from them). */
    @FunctionalInterface
    public interface TextOpener {
        TextIndexOpener.Opened open(TextIndex.Records records) throws IOException;
    }

    private final CollectionSpec spec;
    private final String id;
    private final CollectionStorage storage;

    /** The index serving now and its persisted generations. */
    private final CollectionIndex index;

    private final OpenReport.IndexRecovery indexRecovery;

    /** What opening did with the text index, or null when the collection has none. */
    private final OpenReport.TextRecovery textRecovery;

    /** The text index, or null when the collection has none. */
    private final TextIndex text;

    /** Writes take turns on this; reads never take it. */
    private final ReentrantLock writer = new ReentrantLock();

    private final RecordCatalogue catalogue;
    private final CollectionSearch search = new CollectionSearch(this);
    private final SearchModes modes;
    private final CollectionWrites writes;
    private final CollectionIntegrity integrity;

    /**
     * Which ordinal each recent replacement left for which: searches follow it (see {@link
     * ReplacementLog}).
     */
    private final ReplacementLog replacements = new ReplacementLog();

    private volatile boolean closed;

    /**
     * The store's test points: tests hold a search between the index search and materialisation
     * ({@link TestPoints#afterIndexSearch}), to show that a forget marked meanwhile still keeps its
     * records out of the result.
     */
    private final TestPoints testPoints;

    /**
     * Opens the collection on its storage, with a text index ({@code textOpener} non-null) and an
     * embedder: every stored record is validated and indexed, and the text index reconciled with
     * the records, before this returns (see {@link CollectionOpening}). The index is loaded from
     * its newest persisted generation when one is readable (then only the records written or
     * removed since are applied to it), else built from the records ({@code generations} null:
     * always built). {@code hashes} keys the catalogue's metadata index.
     */
    public CollectionEngine(
            CollectionSpec spec,
            String id,
            Supplier<VectorIndex> indexFactory,
            IndexGenerations generations,
            StorageOpener opener,
            TextOpener textOpener,
            Embedding embedding,
            KeyedHash hashes,
            TestPoints testPoints)
            throws IOException {
        this.spec = spec;
        this.id = id;
        this.testPoints = testPoints;
        RecordValidator validator = new RecordValidator(spec);
        RecordCatalogue records = new RecordCatalogue(spec.dimension(), hashes);
        this.catalogue = records;
        CollectionOpening.Opened opened =
                CrashPoints.during(
                        testPoints,
                        () ->
                                CollectionOpening.open(
                                        spec,
                                        id,
                                        records,
                                        validator,
                                        indexFactory,
                                        generations,
                                        opener,
                                        textOpener));
        this.storage = opened.storage();
        this.index = opened.index();
        this.indexRecovery = opened.indexRecovery();
        this.text = opened.text();
        this.textRecovery = opened.textRecovery();
        this.modes = new SearchModes(spec.name(), validator, embedding, search, text);
        this.writes = new CollectionWrites(this, validator, embedding, index, text);
        this.integrity = new CollectionIntegrity(this, text);
    }

    /** The store's test points. */
    public TestPoints testPoints() {
        return testPoints;
    }

    /** What opening did with the vector index. */
    public OpenReport.IndexRecovery indexRecovery() {
        return indexRecovery;
    }

    /** What opening did with the text index, or null when the collection has none. */
    public OpenReport.TextRecovery textRecovery() {
        return textRecovery;
    }

    /** The collection's text index, or null when it has none. */
    public TextIndex textIndex() {
        return text;
    }

    public CollectionSpec spec() {
        return spec;
    }

    public String name() {
        return spec.name();
    }

    /**
     * The collection's random incarnation id (a dropped and re-created collection gets a new one).
     */
    public String id() {
        return id;
    }

    /** The mutex every write holds; the forget engine's writes hold it too. */
    public ReentrantLock writer() {
        return writer;
    }

    public RecordCatalogue catalogue() {
        return catalogue;
    }

    ReplacementLog replacements() {
        return replacements;
    }

    public CollectionStorage storage() {
        return storage;
    }

    /** The index behind this collection, as last swapped in. */
    public VectorIndex index() {
        return index.current();
    }

    /** Refuses writes that fall in a forgotten scope from now on. */
    public void setFence(WriteFence f) {
        writes.setFence(f);
    }

    /** Sets the guard every plain delete of this collection passes. */
    public void setDeleteGuard(DeleteGuard g) {
        writes.setDeleteGuard(g);
    }

    /**
     * Refuses, under the writer mutex, when a legal hold keeps any record of this collection (a
     * drop would remove it).
     *
     * @throws dev.nepenthe.core.forget.HeldRecordsException naming the holds
     */
    public void checkDroppable() {
        writes.checkDroppable();
    }

    /**
     * Inserts or replaces a batch atomically, durable when this returns (see
     * VectorCollection#upsertAll).
     */
    public void upsertAll(List<VectorRecord> batch) {
        withPoints(
                () -> {
                    writes.upsertAll(batch);
                    return null;
                });
    }

    /**
     * Runs a call into the storage with the store's test points bound to this thread, so that the
     * storage's crash points report to them (see {@link CrashPoints}).
     */
    private <T, X extends Throwable> T withPoints(CrashPoints.Call<T, X> call) throws X {
        return CrashPoints.during(testPoints, call);
    }

    /** The live entry for (tenant, id), through the persistent id map; under the writer mutex. */
    public Entry lookup(String tenant, String id) {
        return catalogue.entryFor(tenant, id, storage.ordinalOf(tenant, id));
    }

    /**
     * {@link #lookup} for a reader that holds no lock. A replacement switches the id map to the new
     * ordinal and only then unlinks the old entry, so a reader that read the old ordinal and then
     * found its entry gone (or reused) reads the map again and finds the new version.
     */
    private Entry lookupWhileWritten(String tenant, String id) {
        int ord = storage.ordinalOf(tenant, id);
        Entry e = catalogue.entryFor(tenant, id, ord);
        for (int attempt = 0; e == null && ord >= 0 && attempt < 3; attempt++) {
            int again = storage.ordinalOf(tenant, id);
            if (again == ord) {
                break;
            }
            ord = again;
            e = catalogue.entryFor(tenant, id, ord);
        }
        return e;
    }

    /** The record (tenant, id), unless it is absent or a forget or hold hides it. Takes no lock. */
    public Optional<VectorRecord> get(String tenant, String id) {
        ensureOpen();
        for (int attempt = 0; ; attempt++) {
            Entry e = lookupWhileWritten(tenant, id);
            if (e == null || catalogue.marked().contains(e.ordinal())) {
                return Optional.empty();
            }
            VectorRecord r = catalogue.materialise(e);
            if (r != null) {
                return Optional.of(r);
            }
            if (attempt == 3) {
                // Replaced or deleted under us every time: the record is being changed, and a
                // get racing a delete may miss it as it may miss a deleted one.
                return Optional.empty();
            }
        }
    }

    /**
     * Deletes records by id within a tenant; unknown ids are skipped. Returns how many were
     * deleted.
     */
    public int deleteAll(String tenant, List<String> ids) {
        return withPoints(() -> writes.deleteAll(tenant, ids));
    }

    /**
     * Deletes live entries (caller holds the writer mutex): journal and log first, then what reads
     * see, then the live files are rewritten without them.
     */
    public int deleteEntries(List<Entry> doomed) {
        return withPoints(() -> writes.deleteEntries(doomed));
    }

    /** Deletes every record of one subject in one tenant and destroys its key; returns how many. */
    public int deleteSubject(String tenant, String subject) {
        return withPoints(() -> writes.deleteSubject(tenant, subject));
    }

    /**
     * Removes entries from what reads see (the caller has deleted them durably, or they are hidden
     * already): hidden, unlinked, removed from the index in one batch, and only then their ordinals
     * freed (stamped) and unhidden. Under the writer mutex.
     */
    public void removeFromReads(List<Entry> doomed, long stamp) {
        writes.removeFromReads(doomed, stamp);
    }

    /** The persisted index generation serving now, or -1 (tests and the forget evidence). */
    public long indexGeneration() {
        return index.generation();
    }

    /** Its file, or null. */
    public Path indexGenerationFile() {
        return index.generationFile();
    }

    /** Entries as the storage's placements. */
    public static List<Placed> placed(List<Entry> entries) {
        return CollectionWrites.placed(entries);
    }

    /**
     * The k nearest visible records of the request's tenant, narrowed by its subject and filter. No
     * lock.
     */
    public List<SearchHit> search(SearchRequest request) {
        ensureOpen();
        return modes.search(request);
    }

    /** Number of records in all tenants, as last published. */
    public int size() {
        return catalogue.live();
    }

    /** Number of records in one tenant, as last published. */
    public int size(String tenant) {
        RoaringBitmap b = catalogue.publishedTenant(tenant);
        return b == null ? 0 : b.getCardinality();
    }

    /**
     * Ids of a tenant's visible records; waits for a write in flight, so a replaced record is
     * listed once.
     */
    public List<String> ids(String tenant) {
        writer.lock();
        try {
            RoaringBitmap b = catalogue.tenantOrdinals(tenant);
            List<String> out = new ArrayList<>();
            if (b != null) {
                RoaringBitmap hiddenNow = catalogue.hidden();
                b.forEach(
                        (int ord) -> {
                            if (!hiddenNow.contains(ord)) {
                                out.add(catalogue.entry(ord).record().id());
                            }
                        });
            }
            return out;
        } finally {
            writer.unlock();
        }
    }

    /** Whether the tenant has at least one live record here. */
    public boolean hasTenant(String tenant) {
        return catalogue.publishedTenant(tenant) != null;
    }

    /** The tenants that have at least one live record here (a snapshot of the published view). */
    public Set<String> tenants() {
        ensureOpen();
        return catalogue.publishedTenants();
    }

    /** The index's structure by record; writes wait while it is read. */
    public IndexView describeIndex() {
        writer.lock();
        try {
            ensureOpen();
            return integrity.describe(index.current());
        } finally {
            writer.unlock();
        }
    }

    /**
     * The index's own integrity check plus the collection's: the index holds exactly the live
     * ordinals, the id map finds each record, and the bitmaps agree with the records. Writes wait
     * while it runs; reads do not.
     */
    public Map<String, IntegrityReport> verifyIntegrity() {
        writer.lock();
        try {
            return integrity.verify(index.current());
        } finally {
            writer.unlock();
        }
    }

    /** Folds the write-ahead log into segments now, and persists the index if it changed. */
    public void checkpoint() {
        withPoints(
                () -> {
                    checkpointWithPoints();
                    return null;
                });
    }

    private void checkpointWithPoints() {
        writer.lock();
        try {
            ensureOpen();
            fault().ensureWritable();
            storage.checkpoint(true);
            index.persist(fault());
            if (text != null) {
                text.commit();
            }
        } catch (IOException e) {
            throw fault().trip(
                            new UncheckedIOException(
                                    "collection '"
                                            + spec.name()
                                            + "': checkpoint failed; the store"
                                            + " is read-only until it is reopened",
                                    e));
        } finally {
            writer.unlock();
        }
    }

    /** What the storage found when this collection opened. */
    public CollectionStorage.OpenReport openReport() {
        return storage.openReport();
    }

    /**
     * Copies a consistent image of the collection's data files into {@code target}. Writers wait
     * while it runs; searches go on.
     */
    public void snapshotTo(Path target) throws IOException {
        withPoints(
                () -> {
                    snapshotWithPoints(target);
                    return null;
                });
    }

    private void snapshotWithPoints(Path target) throws IOException {
        writer.lock();
        try {
            ensureOpen();
            fault().ensureWritable();
            storage.checkpoint(true);
            storage.snapshotTo(target);
        } catch (IOException | RuntimeException e) {
            fault().trip(e);
            throw e;
        } finally {
            writer.unlock();
        }
    }

    /**
     * Waits for the file work this collection's writes left running in the background: deletions of
     * destroyed index generations and the text index's merges (which write segment files and their
     * keys). The caller holds {@link #writer()}, so no write starts more; afterwards only the text
     * index's release of a reader a search held can still delete a file (one no commit names, with
     * its key).
     */
    public void awaitBackgroundFileWork() {
        if (!writer.isHeldByCurrentThread()) {
            throw new IllegalStateException(
                    "collection '" + spec.name() + "': expected the caller to hold its writer");
        }
        index.awaitDeletions();
        if (text != null) {
            text.awaitMerges();
        }
    }

    /** Destroys every key of this collection (it is being dropped). */
    public void destroyAllKeys() throws IOException {
        writer.lock();
        try {
            if (text != null) {
                text.destroy();
            }
            index.retire();
            storage.destroyAllKeys();
        } finally {
            writer.unlock();
        }
    }

    /** The version below which a snapshot taken now holds every record. */
    public long nextVersion() {
        writer.lock();
        try {
            return storage.nextVersion();
        } finally {
            writer.unlock();
        }
    }

    /**
     * Rebuilds the index from scratch from the live records that no forget or hold hides (a reindex
     * reads only live, untombstoned records), then swaps it in. Searches and writes go on against
     * the old index during the build; writes that landed meanwhile are applied to the new one under
     * the writer mutex before the swap.
     */
    public void rebuildIndex() {
        ensureOpen();
        index.rebuild(writer, this::ensureOpen);
    }

    public void close() throws IOException {
        withPoints(
                () -> {
                    closeWithPoints();
                    return null;
                });
    }

    private void closeWithPoints() throws IOException {
        writer.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (fault().tripped()) {
                closeWithoutWriting();
                return;
            }
            index.persist(fault());
            // A closed collection leaves no destroyed generation's file behind it.
            index.awaitDeletions();
            if (fault().tripped()) {
                closeWithoutWriting();
                return;
            }
            try {
                if (text != null) {
                    text.commitAndClose();
                }
            } catch (IOException | RuntimeException e) {
                fault().trip(e);
                throw e;
            } finally {
                try {
                    if (fault().tripped()) {
                        storage.abandon();
                    } else {
                        storage.close();
                    }
                } finally {
                    index.current().close();
                }
            }
        } finally {
            writer.unlock();
        }
    }

    /**
     * Closes a collection of a read-only store: nothing is checkpointed, persisted or committed
     * (the files are as the failure left them, and the next open recovers from them), and the id
     * map is not stamped as closed cleanly.
     */
    private void closeWithoutWriting() throws IOException {
        try {
            if (text != null) {
                text.rollbackAndClose();
            }
        } finally {
            try {
                storage.abandon();
            } finally {
                index.current().close();
            }
        }
    }

    /** The store's read-only latch. */
    private StorageFault fault() {
        return storage.fault();
    }

    /** Whether {@link #close} ran. */
    boolean isClosed() {
        return closed;
    }

    /**
     * Refuses use of a closed collection.
     *
     * @throws IllegalStateException if the collection (or its store) is closed
     */
    public void ensureOpen() {
        if (closed) {
            throw new IllegalStateException(
                    "collection '"
                            + spec.name()
                            + "' is closed (its store was closed or it was dropped)");
        }
    }
}
