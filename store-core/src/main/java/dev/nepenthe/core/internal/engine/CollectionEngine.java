package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexView;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.embed.Embedder;
import dev.nepenthe.core.index.IndexDescription;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.CollectionStorage.Placed;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.internal.text.TextIndexOpener;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.roaringbitmap.IntIterator;
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
         * @throws dev.nepenthe.core.forget.ForgottenScopeException naming the batch position and
         *     the operation
         */
        void check(String collection, List<VectorRecord> batch);
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

    /**
     * What the collection embeds text with: the store's embedder of the name the spec gives, or a
     * refusal that says why there is none.
     */
    public record Embedding(Embedder embedder, String missing) {
        public static final Embedding NONE =
                new Embedding(
                        null,
                        "it was created without an embedder" + " (CollectionSpec.withEmbedder)");

        Embedder require(String collection) {
            if (embedder == null) {
                throw new IllegalStateException(
                        "collection '" + collection + "' cannot embed text: " + missing);
            }
            return embedder;
        }
    }

    private static final System.Logger LOG = System.getLogger(CollectionEngine.class.getName());

    private final CollectionSpec spec;
    private final String id;
    private final CollectionStorage storage;
    private final Supplier<VectorIndex> indexFactory;
    private volatile VectorIndex index;

    /** The persisted index generations, or null (an index kind that is not persisted, or tests). */
    private final IndexGenerations generations;

    /** Whether the index changed since the current generation was written (or none exists). */
    private boolean indexDirty;

    private final OpenReport.IndexRecovery indexRecovery;

    /** What opening did with the text index, or null when the collection has none. */
    private final OpenReport.TextRecovery textRecovery;

    private final RecordValidator validator;

    /** The text index, or null when the collection has none. */
    private final TextIndex text;

    private final Embedding embedding;

    /** Writes take turns on this; reads never take it. */
    private final ReentrantLock writer = new ReentrantLock();

    private final RecordCatalogue catalogue;
    private final CollectionSearch search = new CollectionSearch(this);

    /**
     * Which ordinal each recent replacement left for which: searches follow it (see {@link
     * ReplacementLog}).
     */
    private final ReplacementLog replacements = new ReplacementLog();

    private volatile boolean closed;

    /**
     * Tests hold a search here, between the index search and materialisation, to show that a forget
     * marked meanwhile still keeps its records out of the result. Null in production.
     */
    public static volatile Runnable afterIndexSearch;

    /** Refuses writes that fall in a forgotten scope; set by the store once its protocol is up. */
    private volatile WriteFence fence = WriteFence.NONE;

    /**
     * Opens the collection on its storage, with a text index ({@code textOpener} non-null) and an
     * embedder: every stored record is validated and indexed, and the text index reconciled with
     * the records, before this returns. The index is loaded from its newest persisted generation
     * when one is readable (then only the records written or removed since are applied to it), else
     * built from the records ({@code generations} null: always built). {@code hashes} keys the
     * catalogue's metadata index.
     */
    public CollectionEngine(
            CollectionSpec spec,
            String id,
            Supplier<VectorIndex> indexFactory,
            IndexGenerations generations,
            StorageOpener opener,
            TextOpener textOpener,
            Embedding embedding,
            KeyedHash hashes)
            throws IOException {
        this.spec = spec;
        this.embedding = embedding;
        this.id = id;
        this.indexFactory = indexFactory;
        this.generations = generations;
        this.validator = new RecordValidator(spec);
        this.catalogue = new RecordCatalogue(spec.dimension(), hashes);
        // The index file is read beside the records: neither needs the other until the
        // catch-up below, and the records' admission runs on one core.
        FutureTask<IndexGenerations.Outcome> reading =
                generations == null ? null : new FutureTask<>(generations::open);
        if (reading != null) {
            Thread.ofPlatform().name("nepenthe-open-index-" + id).daemon().start(reading);
        }
        // Each segment's records are checked and their vectors moved into the column as the
        // storage decodes them, on every core (LoadedRows); the storage then hands the live
        // records over in its order. A record the log brought back still has its vector, and is
        // checked and stored here. Only the linking into the bitmaps keeps the storage's order.
        LoadedRows rows = new LoadedRows(catalogue, validator, spec.dimension());
        List<Loaded> loaded = new ArrayList<>();
        try {
            this.storage =
                    opener.open(
                            new CollectionStorage.LoadSink() {
                                @Override
                                public void accept(int ordinal, long seq, VectorRecord r) {
                                    loaded.add(new Loaded(ordinal, seq, r));
                                }

                                @Override
                                public void expectOrdinalsBelow(int ordinals) {
                                    rows.expect(ordinals);
                                }

                                @Override
                                public VectorRecord opened(int ordinal, long seq, VectorRecord r) {
                                    return rows.take(ordinal, seq, r);
                                }

                                @Override
                                public VectorRecord rejoin(int ordinal, long seq, VectorRecord r) {
                                    return rows.rejoin(ordinal, seq, r);
                                }
                            });
        } catch (IOException | RuntimeException e) {
            wipeVectors(loaded);
            catalogue.wipeRows();
            closeQuietly(reading);
            throw e;
        }
        MetadataIndex.Keys[] metadataKeys = new MetadataIndex.Keys[loaded.size()];
        try {
            catalogue.reserveRows(loaded.stream().mapToInt(Loaded::ordinal).max().orElse(-1) + 1);
            // The metadata's keyed hashes too, on every core: a few dozen HMACs for a record
            // with numbers, which the linking below would otherwise compute on one.
            java.util.stream.IntStream.range(0, loaded.size())
                    .parallel()
                    .forEach(
                            i -> {
                                Loaded l = loaded.get(i);
                                metadataKeys[i] = catalogue.metadataKeysOfLoaded(l.record());
                                if (RecordAccess.vectorUnsafe(l.record()) != null) {
                                    validator.validate(l.record(), "stored record");
                                    catalogue.storeLoadedVector(l.ordinal(), l.record());
                                } else if (!rows.holds(l.ordinal(), l.seq())) {
                                    throw new IllegalStateException(
                                            "collection '"
                                                    + spec.name()
                                                    + "': the live record at ordinal "
                                                    + l.ordinal()
                                                    + " (version "
                                                    + l.seq()
                                                    + ") came without its vector, and its row holds"
                                                    + " another version's");
                                }
                            });
        } catch (RuntimeException e) {
            catalogue.endOfOpenHashing();
            wipeVectors(loaded);
            catalogue.wipeRows();
            storage.abandon();
            closeQuietly(reading);
            throw e;
        }
        catalogue.endOfOpenHashing();
        catalogue.startLinkingLoaded();
        for (int i = 0; i < loaded.size(); i++) {
            Loaded l = loaded.get(i);
            catalogue.linkStored(l.ordinal(), l.record(), metadataKeys[i]);
            // The catalogue keeps no text: the decoded copy's goes now, not whenever the
            // collector reuses its memory.
            RecordAccess.wipe(l.record());
        }
        catalogue.endLinkingLoaded();
        loaded.clear();
        rows.clearUnlinked();
        catalogue.freeGaps();
        catalogue.readTextFrom(storage::readStored);
        // The storage keeps no plaintext: a checkpoint that must seal a record again borrows it
        // here.
        storage.readPlaintextFrom(
                (ord, use) -> {
                    Entry e = catalogue.entry(ord);
                    // A record's text and metadata are only in its sealed copy, the one missing
                    // here: none to lend.
                    VectorRecord r = e == null || e.readsCopy() ? null : catalogue.materialise(e);
                    try {
                        return use.apply(r);
                    } finally {
                        if (r != null) {
                            RecordAccess.wipe(r);
                        }
                    }
                });
        long started = System.nanoTime();
        IndexGenerations.Outcome persisted;
        VectorIndex idx;
        int added = 0;
        int removed = 0;
        try {
            persisted =
                    reading == null
                            ? new IndexGenerations.Outcome(null, "not persisted")
                            : outcome(reading);
            if (persisted.loaded() != null) {
                idx = persisted.loaded().index();
                int[] delta = catchUp(idx, persisted.loaded().versions());
                added = delta[0];
                removed = delta[1];
                indexDirty = added + removed > 0;
            } else {
                // Index every stored record; the SPI allows concurrent adds, so a graph index
                // builds on every core (an index that serialises adds internally takes turns).
                idx = indexFactory.get();
                VectorIndex building = idx;
                catalogue.liveEntries().parallelStream().forEach(e -> addTo(building, e));
                building.afterBulkLoad();
                indexDirty = true;
            }
        } catch (IOException | RuntimeException e) {
            storage.abandon(); // a failed open writes nothing
            catalogue.wipeRows();
            throw e;
        }
        this.index = idx;
        IndexWarmUp.startIfWorthIt(spec, idx.size(), indexFactory);
        this.indexRecovery =
                new OpenReport.IndexRecovery(
                        persisted.loaded() != null,
                        persisted.loaded() == null ? -1 : persisted.loaded().generation(),
                        added,
                        removed,
                        persisted.rebuiltBecause(),
                        (System.nanoTime() - started) / 1_000_000);
        TextIndexOpener.Opened t = null;
        if (textOpener != null) {
            try {
                t = textOpener.open(textRecords());
                OpenReport.TextRecovery r = t.recovery();
                if (!r.rebuilt() && (r.removed() > 0 || r.added() > 0)) {
                    // After an unclean close: Lucene's last commit was behind the records.
                    LOG.log(
                            System.Logger.Level.INFO,
                            "collection ''{0}'': text index reconciled with the records"
                                    + " ({1} documents removed, {2} added)",
                            spec.name(),
                            r.removed(),
                            r.added());
                }
            } catch (IOException | RuntimeException e) {
                storage.abandon(); // a failed open writes nothing
                idx.close();
                catalogue.wipeRows();
                throw e;
            }
        }
        this.text = t == null ? null : t.index();
        this.textRecovery = t == null ? null : t.recovery();
        catalogue.publish(0);
    }

    /** A record as the storage handed it over at open, before it is linked. */
    private record Loaded(int ordinal, long seq, VectorRecord record) {}

    /** After a failed open: the loaded records' vectors are plaintext and go no further. */
    private static void wipeVectors(List<Loaded> loaded) {
        for (Loaded l : loaded) {
            float[] v = RecordAccess.vectorUnsafe(l.record());
            if (v != null) {
                Arrays.fill(v, 0f);
            }
        }
    }

    /** The index reader's outcome, its failure rethrown as it was thrown. */
    private static IndexGenerations.Outcome outcome(FutureTask<IndexGenerations.Outcome> reading)
            throws IOException {
        try {
            return reading.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(reading);
            throw new java.io.InterruptedIOException("interrupted while the index file was read");
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case RuntimeException re -> throw re;
                case Error err -> throw err;
                default -> throw new IllegalStateException(e.getCause());
            }
        }
    }

    /** After a failed open: waits for the index reader and closes what it loaded. */
    private static void closeQuietly(FutureTask<IndexGenerations.Outcome> reading) {
        if (reading == null) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                IndexGenerations.Outcome o = reading.get();
                if (o.loaded() != null) {
                    o.loaded().index().close();
                }
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the loaded index must still be closed: wait on
            } catch (ExecutionException | RuntimeException e) {
                break; // it failed on its own: nothing loaded
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** What opening did with the vector index. */
    public OpenReport.IndexRecovery indexRecovery() {
        return indexRecovery;
    }

    /** What opening did with the text index, or null when the collection has none. */
    public OpenReport.TextRecovery textRecovery() {
        return textRecovery;
    }

    /**
     * Brings a loaded index up to the records: an ordinal whose record version differs from the one
     * the generation recorded (or that no record holds now) is removed, and every record the index
     * lacks is added. Only what changed after the generation was written costs anything. Returns
     * {added, removed}.
     */
    private int[] catchUp(VectorIndex idx, long[] versions) throws IOException {
        List<Entry> missing = new ArrayList<>();
        List<Integer> stale = new ArrayList<>();
        RoaringBitmap current = new RoaringBitmap();
        for (Entry e : catalogue.liveEntries()) {
            int ord = e.ordinal();
            current.add(ord);
            boolean same =
                    ord < versions.length
                            && versions[ord] == storage.versionOf(ord)
                            && idx.contains(ord);
            if (!same) {
                if (idx.contains(ord)) {
                    stale.add(ord);
                }
                missing.add(e);
            }
        }
        for (int ord = 0; ord < versions.length; ord++) {
            if (versions[ord] >= 0 && !current.contains(ord) && idx.contains(ord)) {
                stale.add(ord);
            }
        }
        if (!stale.isEmpty()) {
            // The file holds vectors the records no longer have: it goes before they leave.
            generations.invalidate();
        }
        int removed = idx.removeAll(stale.stream().mapToInt(Integer::intValue).toArray());
        missing.parallelStream().forEach(e -> addTo(idx, e));
        if (!missing.isEmpty()) {
            idx.afterBulkLoad();
        }
        return new int[] {missing.size(), removed};
    }

    /**
     * Writes the index as a new persisted generation (destroying the previous one) when it changed
     * since the last, unless it holds purgeable residue of a removal (a file must not carry that;
     * the next open rebuilds instead). Under the writer mutex. A failure is logged and leaves the
     * collection as it was: the index is derived, the next open rebuilds it.
     */
    private void persistIndex() {
        if (generations == null || !generations.enabled() || !indexDirty) {
            return;
        }
        VectorIndex idx = index;
        if (idx.hasResidue()) {
            return;
        }
        List<Entry> live = catalogue.liveEntries();
        int[] ords = new int[live.size()];
        long[] versions = new long[live.size()];
        int n = 0;
        for (Entry e : live) {
            if (idx.contains(e.ordinal())) {
                ords[n] = e.ordinal();
                versions[n++] = storage.versionOf(e.ordinal());
            }
        }
        try {
            generations.write(idx, Arrays.copyOf(ords, n), Arrays.copyOf(versions, n));
            indexDirty = false;
        } catch (IOException | RuntimeException e) {
            fault().trip(e);
            LOG.log(
                    System.Logger.Level.WARNING,
                    "collection ''{0}'': writing the index generation failed; the next"
                            + " open rebuilds the index from the records: {1}",
                    spec.name(),
                    e.toString());
        }
    }

    /** The records as the text index checks them against: version and text by ordinal. */
    private TextIndex.Records textRecords() {
        return new TextIndex.Records() {
            @Override
            public long version(int ordinal) {
                return catalogue.entry(ordinal) == null ? -1 : storage.versionOf(ordinal);
            }

            @Override
            public String text(int ordinal) {
                Entry e = catalogue.entry(ordinal);
                return e == null ? null : catalogue.text(e);
            }

            @Override
            public int[] ordinals() {
                return catalogue.liveEntries().stream().mapToInt(Entry::ordinal).toArray();
            }
        };
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
        return index;
    }

    public void setFence(WriteFence f) {
        this.fence = f;
    }

    /**
     * Inserts or replaces a batch atomically, durable when this returns (see
     * VectorCollection#upsertAll).
     */
    public void upsertAll(List<VectorRecord> batch) {
        batch = embedMissingVectors(batch);
        validator.validateBatch(batch);
        writer.lock();
        try {
            ensureOpen();
            fault().ensureWritable();
            // Under the writer mutex: a forget's mark either sees this batch (and hides it) or
            // this check sees the mark's fence.
            fence.check(spec.name(), batch);
            // 1. Place every record (new ordinals; the versions they replace), 2. make the batch
            //    durable, 3. only then change what reads see.
            List<Placed> placed = new ArrayList<>(batch.size());
            List<Entry> replaced = new ArrayList<>();
            List<Placed> replacedPlaced = new ArrayList<>();
            List<Integer> replacedBy = new ArrayList<>();
            IntIterator free = catalogue.freeOrdinals();
            int fresh = Math.max(catalogue.ordinalHighWater(), storage.nextOrdinal());
            for (VectorRecord given : batch) {
                // The store keeps a copy of its own: a forget wipes it in place, never the
                // caller's.
                VectorRecord r = RecordAccess.copy(given);
                Entry old = lookup(r.tenant(), r.id());
                int ord = free.hasNext() ? free.next() : fresh++;
                if (old != null) {
                    replaced.add(old);
                    replacedPlaced.add(new Placed(old.ordinal(), old.record()));
                    replacedBy.add(ord);
                }
                placed.add(new Placed(ord, r));
            }
            storage.put(placed, replacedPlaced);
            long stamp = catalogue.nextStamp();
            // A replacement is atomic for searches as for gets: the new versions become
            // searchable while the old ones still are, and only then do the old ones leave. A
            // search that meets both keeps one; one that found an old version taken away under
            // it follows the replacement log to the new one (CollectionSearch). A get finds the
            // old version until the id map points at the new one.
            VectorIndex idx = index;
            indexDirty = true;
            for (Placed p : placed) {
                idx.add(p.ordinal(), RecordAccess.vectorUnsafe(p.record()));
                catalogue.link(p.ordinal(), p.record()); // (moves the vector into the column)
            }
            storage.publishIds(placed);
            IOException textFailed = indexTexts(placed);
            if (text != null && textFailed == null) {
                try {
                    text.publish();
                } catch (IOException | RuntimeException e) {
                    textFailed = e instanceof IOException io ? io : new IOException(e);
                }
            }
            // The old versions are still counted once: they leave below.
            catalogue.publish(stamp, replaced.size());
            if (!replaced.isEmpty()) {
                for (int i = 0; i < replaced.size(); i++) {
                    replacements.append(stamp, replaced.get(i).ordinal(), replacedBy.get(i));
                }
                long removal = catalogue.nextStamp();
                try {
                    removeFromReads(replaced, removal);
                } catch (UncheckedIOException e) {
                    // The batch is durable: the old versions leave reads all the same
                    // (removeFromReads
                    // completes what reads see before it throws), and the store is read-only now.
                    textFailed = textFailed != null ? textFailed : e.getCause();
                }
                catalogue.publish(removal);
            }
            // The store's copies have given their vectors to the column and their text to the
            // sealed copies (and the text index): wiped now, not left for the collector.
            for (Placed p : placed) {
                RecordAccess.wipe(p.record());
            }
            if (textFailed != null) {
                fault().trip(textFailed);
                throw new UncheckedIOException(
                        "collection '"
                                + spec.name()
                                + "': the batch is stored, but the text index failed to take it;"
                                + " keyword search misses it, and the store is read-only, until the"
                                + " next open, which brings the text index up to the records",
                        textFailed);
            }
        } catch (IOException e) {
            // The log may hold the batch whole (a failed fsync after a full write) or not at all:
            // the store goes read-only and the next open says which.
            throw fault().trip(
                            new UncheckedIOException(
                                    "collection '"
                                            + spec.name()
                                            + "': writing the batch failed, so it was not"
                                            + " acknowledged; it is not served, and the store is"
                                            + " read-only until it is reopened, which keeps the"
                                            + " batch whole or drops it whole",
                                    e));
        } finally {
            writer.unlock();
        }
        checkpointIfDue();
    }

    /**
     * Adds the placed records' texts to the text index. A failure (the disk, Lucene) is returned,
     * not thrown: the records are durable by now and must still become readable.
     */
    private IOException indexTexts(List<Placed> placed) {
        if (text == null) {
            return null;
        }
        try {
            for (Placed p : placed) {
                if (RecordAccess.textUtf8Length(p.record()) > 0) {
                    text.add(p.ordinal(), storage.versionOf(p.ordinal()), p.record().text());
                }
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return e instanceof IOException io ? io : new IOException(e);
        }
    }

    /**
     * Records with text and no vector get their vector from the collection's embedder, in one batch
     * call (outside the writer mutex: embedding is the slow part of a text ingest).
     */
    private List<VectorRecord> embedMissingVectors(List<VectorRecord> batch) {
        if (batch == null) {
            return null; // the validator names the problem
        }
        List<Integer> positions = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            VectorRecord r = batch.get(i);
            if (r != null
                    && RecordAccess.vectorUnsafe(r) == null
                    && RecordAccess.textUtf8Length(r) > 0) {
                positions.add(i);
                texts.add(r.text());
            }
        }
        if (positions.isEmpty()) {
            return batch;
        }
        if (embedding.embedder() == null) {
            throw new IllegalArgumentException(
                    "record at batch position "
                            + positions.get(0)
                            + ": expected a vector,"
                            + " got text only, and collection '"
                            + spec.name()
                            + "' cannot embed text: "
                            + embedding.missing());
        }
        List<float[]> vectors = embedding.embedder().embedAll(texts);
        if (vectors.size() != texts.size()) {
            throw new IllegalStateException(
                    "embedder '"
                            + embedding.embedder().name()
                            + "' returned "
                            + vectors.size()
                            + " vectors for "
                            + texts.size()
                            + " texts");
        }
        List<VectorRecord> out = new ArrayList<>(batch);
        for (int j = 0; j < positions.size(); j++) {
            int i = positions.get(j);
            out.set(i, batch.get(i).toBuilder().vector(vectors.get(j)).build());
        }
        return out;
    }

    /**
     * Folds the log into segments when it is due. A failure does not fail the write that triggered
     * it (its batch is durable in the log, so it was acknowledged truthfully); it trips the
     * read-only latch, and the next write is refused.
     */
    private void checkpointIfDue() {
        writer.lock();
        try {
            if (!closed && !fault().tripped() && storage.checkpointIfDue() && text != null) {
                // Lucene commits with the records' checkpoints, so a crash leaves at most one log's
                // worth of text to re-index at the next open.
                text.commit();
            }
        } catch (IOException | RuntimeException e) {
            if (!StorageFault.isIoFailure(e)) {
                throw e instanceof RuntimeException r
                        ? r
                        : new UncheckedIOException((IOException) e);
            }
            fault().trip(e);
            LOG.log(
                    System.Logger.Level.ERROR,
                    "collection ''{0}'': the batch is stored (in the write-ahead log), but"
                            + " folding the log into segments failed: {1}",
                    spec.name(),
                    e.toString());
        } finally {
            writer.unlock();
        }
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
        writer.lock();
        try {
            ensureOpen();
            fault().ensureWritable();
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
     * Deletes live entries (caller holds the writer mutex): journal and log first, then what reads
     * see, then the live files are rewritten without them.
     */
    public int deleteEntries(List<Entry> doomed) {
        if (doomed.isEmpty()) {
            return 0;
        }
        hideBeforeTheCopiesGo(doomed);
        try {
            storage.delete(placed(doomed));
        } catch (IOException ex) {
            catalogue.unhide(RecordCatalogue.REMOVING);
            throw fault().trip(
                            new UncheckedIOException(
                                    "collection '"
                                            + spec.name()
                                            + "': deleting failed, so it was not acknowledged; the"
                                            + " store is read-only until it is reopened",
                                    ex));
        } catch (RuntimeException ex) {
            catalogue.unhide(RecordCatalogue.REMOVING);
            throw ex;
        }
        long stamp = catalogue.nextStamp();
        removeFromReads(doomed, stamp);
        catalogue.publish(stamp);
        purgeDeleted();
        return doomed.size();
    }

    /** Deletes every record of one subject in one tenant and destroys its key; returns how many. */
    public int deleteSubject(String tenant, String subject) {
        writer.lock();
        try {
            ensureOpen();
            fault().ensureWritable();
            RoaringBitmap ords = catalogue.subjectOrdinals(tenant, subject);
            List<Entry> doomed = new ArrayList<>();
            if (ords != null) {
                ords.forEach((int ord) -> doomed.add(catalogue.entry(ord)));
            }
            hideBeforeTheCopiesGo(doomed);
            try {
                // Even with no live records the scope's key is destroyed: it may still decrypt
                // copies in snapshots or backups.
                storage.dropSubject(tenant, subject, placed(doomed));
            } catch (IOException ex) {
                catalogue.unhide(RecordCatalogue.REMOVING);
                throw fault().trip(
                                new UncheckedIOException(
                                        "collection '"
                                                + spec.name()
                                                + "': deleting the subject failed; the store is"
                                                + " read-only until it is reopened",
                                        ex));
            } catch (RuntimeException ex) {
                catalogue.unhide(RecordCatalogue.REMOVING);
                throw ex;
            }
            long stamp = catalogue.nextStamp();
            removeFromReads(doomed, stamp);
            catalogue.publish(stamp);
            purgeDeleted();
            return doomed.size();
        } finally {
            writer.unlock();
        }
    }

    /**
     * Hides entries a delete is about to remove, before the storage drops their copies: a read that
     * already holds such an entry finds its copy gone, and the catalogue drops such a read only for
     * an entry that is unlinked or hidden (a live, visible entry without its copy is an
     * inconsistency it reports). {@link #removeFromReads} unhides them as it frees their ordinals;
     * a failed delete unhides them at once.
     */
    private void hideBeforeTheCopiesGo(List<Entry> doomed) {
        if (!doomed.isEmpty()) {
            catalogue.hide(RecordCatalogue.REMOVING, RecordCatalogue.ordinalsOf(doomed));
        }
    }

    /**
     * Removes entries from what reads see (the caller has deleted them durably, or they are hidden
     * already): hidden, unlinked, removed from the index in one batch, and only then their ordinals
     * freed (stamped) and unhidden. Under the writer mutex.
     */
    public void removeFromReads(List<Entry> doomed, long stamp) {
        if (doomed.isEmpty()) {
            return;
        }
        RoaringBitmap ords = RecordCatalogue.ordinalsOf(doomed);
        catalogue.hide(RecordCatalogue.REMOVING, ords);
        for (Entry e : doomed) {
            catalogue.unlink(e);
        }
        // The persisted generation holds these vectors: its key goes before the index changes,
        // so no file outlives the removal in readable form. If a file step fails, the store is
        // read-only from then on, and the removal from what reads see still completes: reads
        // stay consistent (no ordinal is reused until a reopen, which reconciles the files).
        UncheckedIOException failed = null;
        try {
            invalidateGeneration();
        } catch (UncheckedIOException e) {
            failed = e;
        }
        // One batch call lets the index share repair work across the removals.
        int[] removed = ords.toArray();
        index.removeAll(removed);
        if (text != null) {
            try {
                text.delete(removed);
                // Before the ordinals are freed: no searcher opened after this still finds them.
                text.publish();
            } catch (IOException | RuntimeException e) {
                fault().trip(e);
                UncheckedIOException u =
                        new UncheckedIOException(
                                "collection '"
                                        + spec.name()
                                        + "': removing records"
                                        + " from the text index failed",
                                e instanceof IOException io ? io : new IOException(e));
                if (failed == null) {
                    failed = u;
                } else {
                    failed.addSuppressed(u);
                }
            }
        }
        catalogue.free(ords, stamp);
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * Adds an entry's vector to an index through a copy read for it and wiped after; does nothing
     * when the entry left its ordinal meanwhile (only a build outside the writer mutex sees that).
     */
    private void addTo(VectorIndex idx, Entry e) {
        float[] v = new float[spec.dimension()];
        try {
            if (catalogue.readVector(e, v)) {
                idx.add(e.ordinal(), v);
            }
        } finally {
            Arrays.fill(v, 0f);
        }
    }

    /**
     * Destroys the persisted index generation, if any: its key now, its file beside the caller (see
     * {@code IndexGenerations.destroy}). Under the writer mutex.
     */
    private void invalidateGeneration() {
        indexDirty = true;
        if (generations != null) {
            try {
                generations.invalidate();
            } catch (IOException e) {
                fault().trip(e);
                throw new UncheckedIOException(
                        "collection '"
                                + spec.name()
                                + "': destroying the persisted index"
                                + " generation failed; nothing was removed",
                        e);
            }
        }
    }

    /** The persisted index generation serving now, or -1 (tests and the forget evidence). */
    public long indexGeneration() {
        return generations == null ? -1 : generations.currentGeneration();
    }

    /** Its file, or null. */
    public Path indexGenerationFile() {
        return generations == null ? null : generations.currentFile();
    }

    /** Called under the writer mutex once deleted records are out of the index and maps. */
    private void purgeDeleted() {
        try {
            storage.purgeDeleted();
            if (text != null) {
                // A plain delete removes the text's bytes too, as the segments lose the record's.
                text.mergeDeletesAway();
            }
        } catch (IOException e) {
            fault().trip(e);
            throw new UncheckedIOException(
                    "collection '"
                            + spec.name()
                            + "': deleted (journaled, and no longer served), but rewriting the live"
                            + " files without it failed; the next checkpoint retries",
                    e);
        }
    }

    /** Entries as the storage's placements. */
    public static List<Placed> placed(List<Entry> entries) {
        List<Placed> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            out.add(new Placed(e.ordinal(), e.record()));
        }
        return out;
    }

    /**
     * The k nearest visible records of the request's tenant, narrowed by its subject and filter. No
     * lock.
     */
    public List<SearchHit> search(SearchRequest request) {
        ensureOpen();
        return switch (request.mode()) {
            case VECTOR -> search.search(withVector(request));
            case KEYWORD -> keywordSearch(request, request.k());
            case HYBRID -> hybridSearch(request);
        };
    }

    /** The request with its vector: the caller's, checked, or the embedding of its text. */
    private SearchRequest withVector(SearchRequest request) {
        if (request.vector() != null) {
            validator.checkVector(request.vector(), "query");
            return request;
        }
        float[] v = embedding.require(spec.name()).embed(request.text());
        validator.checkVector(v, "query embedding");
        return new SearchRequest(
                v,
                request.text(),
                request.mode(),
                request.k(),
                request.tenant(),
                request.subject(),
                request.filter(),
                request.params());
    }

    private TextIndex requireText() {
        if (text == null) {
            throw new IllegalStateException(
                    "collection '"
                            + spec.name()
                            + "' has no text index: keyword and hybrid search need one"
                            + " (CollectionSpec.withTextIndex, set when the collection is"
                            + " created)");
        }
        return text;
    }

    private List<SearchHit> keywordSearch(SearchRequest request, int k) {
        TextIndex t = requireText();
        return search.search(
                request,
                k,
                (accept, asked) -> {
                    TextIndex.Ranked r = t.search(request.text(), accept, asked);
                    return new dev.nepenthe.core.index.SearchResult(
                            r.ordinals(), r.scores(), r.size());
                });
    }

    /** Keyword and vector results fused by reciprocal rank fusion (see SearchRequest). */
    private List<SearchHit> hybridSearch(SearchRequest request) {
        requireText();
        int window =
                Math.min(
                        SearchRequest.MAX_K,
                        Math.max(
                                request.k(),
                                request.params().get("window", SearchRequest.DEFAULT_WINDOW)));
        int rrfK = request.params().get("rrfK", SearchRequest.DEFAULT_RRF_K);
        if (window < 1 || rrfK < 0) {
            throw new IllegalArgumentException(
                    "hybrid search: expected window >= 1 and rrfK >= 0, got window "
                            + window
                            + ", rrfK "
                            + rrfK);
        }
        SearchRequest wide = withVector(request);
        wide =
                new SearchRequest(
                        wide.vector(),
                        wide.text(),
                        SearchRequest.Mode.VECTOR,
                        window,
                        wide.tenant(),
                        wide.subject(),
                        wide.filter(),
                        wide.params());
        List<SearchHit> byVector = search.search(wide);
        List<SearchHit> byKeyword = keywordSearch(request, window);
        return ReciprocalRankFusion.fuse(List.of(byVector, byKeyword), rrfK, request.k());
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
            IndexDescription d = index.describe();
            List<IndexView.Partition> parts = new ArrayList<>();
            for (IndexDescription.Partition p : d.partitions()) {
                parts.add(new IndexView.Partition(p.id(), p.centroid(), refs(p.members())));
            }
            return new IndexView(
                    d.kind(),
                    d.size(),
                    d.stats(),
                    parts,
                    d.lineage() == null ? null : refs(d.lineage()));
        } finally {
            writer.unlock();
        }
    }

    private List<IndexView.Ref> refs(int[] ordinals) {
        List<IndexView.Ref> out = new ArrayList<>(ordinals.length);
        for (int ord : ordinals) {
            Entry e = catalogue.entry(ord);
            if (e != null) {
                out.add(new IndexView.Ref(e.record().tenant(), e.record().id()));
            }
        }
        return out;
    }

    /**
     * The index's own integrity check plus the collection's: the index holds exactly the live
     * ordinals, the id map finds each record, and the bitmaps agree with the records. Writes wait
     * while it runs; reads do not.
     */
    public Map<String, IntegrityReport> verifyIntegrity() {
        writer.lock();
        try {
            Map<String, IntegrityReport> out = new LinkedHashMap<>();
            VectorIndex idx = index;
            out.put("index:" + idx.kind(), idx.verifyIntegrity());
            IntegrityReport.Builder r =
                    IntegrityReport.builder("collection:" + spec.name())
                            .expect("index-size-mismatch")
                            .expect("live-record-missing-from-index")
                            .expect("id-map-mismatch");
            // A rebuilt index leaves out records a forget or hold hides; every other live
            // record must be in it, and nothing else.
            RoaringBitmap hiddenNow = catalogue.hidden();
            int indexed = 0;
            int linked = 0;
            for (Entry e : catalogue.liveEntries()) {
                int ord = e.ordinal();
                linked++;
                if (idx.contains(ord)) {
                    indexed++;
                } else if (!hiddenNow.contains(ord)) {
                    r.violation("live-record-missing-from-index", "ordinal " + ord);
                }
                if (lookup(e.record().tenant(), e.record().id()) != e) {
                    r.violation("id-map-mismatch", "ordinal " + ord);
                }
            }
            int live = catalogue.live();
            if (idx.size() != indexed || storage.size() != live || linked != live) {
                r.violation(
                        "index-size-mismatch",
                        "index holds "
                                + idx.size()
                                + " ("
                                + indexed
                                + " of them live), storage "
                                + storage.size()
                                + ", collection "
                                + live
                                + " ("
                                + linked
                                + " linked)");
            }
            r.checked("records", live);
            catalogue.checkBitmaps(r);
            out.put("collection", r.build());
            if (text != null) {
                try {
                    out.put("text", text.verifyIntegrity(textRecords(), "text:" + spec.name()));
                } catch (IOException e) {
                    throw new UncheckedIOException(
                            "collection '" + spec.name() + "': reading the text index failed", e);
                }
            }
            return out;
        } finally {
            writer.unlock();
        }
    }

    /** Folds the write-ahead log into segments now, and persists the index if it changed. */
    public void checkpoint() {
        writer.lock();
        try {
            ensureOpen();
            fault().ensureWritable();
            storage.checkpoint(true);
            persistIndex();
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

    /** Destroys every key of this collection (it is being dropped). */
    public void destroyAllKeys() throws IOException {
        writer.lock();
        try {
            if (text != null) {
                text.destroy();
            }
            if (generations != null) {
                generations.retire();
            }
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
        List<Entry> sources = new ArrayList<>();
        RoaringBitmap hiddenNow = catalogue.hidden();
        for (Entry e : catalogue.liveEntries()) {
            if (!hiddenNow.contains(e.ordinal())) {
                sources.add(e);
            }
        }
        VectorIndex fresh = indexFactory.get();
        // A source replaced or deleted meanwhile is not added; the swap below adds what replaced
        // it.
        sources.parallelStream().forEach(e -> addTo(fresh, e));
        fresh.afterBulkLoad();
        writer.lock();
        try {
            ensureOpen();
            // Writes that landed during the build: drop the gone, add the new.
            RoaringBitmap hiddenAtSwap = catalogue.hidden();
            for (Entry e : sources) {
                if (catalogue.entry(e.ordinal()) != e && fresh.contains(e.ordinal())) {
                    fresh.remove(e.ordinal());
                }
            }
            for (Entry e : catalogue.liveEntries()) {
                if (!hiddenAtSwap.contains(e.ordinal()) && !fresh.contains(e.ordinal())) {
                    addTo(fresh, e);
                }
            }
            VectorIndex old = index;
            index = fresh;
            indexDirty = true;
            old.close();
        } finally {
            writer.unlock();
        }
    }

    public void close() throws IOException {
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
            persistIndex();
            if (generations != null) {
                // A closed collection leaves no destroyed generation's file behind it.
                generations.awaitDeletions();
            }
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
                    index.close();
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
                index.close();
            }
        }
    }

    /** The store's read-only latch. */
    private StorageFault fault() {
        return storage.fault();
    }

    /**
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
