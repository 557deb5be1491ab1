package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.CollectionEngine.DeleteGuard;
import dev.nepenthe.core.internal.engine.CollectionEngine.WriteFence;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.storage.CollectionStorage.Placed;
import dev.nepenthe.core.internal.text.TextIndex;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's writes: upserts and deletes, each durable before it changes what reads see, and
 * the removal of records from reads in the order the engine's concurrency rules need (hidden,
 * unlinked, out of the index, and only then their ordinals free). Apart from the engine so that
 * every path that changes the records is in one file; all of it runs under the writer mutex.
 */
final class CollectionWrites {

    private static final System.Logger LOG = System.getLogger(CollectionWrites.class.getName());

    private final CollectionEngine engine;
    private final CollectionSpec spec;
    private final RecordValidator validator;
    private final Embedding embedding;
    private final ReentrantLock writer;
    private final RecordCatalogue catalogue;
    private final CollectionStorage storage;
    private final CollectionIndex index;

    /** The text index, or null when the collection has none. */
    private final TextIndex text;

    private final ReplacementLog replacements;

    /** Refuses writes that fall in a forgotten scope; set by the store once its protocol is up. */
    private volatile WriteFence fence = WriteFence.NONE;

    /** Refuses deletes of held records; set by the store once its protocol is up. */
    private volatile DeleteGuard guard = DeleteGuard.NONE;

    CollectionWrites(
            CollectionEngine engine,
            RecordValidator validator,
            Embedding embedding,
            CollectionIndex index,
            TextIndex text) {
        this.engine = engine;
        this.spec = engine.spec();
        this.validator = validator;
        this.embedding = embedding;
        this.writer = engine.writer();
        this.catalogue = engine.catalogue();
        this.storage = engine.storage();
        this.index = index;
        this.text = text;
        this.replacements = engine.replacements();
    }

    void setFence(WriteFence f) {
        this.fence = f;
    }

    void setDeleteGuard(DeleteGuard g) {
        this.guard = g;
    }

    /** Refuses when a hold keeps any record of the collection; see the engine's method. */
    void checkDroppable() {
        writer.lock();
        try {
            engine.ensureOpen();
            for (String tenant : catalogue.publishedTenants()) {
                RoaringBitmap ords = catalogue.tenantOrdinals(tenant);
                if (ords != null) {
                    guard.check(
                            "dropping collection '" + spec.name() + "'",
                            tenant,
                            null,
                            records(entriesAt(ords)));
                }
            }
        } finally {
            writer.unlock();
        }
    }

    /** The store's read-only latch. */
    private StorageFault fault() {
        return storage.fault();
    }

