package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.OpenReport;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.CollectionEngine.StorageOpener;
import dev.nepenthe.core.internal.engine.CollectionEngine.TextOpener;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.internal.text.TextIndexOpener;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * Opens a collection: its records from storage into the catalogue, its vector index from the newest
 * readable generation (caught up with the records) or built from them, and its text index
 * reconciled with them. Apart from the engine because an open is one long sequence of steps, each
 * of which must undo what came before it when it fails (a failed open writes nothing and leaves no
 * plaintext behind), while the engine serves an open collection.
 */
final class CollectionOpening {

    private static final System.Logger LOG = System.getLogger(CollectionOpening.class.getName());

    /** What an open produced, handed to the engine. */
    record Opened(
            CollectionStorage storage,
            CollectionIndex index,
            OpenReport.IndexRecovery indexRecovery,
            TextIndex text,
            OpenReport.TextRecovery textRecovery) {}

    /** A record as the storage handed it over at open, before it is linked. */
    private record Loaded(int ordinal, long seq, VectorRecord record) {}

    private final CollectionSpec spec;
    private final String id;
    private final RecordCatalogue catalogue;
    private final RecordValidator validator;

    /** The rows the storage filled as it decoded the segments. */
    private final LoadedRows rows;

    /** The live records in the storage's order, until they are linked. */
    private final List<Loaded> loaded = new ArrayList<>();

    private CollectionOpening(
            CollectionSpec spec, String id, RecordCatalogue catalogue, RecordValidator validator) {
        this.spec = spec;
        this.id = id;
        this.catalogue = catalogue;
        this.validator = validator;
        this.rows = new LoadedRows(catalogue, validator, spec.dimension());
    }

    /**
     * Opens the collection over {@code catalogue}: every stored record is validated and linked, the
     * index loaded ({@code generations} non-null and a generation readable) or built, the text
     * index ({@code textOpener} non-null) opened, and the catalogue published.
     */
    static Opened open(
            CollectionSpec spec,
            String id,
            RecordCatalogue catalogue,
            RecordValidator validator,
            Supplier<VectorIndex> indexFactory,
            IndexGenerations generations,
            StorageOpener opener,
            TextOpener textOpener)
            throws IOException {
        CollectionOpening o = new CollectionOpening(spec, id, catalogue, validator);
        // The index file is read beside the records: neither needs the other until the
        // catch-up, and the records' admission runs on one core.
        FutureTask<IndexGenerations.Outcome> reading = o.startReading(generations);
        CollectionStorage storage = o.loadRecords(opener, reading);
        o.linkLoaded(storage, reading);
        CollectionIndex index =
                new CollectionIndex(spec, catalogue, storage, indexFactory, generations);
        OpenReport.IndexRecovery indexRecovery = o.openIndex(index, storage, reading);
        TextIndexOpener.Opened t = o.openText(textOpener, storage, index);
        catalogue.publish(0);
        return new Opened(
                storage,
                index,
                indexRecovery,
                t == null ? null : t.index(),
                t == null ? null : t.recovery());
    }

    /** Starts reading the newest index generation on a thread of its own; null when none is. */
    private FutureTask<IndexGenerations.Outcome> startReading(IndexGenerations generations) {
        if (generations == null) {
            return null;
        }
        FutureTask<IndexGenerations.Outcome> reading = new FutureTask<>(generations::open);
        Thread.ofPlatform().name("nepenthe-open-index-" + id).daemon().start(reading);
        return reading;
    }

    /**
     * Opens the storage. Each segment's records are checked and their vectors moved into the column
     * as the storage decodes them, on every core ({@link LoadedRows}); the storage then hands the
     * live records over in its order, kept in {@link #loaded} for linking.
     */
    private CollectionStorage loadRecords(
            StorageOpener opener, FutureTask<IndexGenerations.Outcome> reading) throws IOException {
        CollectionStorage storage;
        try {
            storage =
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
            wipeVectors();
            catalogue.wipeRows();
            closeQuietly(reading);
            throw e;
        }
        return storage;
    }

    /**
     * Links the loaded records into the catalogue. A record the log brought back still has its
     * vector, and is checked and stored here. Only the linking into the bitmaps keeps the storage's
     * order; the rest runs on every core.
     */
    private void linkLoaded(
            CollectionStorage storage, FutureTask<IndexGenerations.Outcome> reading) {
        MetadataIndex.Keys[] metadataKeys = new MetadataIndex.Keys[loaded.size()];
        try {
            catalogue.reserveRows(loaded.stream().mapToInt(Loaded::ordinal).max().orElse(-1) + 1);
            // The metadata's keyed hashes too, on every core: a few dozen HMACs for a record
            // with numbers, which the linking below would otherwise compute on one.
            IntStream.range(0, loaded.size())
                    .parallel()
                    .forEach(i -> metadataKeys[i] = admit(loaded.get(i)));
        } catch (RuntimeException e) {
            catalogue.endOfOpenHashing();
            wipeVectors();
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
    }

    /** Checks one loaded record and stores its vector; returns its metadata's keyed hashes. */
    private MetadataIndex.Keys admit(Loaded l) {
        MetadataIndex.Keys keys = catalogue.metadataKeysOfLoaded(l.record());
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
                            + ") came without its vector, and its row holds another version's");
        }
        return keys;
    }

    /**
     * Serves the index loaded from its generation and brought up to the records, or, without one,
     * built from the records; returns what was done.
     */
    private OpenReport.IndexRecovery openIndex(
            CollectionIndex index,
            CollectionStorage storage,
            FutureTask<IndexGenerations.Outcome> reading)
            throws IOException {
        long started = System.nanoTime();
        IndexGenerations.Outcome persisted;
        int added = 0;
        int removed = 0;
        try {
            persisted =
                    reading == null
                            ? new IndexGenerations.Outcome(null, "not persisted")
                            : outcome(reading);
            if (persisted.loaded() != null) {
                VectorIndex idx = persisted.loaded().index();
                int[] delta = index.catchUp(idx, persisted.loaded().versions());
                added = delta[0];
                removed = delta[1];
                index.serve(idx, added + removed > 0);
            } else {
                index.serve(index.buildFromRecords(), true);
            }
        } catch (IOException | RuntimeException e) {
            storage.abandon(); // a failed open writes nothing
            catalogue.wipeRows();
            throw e;
        }
        IndexWarmUp.startIfWorthIt(spec, index.current().size(), index.factory());
        return new OpenReport.IndexRecovery(
                persisted.loaded() != null,
                persisted.loaded() == null ? -1 : persisted.loaded().generation(),
                added,
                removed,
                persisted.rebuiltBecause(),
                (System.nanoTime() - started) / 1_000_000);
    }

    /** Opens the text index reconciled with the records; null when the collection has none. */
    private TextIndexOpener.Opened openText(
            TextOpener textOpener, CollectionStorage storage, CollectionIndex index)
            throws IOException {
        if (textOpener == null) {
            return null;
        }
        try {
            TextIndexOpener.Opened t = textOpener.open(textRecords(catalogue, storage));
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
            return t;
        } catch (IOException | RuntimeException e) {
            storage.abandon(); // a failed open writes nothing
            index.current().close();
            catalogue.wipeRows();
            throw e;
        }
    }

    /** The records as the text index checks them against: version and text by ordinal. */
    static TextIndex.Records textRecords(RecordCatalogue catalogue, CollectionStorage storage) {
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

    /** After a failed open: the loaded records' vectors are plaintext and go no further. */
    private void wipeVectors() {
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
            throw new InterruptedIOException("interrupted while the index file was read");
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
}
