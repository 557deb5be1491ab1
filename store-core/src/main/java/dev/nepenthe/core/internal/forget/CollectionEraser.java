package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.DerivedFromRef;
import dev.nepenthe.core.internal.engine.JoinKeys;
import dev.nepenthe.core.internal.engine.RecordCatalogue;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.text.TextIndex;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import org.roaringbitmap.RoaringBitmap;

/**
 * The forget protocol's work inside one collection: the mark (hide a scope from every read), the
 * cleanup (resolve the scope and its provenance closure, remove it from the index, the catalogue
 * and the files), the per-surface proofs (index, storage), the negative-space probe, the join-key
 * check, the key destruction and reconciliation's second removal. It works over the collection
 * engine's catalogue, storage and index, under the engine's writer mutex; a stateless view, made
 * per call.
 */
final class CollectionEraser {

    /**
     * A record the cleanup removed: the record (its vector is the probe), ordinal and version, and
     * its text's most distinctive terms in the collection's text index (the lexical probe; empty
     * without text or text index).
     */
    record Removed(VectorRecord record, int ordinal, long version, List<String> textTerms) {
        Removed {
            textTerms = List.copyOf(textTerms);
        }
    }

    /** How many of a forgotten text's rarest terms the lexical probe and the text proof use. */
    static final int PROBE_TERMS = 16;

    /**
     * What a cleanup resolved for one operation in this collection, before anything is deleted: the
     * catalogue entries to remove, the records as the probe keeps them, the derived records held
     * for regeneration, and both as the forget engine keys records across collections ({@link
     * DerivedFromRef#key}), for the other collections' closures; and, for a subject scope in a
     * collection that declares subject identifier keys, the values the subject's records held under
     * them.
     */
    record Resolved(
            List<Entry> entries,
            List<Removed> removed,
            List<Suspect> heldForRegeneration,
            Set<String> reached,
            List<OperationSecret.Found> identifiers) {}

    private final CollectionEngine engine;
    private final RecordCatalogue catalogue;
    private final CollectionStorage storage;
    private final ReentrantLock writer;
    private final String name;

    CollectionEraser(CollectionEngine engine) {
        this.engine = engine;
        this.catalogue = engine.catalogue();
        this.storage = engine.storage();
        this.writer = engine.writer();
        this.name = engine.name();
    }

    String name() {
        return name;
    }

    CollectionEngine engine() {
        return engine;
    }

    /**
     * The mark: from the moment this returns no read returns a record in scope, including searches
     * already running (they check at materialisation). Waits for a write in flight (so the write
     * either lands before the mark and is hidden, or meets the fence), never for reads.
     *
     * @param subject the subject of a subject scope (a faster lookup), else null
     * @return the ids of the records hidden (for the registered surfaces to block too)
     */
    Set<String> block(
            String operation, String tenant, Predicate<VectorRecord> inScope, String subject) {
        writer.lock();
        try {
            engine.ensureOpen();
            RoaringBitmap mine = catalogue.scopeOrdinals(tenant, inScope, subject);
            catalogue.hide(operation, mine);
            Set<String> ids = new HashSet<>();
            mine.forEach((int ord) -> ids.add(catalogue.entry(ord).record().id()));
            return ids;
        } finally {
            writer.unlock();
        }
    }

    /** Lifts an operation's block (its records are gone, or it ended). */
    void unblock(String operation) {
        catalogue.unhide(operation);
    }

    /** Live records a scope names (hidden ones included): for hold checks and verification. */
    List<VectorRecord> recordsInScope(
            String tenant, Predicate<VectorRecord> inScope, String subject) {
        writer.lock();
        try {
            engine.ensureOpen();
            List<VectorRecord> out = new ArrayList<>();
            catalogue
                    .scopeOrdinals(tenant, inScope, subject)
                    .forEach((int ord) -> out.add(catalogue.entry(ord).record()));
            return out;
        } finally {
            writer.unlock();
        }
    }

    /**
     * The ids of a tenant's records (hidden ones included) whose metadata passes a filter, from the
     * catalogue's metadata index (see {@link RecordCatalogue#matching}).
     */
    List<String> idsMatching(String tenant, Filter filter) {
        writer.lock();
        try {
            engine.ensureOpen();
            RoaringBitmap tenantOrds = catalogue.tenantOrdinals(tenant);
            List<String> out = new ArrayList<>();
            if (tenantOrds != null) {
                catalogue
                        .matching(filter, tenantOrds, true)
                        .forEach((int ord) -> out.add(catalogue.entry(ord).record().id()));
            }
            return out;
        } finally {
            writer.unlock();
        }
    }