    /**
     * Inserts or replaces a batch atomically, durable when this returns (see
     * VectorCollection#upsertAll).
     */
    void upsertAll(List<VectorRecord> batch) {
        batch = embedding.embedMissingVectors(batch, spec.name());
        validator.validateBatch(batch);
        writer.lock();
        try {
            engine.ensureOpen();
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
                Entry old = engine.lookup(r.tenant(), r.id());
                int ord = free.hasNext() ? free.next() : fresh++;
                if (old != null) {
                    replaced.add(old);
                    replacedPlaced.add(new Placed(old.ordinal(), old.record()));
                    replacedBy.add(ord);
                }
                placed.add(new Placed(ord, r));
            }
            guardReplaced(replaced, placed);
            storage.put(placed, replacedPlaced);
            long stamp = catalogue.nextStamp();
            // A replacement is atomic for searches as for gets: the new versions become
            // searchable while the old ones still are, and only then do the old ones leave. A
            // search that meets both keeps one; one that found an old version taken away under
            // it follows the replacement log to the new one (CollectionSearch). A get finds the
            // old version until the id map points at the new one.
            VectorIndex idx = index.current();
            index.markDirty();
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
                    // (removeFromReads completes what reads see before it throws), and the store
                    // is read-only now.
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
     * Folds the log into segments when it is due. A failure does not fail the write that triggered
     * it (its batch is durable in the log, so it was acknowledged truthfully); it trips the
     * read-only latch, and the next write is refused.
     */
    private void checkpointIfDue() {
        writer.lock();
        try {
            if (!engine.isClosed()
                    && !fault().tripped()
                    && storage.checkpointIfDue()
                    && text != null) {
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

    /**
     * Deletes records by id within a tenant; unknown ids are skipped. Returns how many were
     * deleted.
     */
    int deleteAll(String tenant, List<String> ids) {
        writer.lock();
        try {
            engine.ensureOpen();
            fault().ensureWritable();
            List<Entry> doomed = new ArrayList<>();
            RoaringBitmap seen = new RoaringBitmap();
            for (String id : ids) {
                Entry e = engine.lookup(tenant, id);
                if (e != null && seen.checkedAdd(e.ordinal())) {
                    doomed.add(e);
                }
            }
            guard.check(
                    "deleting " + doomed.size() + " records of collection '" + spec.name() + "'",
                    tenant,
                    null,
                    records(doomed));
            return deleteEntries(doomed);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Deletes live entries (caller holds the writer mutex): journal and log first, then what reads
     * see, then the live files are rewritten without them.
     */
    int deleteEntries(List<Entry> doomed) {
        if (doomed.isEmpty()) {
            return 0;
        }
        return delete(
                doomed,
                storage::delete,
                "deleting failed, so it was not acknowledged; the store is read-only until it is"
                        + " reopened");
    }

    /** Deletes every record of one subject in one tenant and destroys its key; returns how many. */
    int deleteSubject(String tenant, String subject) {
        writer.lock();
        try {
            engine.ensureOpen();
            fault().ensureWritable();
            RoaringBitmap ords = catalogue.subjectOrdinals(tenant, subject);
            List<Entry> doomed = ords == null ? new ArrayList<>() : entriesAt(ords);
            guard.check(
                    "deleting a subject of collection '" + spec.name() + "'",
                    tenant,
                    subject,
                    records(doomed));
            // Even with no live records the scope's key is destroyed: it may still decrypt
            // copies in snapshots or backups.
            return delete(
                    doomed,
                    copies -> storage.dropSubject(tenant, subject, copies),
                    "deleting the subject failed; the store is read-only until it is reopened");
        } finally {
            writer.unlock();
        }
    }

    /**
     * Refuses a batch that would replace a held record (a replacement loses the held version as a
     * delete would); the batch's own copies are wiped first.
     */
    private void guardReplaced(List<Entry> replaced, List<Placed> placed) {
        if (replaced.isEmpty()) {
            return;
        }
        Map<String, List<VectorRecord>> byTenant = new HashMap<>();
        for (Entry e : replaced) {
            byTenant.computeIfAbsent(e.record().tenant(), t -> new ArrayList<>()).add(e.record());
        }
        try {
            byTenant.forEach(
                    (tenant, records) ->
                            guard.check(
                                    "replacing "
                                            + records.size()
                                            + " records of collection '"
                                            + spec.name()
                                            + "'",
                                    tenant,
                                    null,
                                    records));
        } catch (RuntimeException e) {
            placed.forEach(p -> RecordAccess.wipe(p.record()));
            throw e;
        }
    }

    private List<Entry> entriesAt(RoaringBitmap ords) {
        List<Entry> out = new ArrayList<>(ords.getCardinality());
        ords.forEach((int ord) -> out.add(catalogue.entry(ord)));
        return out;
    }

    private static List<VectorRecord> records(List<Entry> entries) {
        return entries.stream().map(Entry::record).toList();
    }

    /** The durable step of a delete: the storage journals and logs the copies' removal. */
    @FunctionalInterface
    private interface DurableDelete {
        void run(List<Placed> copies) throws IOException;
    }

    /**
     * One delete, under the writer mutex: hidden, made durable by {@code step} (a failure unhides
     * them and trips the latch, the message ending with {@code failure}), removed from reads, then
     * purged from the live files. Returns how many.
     */
    private int delete(List<Entry> doomed, DurableDelete step, String failure) {
        hideBeforeTheCopiesGo(doomed);
        try {
            step.run(placed(doomed));
        } catch (IOException ex) {
            catalogue.unhide(RecordCatalogue.REMOVING);
            throw fault().trip(
                            new UncheckedIOException(
                                    "collection '" + spec.name() + "': " + failure, ex));
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
    void removeFromReads(List<Entry> doomed, long stamp) {
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
            index.invalidate(fault());
        } catch (UncheckedIOException e) {
            failed = e;
        }
        // One batch call lets the index share repair work across the removals.
        int[] removed = ords.toArray();
        index.current().removeAll(removed);
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
    static List<Placed> placed(List<Entry> entries) {
        List<Placed> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            out.add(new Placed(e.ordinal(), e.record()));
        }
        return out;
    }
}
