package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.io.StorageFault;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's vector index and its persisted generations: which index serves now, whether it
 * changed since its generation was written, how a loaded generation catches up with the records,
 * and how a generation is written or destroyed. Kept apart from the engine so that the rules tying
 * the index file to the records (a file never outlives a removal in readable form, a file never
 * carries residue) live in one place. Changes happen under the collection's writer mutex.
 */
final class CollectionIndex {

    private static final System.Logger LOG = System.getLogger(CollectionIndex.class.getName());

    private final CollectionSpec spec;
    private final RecordCatalogue catalogue;
    private final CollectionStorage storage;
    private final Supplier<VectorIndex> factory;

    /** The persisted index generations, or null (an index kind that is not persisted, or tests). */
    private final IndexGenerations generations;

    private volatile VectorIndex current;

    /** Whether the index changed since the current generation was written (or none exists). */
    private boolean dirty;

    CollectionIndex(
            CollectionSpec spec,
            RecordCatalogue catalogue,
            CollectionStorage storage,
            Supplier<VectorIndex> factory,
            IndexGenerations generations) {
        this.spec = spec;
        this.catalogue = catalogue;
        this.storage = storage;
        this.factory = factory;
        this.generations = generations;
    }

    /** The index serving now, as last swapped in. */
    VectorIndex current() {
        return current;
    }

    /** The factory of the collection's index kind (a warm-up builds a throwaway one). */
    Supplier<VectorIndex> factory() {
        return factory;
    }

    /** The persisted generations, or null. */
    IndexGenerations generations() {
        return generations;
    }

    /** Serves {@code idx} from now on; whether it differs from the persisted generation. */
    void serve(VectorIndex idx, boolean changed) {
        current = idx;
        dirty = changed;
    }

    /** Records that the index changed since its generation was written. */
    void markDirty() {
        dirty = true;
    }

    /** Every live record added to a new index, on every core; the index to serve. */
    VectorIndex buildFromRecords() {
        // The SPI allows concurrent adds, so a graph index builds on every core (an index that
        // serialises adds internally takes turns).
        VectorIndex idx = factory.get();
        catalogue.liveEntries().parallelStream().forEach(e -> addTo(idx, e));
        idx.afterBulkLoad();
        return idx;
    }

    /**
     * Brings a loaded index up to the records: an ordinal whose record version differs from the one
     * the generation recorded (or that no record holds now) is removed, and every record the index
     * lacks is added. Only what changed after the generation was written costs anything. Returns
     * {added, removed}.
     */
    int[] catchUp(VectorIndex idx, long[] versions) throws IOException {
        List<Entry> missing = new ArrayList<>();
        List<Integer> stale = new ArrayList<>();
        RoaringBitmap live = new RoaringBitmap();
        for (Entry e : catalogue.liveEntries()) {
            int ord = e.ordinal();
            live.add(ord);
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
            if (versions[ord] >= 0 && !live.contains(ord) && idx.contains(ord)) {
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
     * Adds an entry's vector to an index through a copy read for it and wiped after; does nothing
     * when the entry left its ordinal meanwhile (only a build outside the writer mutex sees that).
     */
    void addTo(VectorIndex idx, Entry e) {
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
     * Writes the index as a new persisted generation (destroying the previous one) when it changed
     * since the last, unless it holds purgeable residue of a removal (a file must not carry that;
     * the next open rebuilds instead). Under the writer mutex. A failure is logged and leaves the
     * collection as it was: the index is derived, the next open rebuilds it.
     */
    void persist(StorageFault fault) {
        if (generations == null || !generations.enabled() || !dirty) {
            return;
        }
        VectorIndex idx = current;
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
            dirty = false;
        } catch (IOException | RuntimeException e) {
            fault.trip(e);
            LOG.log(
                    System.Logger.Level.WARNING,
                    "collection ''{0}'': writing the index generation failed; the next"
                            + " open rebuilds the index from the records: {1}",
                    spec.name(),
                    e.toString());
        }
    }

    /**
     * Destroys the persisted index generation, if any: its key now, its file beside the caller (see
     * {@code IndexGenerations.destroy}). Under the writer mutex.
     *
     * @throws UncheckedIOException if destroying failed (the latch is tripped)
     */
    void invalidate(StorageFault fault) {
        dirty = true;
        if (generations != null) {
            try {
                generations.invalidate();
            } catch (IOException e) {
                fault.trip(e);
                throw new UncheckedIOException(
                        "collection '"
                                + spec.name()
                                + "': destroying the persisted index"
                                + " generation failed; nothing was removed",
                        e);
            }
        }
    }

    /** The persisted index generation serving now, or -1. */
    long generation() {
        return generations == null ? -1 : generations.currentGeneration();
    }

    /** Its file, or null. */
    Path generationFile() {
        return generations == null ? null : generations.currentFile();
    }

    /** Waits until destroyed generations' files are gone (a closed collection leaves none). */
    void awaitDeletions() {
        if (generations != null) {
            generations.awaitDeletions();
        }
    }

    /**
     * Builds a new index from the live records no forget or hold hides, outside {@code writer};
     * then, under it ({@code stillOpen} throws if the collection closed meanwhile), applies the
     * writes that landed during the build and swaps it in.
     */
    // Identity on purpose: an entry replaced meanwhile is another object at the same ordinal.
    @SuppressWarnings("ReferenceEquality")
    void rebuild(ReentrantLock writer, Runnable stillOpen) {
        List<Entry> sources = new ArrayList<>();
        RoaringBitmap hiddenNow = catalogue.hidden();
        for (Entry e : catalogue.liveEntries()) {
            if (!hiddenNow.contains(e.ordinal())) {
                sources.add(e);
            }
        }
        VectorIndex fresh = factory.get();
        // A source replaced or deleted meanwhile is not added; the swap below adds what replaced
        // it.
        sources.parallelStream().forEach(e -> addTo(fresh, e));
        fresh.afterBulkLoad();
        writer.lock();
        try {
            stillOpen.run();
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
            VectorIndex old = current;
            serve(fresh, true);
            old.close();
        } finally {
            writer.unlock();
        }
    }

    /** Destroys every generation's key (the collection is being dropped). */
    void retire() throws IOException {
        if (generations != null) {
            generations.retire();
        }
    }
}