    /** Whether (tenant, id) is live, hidden or not: one id-map lookup. */
    boolean isLive(String tenant, String id) {
        return engine.lookup(tenant, id) != null;
    }

    /**
     * The cleanup's first half for one operation: resolves the scope and its provenance closure
     * (records whose {@code derivedFrom} names a record in scope, transitively, within the tenant;
     * a source in another collection counts when {@code reachedElsewhere} holds it) and hides what
     * it adds. With {@code cascade} false, derived records are not resolved for removal but hidden
     * and returned as regeneration-required. The protocol saves the probe vectors durably, then
     * {@link #remove}s the entries of every operation of its batch at once. Writes wait while it
     * runs; reads go on (the records are hidden since the mark).
     *
     * @param reachedElsewhere records this operation resolves or holds, in any collection, keyed as
     *     {@link DerivedFromRef#key} keys them
     * @param taken ordinals that older operations of the same batch resolved, or this operation in
     *     an earlier pass: treated as removed already, so a record two scopes name goes to the
     *     older operation, as it would if they ran one after the other
     */
    Resolved resolve(
            String operation,
            String tenant,
            Predicate<VectorRecord> inScope,
            String subject,
            boolean cascade,
            Set<String> reachedElsewhere,
            RoaringBitmap taken)
            throws IOException {
        // The set cannot grow afterwards: writes in scope are refused by the fence, and records
        // deriving from the scope are too.
        List<Entry> resolved = new ArrayList<>();
        List<Removed> removed = new ArrayList<>();
        List<Suspect> held = new ArrayList<>();
        Set<String> mine = new HashSet<>();
        List<OperationSecret.Found> identifiers = new ArrayList<>();
        writer.lock();
        try {
            engine.ensureOpen();
            RoaringBitmap doomed = catalogue.scopeOrdinals(tenant, inScope, subject);
            doomed.andNot(taken);
            RoaringBitmap derivedHeld = new RoaringBitmap();
            Set<String> reached = new HashSet<>(reachedElsewhere);
            doomed.forEach(
                    (int ord) -> reached.add(name + '\0' + catalogue.entry(ord).record().id()));
            // Provenance closure: a fixpoint over the tenant's records that name sources, each
            // source read once as the record it names (here or in another collection).
            List<Entry> deriving = new ArrayList<>();
            List<String[]> sources = new ArrayList<>();
            RoaringBitmap tenantOrds = catalogue.tenantOrdinals(tenant);
            if (tenantOrds != null) {
                RoaringBitmap.andNot(tenantOrds, taken)
                        .forEach(
                                (int ord) -> {
                                    Entry e = catalogue.entry(ord);
                                    if (!e.record().derivedFrom().isEmpty()) {
                                        deriving.add(e);
                                        sources.add(
                                                e.record().derivedFrom().stream()
                                                        .map(d -> DerivedFromRef.read(d).key(name))
                                                        .toArray(String[]::new));
                                    }
                                });
            }
            boolean grew = true;
            while (grew) {
                grew = false;
                for (int i = 0; i < deriving.size(); i++) {
                    Entry e = deriving.get(i);
                    int ord = e.ordinal();
                    if (doomed.contains(ord) || derivedHeld.contains(ord)) {
                        continue;
                    }
                    for (String src : sources.get(i)) {
                        if (reached.contains(src)) {
                            (cascade ? doomed : derivedHeld).add(ord);
                            reached.add(name + '\0' + e.record().id());
                            grew = true;
                            break;
                        }
                    }
                }
            }
            derivedHeld.forEach(
                    (int ord) -> {
                        VectorRecord r = catalogue.entry(ord).record();
                        List<String> surviving =
                                r.derivedFrom().stream()
                                        .filter(
                                                d ->
                                                        !reached.contains(
                                                                DerivedFromRef.read(d).key(name)))
                                        .toList();
                        String forgottenSource =
                                r.derivedFrom().stream()
                                        .filter(
                                                d ->
                                                        reached.contains(
                                                                DerivedFromRef.read(d).key(name)))
                                        .findFirst()
                                        .orElse("");
                        held.add(
                                new Suspect(
                                        "regeneration-required",
                                        name,
                                        r.id(),
                                        Double.NaN,
                                        forgottenSource
                                                + (surviving.isEmpty()
                                                        ? ""
                                                        : "; surviving sources: "
                                                                + String.join(",", surviving))));
                        mine.add(name + '\0' + r.id());
                    });
            if (!derivedHeld.isEmpty()) {
                catalogue.hide(operation, derivedHeld);
            }
            // Cascaded records are hidden too before anything is deleted.
            catalogue.hide(operation, doomed);
            TextIndex text = engine.textIndex();
            for (int ord : doomed.toArray()) {
                Entry e = catalogue.entry(ord);
                resolved.add(e);
                mine.add(name + '\0' + e.record().id());
                String t = text == null ? null : catalogue.text(e);
                // The record with a copy of its vector, which the operation holds and wipes at its
                // seal; the catalogue zeros its own row when the ordinal is freed.
                removed.add(
                        new Removed(
                                catalogue.withItsVector(e),
                                ord,
                                storage.versionOf(ord),
                                t == null ? List.of() : text.distinctiveTerms(t, PROBE_TERMS)));
                if (subject != null && subject.equals(e.record().subject())) {
                    identifiersOf(e, identifiers);
                }
            }
        } finally {
            writer.unlock();
        }
        return new Resolved(resolved, removed, held, mine, identifiers);
    }

    /**
     * Adds the values a subject's record holds under the collection's subject identifier keys (see
     * {@link dev.nepenthe.core.CollectionSpec#subjectIdentifiers}): a string, or a whole number (a
     * phone number stored as one). A value an identifier could not match by (shorter than 2
     * characters, longer than 256, no letter or digit) is left out, as a request would refuse it.
     * Reads the record's stored copy, before it goes.
     */
    private void identifiersOf(Entry e, List<OperationSecret.Found> out) {
        List<String> keys = engine.spec().subjectIdentifiers();
        if (keys.isEmpty()) {
            return;
        }
        Map<String, Object> metadata = catalogue.metadata(e);
        if (metadata == null) {
            return;
        }
        for (String key : keys) {
            String value =
                    switch (metadata.get(key)) {
                        case String sv -> sv;
                        case Long l -> Long.toString(l);
                        case Integer i -> Integer.toString(i);
                        case null, default -> null;
                    };
            if (value == null || value.strip().length() < 2 || value.length() > 256) {
                continue;
            }
            try {
                JoinKeys.Identifier.of(value);
            } catch (IllegalArgumentException notMatchable) {
                continue;
            }
            out.add(new OperationSecret.Found(name + "/" + key, value));
        }
    }

    /**
     * The cleanup's second half, once for a whole batch: journals and logs the deletion of the
     * resolved entries, takes them out of what reads see, lets the index repair itself over all of
     * them in one call, frees the ordinals and rewrites the live files once. Entries a plain delete
     * removed meanwhile are skipped. Reads run throughout; a crash before the journal entry is safe
     * (the resumed operations resolve and delete them again).
     */
    void remove(List<Entry> resolved) throws IOException {
        if (resolved.isEmpty()) {
            return;
        }
        // The storage's crash points report to the store's test points (see CrashPoints).
        CrashPoints.during(
                engine.testPoints(),
                () -> {
                    removeResolved(resolved);
                    return null;
                });
    }

    // Identity on purpose: an entry replaced meanwhile is another object at the same ordinal.
    @SuppressWarnings("ReferenceEquality")
    private void removeResolved(List<Entry> resolved) throws IOException {
        writer.lock();
        try {
            engine.ensureOpen();
            List<Entry> current = new ArrayList<>(resolved.size());
            for (Entry e : resolved) {
                if (catalogue.entry(e.ordinal()) == e) {
                    current.add(e);
                }
            }
            storage.delete(CollectionEngine.placed(current));
            // Journaled and logged, not yet out of the index: a crash image here must resume.
            engine.testPoints().reached("cleanup.deleted");
            long stamp = catalogue.nextStamp();
            engine.removeFromReads(current, stamp);
            catalogue.publish(stamp);
            storage.purgeDeleted();
        } finally {
            writer.unlock();
        }
    }

    /**
     * Whether a record of the tenant here names, as {@code "@<collection>/<id>"}, one of these
     * records of other collections (keyed as {@link DerivedFromRef#key} keys them): then this
     * collection's provenance closure must be resolved again. Lookups in the catalogue's {@code
     * derivedFrom} index, one per record.
     */
    boolean derivesFromAny(String tenant, Set<String> keys) {
        writer.lock();
        try {
            engine.ensureOpen();
            RoaringBitmap tenantOrds = catalogue.tenantOrdinals(tenant);
            if (tenantOrds == null) {
                return false;
            }
            for (String k : keys) {
                int nul = k.indexOf('\0');
                String collection = k.substring(0, nul);
                if (collection.equals(name)) {
                    continue; // this collection's own closure followed it already
                }
                RoaringBitmap b =
                        catalogue.derivedFrom(
                                DerivedFromRef.spell(collection, k.substring(nul + 1)));
                if (b != null && RoaringBitmap.intersects(b, tenantOrds)) {
                    return true;
                }
            }
            return false;
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
            engine.ensureOpen();
            VectorIndex idx = engine.index();
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
     * Merges the text index's deleted documents away (every segment holding one is rewritten, the
     * old files deleted and their keys destroyed) and commits. Writes wait.
     *
     * @param removed the records the cleanup removed from this collection
     * @return the documents of the removed records (those with text), or -1 when the collection has
     *     no text index
     */
    int purgeText(List<Removed> removed) throws IOException {
        writer.lock();
        try {
            engine.ensureOpen();
            TextIndex text = engine.textIndex();
            if (text == null) {
                return -1;
            }
            // Lucene drops a segment whose every document is deleted as soon as the delete is
            // applied, so its own count of merged-away documents misses those: count ours.
            text.mergeDeletesAway();
            return textDocuments(removed);
        } finally {
            writer.unlock();
        }
    }

    /** How many of the removed records had a text document (those with probe terms). */
    static int textDocuments(List<Removed> removed) {
        return (int) removed.stream().filter(r -> !r.textTerms().isEmpty()).count();
    }

    /** The proofs of this collection's surfaces (index, storage, text) for the verify phase. */
    SurfaceProofs proofs() {
        return new SurfaceProofs(engine);
    }

    /** The probes of this collection's survivors for traces of forgotten records. */
    ResidueProbe probes() {
        return new ResidueProbe(engine);
    }

    /**
     * Destroys the data key of (tenant, subject) in this collection and journals the drop, so every
     * copy of its ciphertext anywhere becomes unreadable. Returns 1 if a key was destroyed now, 0
     * if there was none to destroy, -1 if one is still there.
     */
    int destroySubjectKey(String tenant, String subject) throws IOException {
        writer.lock();
        try {
            engine.ensureOpen();
            RoaringBitmap left = catalogue.subjectOrdinals(tenant, subject);
            if (left != null && !left.isEmpty()) {
                throw new IllegalStateException(
                        "collection '"
                                + name
                                + "': "
                                + left.getCardinality()
                                + " records of the scope are still live; the key is not destroyed");
            }
            boolean destroyed = storage.destroySubjectKey(tenant, subject);
            return storage.hasKey(tenant, subject) ? -1 : destroyed ? 1 : 0;
        } finally {
            writer.unlock();
        }
    }

    /**
     * Live records for which {@code resurrected} holds (given each record and its version), removed
     * again (reconciliation). The test runs on several threads at once.
     */
    int removeWhere(BiPredicate<VectorRecord, Long> resurrected) {
        writer.lock();
        try {
            engine.ensureOpen();
            // Every record is tested (reconciliation hashes each one's fence keys, a few
            // microseconds apiece): on every core, since nothing the test reads changes meanwhile.
            List<Entry> doomed =
                    catalogue.liveEntries().parallelStream()
                            .filter(
                                    e ->
                                            resurrected.test(
                                                    e.record(), storage.versionOf(e.ordinal())))
                            .toList();
            return engine.deleteEntries(doomed);
        } finally {
            writer.unlock();
        }
    }

    /**
     * Takes a version floor for a re-admission (journaled, fsynced): every record of this
     * collection written before it has a lower version, every later one a higher, across reopens
     * and restores. For a subject, the journal also learns that a key of the subject's from now on
     * is a new one. Waits for a write in flight.
     */
    long reserveVersionFloor(String tenant, String subject) throws IOException {
        writer.lock();
        try {
            engine.ensureOpen();
            return storage.reserveVersionFloor(tenant, subject);
        } finally {
            writer.unlock();
        }
    }

    /** Every later write here gets a version above {@code version}. */
    void ensureVersionAbove(long version) {
        writer.lock();
        try {
            engine.ensureOpen();
            storage.ensureVersionAbove(version);
        } finally {
            writer.unlock();
        }
    }
}
