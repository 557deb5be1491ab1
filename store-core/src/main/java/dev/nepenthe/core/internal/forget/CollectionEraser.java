package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.DerivedFromRef;
import dev.nepenthe.core.internal.engine.JoinKeys;
import dev.nepenthe.core.internal.engine.RecordCatalogue;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.index.BitmapAccept;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.internal.io.CrashPoints;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import java.util.stream.IntStream;
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
     * A survivor holding at least this share of a forgotten text's probe terms is a suspect: "most
     * of them", with room for a copy that dropped a word or two (a hand-made copy of a twelve-term
     * note that kept its names, numbers and places holds eight).
     */
    static final double LEXICAL_SHARE = 0.6;

    /**
     * Texts with fewer probe terms than this are left to the vector probe (too little to go on).
     */
    static final int MIN_PROBE_TERMS = 4;

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
            CrashPoints.reached("cleanup.deleted");
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

    /**
     * The text surface's proof (see {@link TextIndex#residue}): no live document of a forgotten
     * record, no deleted document holding a forgotten term, no forgotten term that no survivor
     * holds left in a term dictionary or in any file's plaintext. Writes wait.
     *
     * @return the outcome, or null when the collection has no text index
     */
    SurfaceOutcome verifyText(List<Removed> removed, long purged) throws IOException {
        writer.lock();
        try {
            engine.ensureOpen();
            TextIndex text = engine.textIndex();
            if (text == null) {
                return null;
            }
            Map<Integer, Long> forgotten = new java.util.HashMap<>();
            Set<String> terms = new java.util.LinkedHashSet<>();
            for (Removed r : removed) {
                forgotten.put(r.ordinal(), r.version());
                terms.addAll(r.textTerms());
            }
            TextIndex.Residue residue = text.residue(forgotten, terms);
            return new SurfaceOutcome(
                    "collection:" + name + "/text",
                    ErasureClass.PHYSICAL,
                    purged,
                    residue.checked() + removed.size(),
                    residue.problems(),
                    null);
        } finally {
            writer.unlock();
        }
    }

    /**
     * The lexical probe: surviving records of the tenant whose text holds at least {@value
     * #LEXICAL_SHARE} of a forgotten text's distinctive terms (a near copy, a quote, a summary that
     * kept the names and numbers), scored by the share they hold. Takes no lock.
     *
     * @return suspects, highest share first, one per surviving record
     */
    List<Suspect> lexicalProbe(String tenant, List<Removed> probes) throws IOException {
        engine.ensureOpen();
        TextIndex text = engine.textIndex();
        RoaringBitmap tenantOrds = catalogue.publishedTenant(tenant);
        if (text == null || tenantOrds == null) {
            return List.of();
        }
        RoaringBitmap visible = RoaringBitmap.andNot(tenantOrds, catalogue.hidden());
        Map<String, Suspect> best = new java.util.HashMap<>();
        for (Removed p : probes) {
            List<String> terms = p.textTerms();
            if (terms.size() < MIN_PROBE_TERMS) {
                continue;
            }
            int min = (int) Math.ceil(LEXICAL_SHARE * terms.size());
            for (TextIndex.Sharing s : text.sharing(terms, min, visible, 100)) {
                Entry e = catalogue.entry(s.ordinal());
                if (e == null) {
                    continue;
                }
                double share = (double) s.shared() / terms.size();
                Suspect found =
                        new Suspect("text-residue", name, e.record().id(), share, p.record().id());
                best.merge(e.record().id(), found, (a, b) -> a.score() >= b.score() ? a : b);
            }
        }
        List<Suspect> out = new ArrayList<>(best.values());
        out.sort(Comparator.comparingDouble(Suspect::score).reversed());
        return out;
    }

    /**
     * What the index's check of a batch's removals found: the integrity checker's report over all
     * of them, which removed records are still indexed (unless a different record has reused the
     * ordinal), and whether residue is left. Holds the batch's records only until each operation's
     * outcome is taken from it ({@link #indexOutcome}).
     */
    record IndexProof(
            String surface,
            IntegrityReport report,
            Set<Removed> stillIndexed,
            boolean residue,
            String residual) {
        /** What the integrity checker checked, summed over its counts. */
        long checkerChecked() {
            return report.checked().values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /**
     * The index surface's check, once for every record a batch removed from this collection: the
     * index's own proof of the removals, the removed ordinals looked up, and the residue flag.
     */
    IndexProof proveIndex(List<Removed> removed) {
        writer.lock();
        try {
            engine.ensureOpen();
            VectorIndex idx = engine.index();
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
            Set<Removed> stillIndexed = Collections.newSetFromMap(new IdentityHashMap<>());
            for (Removed r : removed) {
                Entry now = catalogue.entry(r.ordinal());
                boolean reused =
                        now != null
                                && !(now.record().tenant().equals(r.record().tenant())
                                        && now.record().id().equals(r.record().id()));
                if (idx.contains(r.ordinal()) && !reused) {
                    stillIndexed.add(r);
                }
            }
            return new IndexProof(
                    "collection:" + name + "/index:" + idx.kind(),
                    report,
                    stillIndexed,
                    idx.hasResidue(),
                    idx.erasureResidual());
        } finally {
            writer.unlock();
        }
    }

    /**
     * One operation's index surface, from the check of its batch: clean when the integrity checker
     * is, none of the operation's own records is still indexed, and no residue is left. Its purged
     * count is the operation's own records; its checked count adds the checker's work only when the
     * check was the operation's alone ({@code sharedWith} 1), because counts in a receipt are the
     * operation's own (a shared check is cited apart, see {@link BatchCitation}).
     *
     * @param sharedWith how many operations' removals the check covered
     */
    static SurfaceOutcome indexOutcome(IndexProof proof, List<Removed> mine, int sharedWith) {
        List<String> problems = new ArrayList<>();
        if (!proof.report().isClean()) {
            problems.add(
                    "integrity checker"
                            + (sharedWith > 1
                                    ? " (a check shared by " + sharedWith + " operations)"
                                    : "")
                            + ": "
                            + proof.report().violations());
        }
        long stillIndexed = mine.stream().filter(proof.stillIndexed()::contains).count();
        if (stillIndexed > 0) {
            problems.add(stillIndexed + " forgotten ordinals are still in the index");
        }
        if (proof.residue()) {
            problems.add(
                    "the index reports residue of removed vectors (e.g. codebooks trained on"
                            + " them)");
        }
        long checked = (sharedWith == 1 ? proof.checkerChecked() : 0) + mine.size();
        return new SurfaceOutcome(
                proof.surface(),
                ErasureClass.PHYSICAL,
                mine.size(),
                checked,
                problems,
                proof.residual());
    }

    /**
     * The index surface of a collection a forget removed nothing from: nothing to prove there
     * beyond the absence of residue, so the (whole-index) integrity checker does not run.
     */
    SurfaceOutcome untouchedIndex() {
        writer.lock();
        try {
            engine.ensureOpen();
            VectorIndex idx = engine.index();
            if (idx.hasResidue()) {
                idx.purgeResidue(); // left by a plain delete, as in verifyIndex
            }
            List<String> problems =
                    idx.hasResidue()
                            ? List.of(
                                    "the index reports residue of removed vectors (e.g. codebooks"
                                            + " trained on them)")
                            : List.of();
            return new SurfaceOutcome(
                    "collection:" + name + "/index:" + idx.kind(),
                    ErasureClass.PHYSICAL,
                    0,
                    0,
                    problems,
                    "nothing in scope was stored here; the index was not re-checked");
        } finally {
            writer.unlock();
        }
    }

    /**
     * The storage surface's proof: a byte scan of the files that could hold the removed records
     * (their buckets' segments, the log, the id map) finds none of their keyed hashes, and no id
     * resolves any more. Writes wait (they would change the files under the scan).
     */
    SurfaceOutcome verifyStorage(List<Removed> removed) throws IOException {
        writer.lock();
        try {
            engine.ensureOpen();
            List<VectorRecord> records = removed.stream().map(Removed::record).toList();
            CollectionStorage.Residue residue = storage.scanForCopies(records);
            List<String> problems = new ArrayList<>();
            if (residue.occurrences() > 0) {
                problems.add(
                        residue.occurrences()
                                + " copies of forgotten records' hashes in "
                                + residue.files());
            }
            long addressable =
                    records.stream().filter(r -> engine.lookup(r.tenant(), r.id()) != null).count();
            if (addressable > 0) {
                problems.add(addressable + " forgotten ids still resolve to a live record");
            }
            return new SurfaceOutcome(
                    "collection:" + name + "/storage",
                    ErasureClass.PHYSICAL,
                    removed.size(),
                    residue.filesScanned(),
                    problems,
                    null);
        } finally {
            writer.unlock();
        }
    }

    /**
     * What the negative-space probe found in a collection, and which probe ran (null when it
     * compared nothing).
     */
    record Probe(List<Suspect> suspects, ProbeRun run) {}

    /**
     * Candidates the approximate probe first asks the index for, per forgotten vector. When the
     * last of them is still at or above the threshold there may be more: it asks for four times as
     * many, until the last falls below or the candidates would be the whole tenant (then that
     * vector is compared with every survivor).
     */
    static final int PROBE_CANDIDATES = 64;

    /**
     * The approximate probe's beam: HNSW's {@code efSearch} (at least the candidates asked for),
     * eight times the default; at 384 already HNSW's recall@10 is 0.997 on 150,000 real 384-d
     * embeddings (BENCHMARKS.md).
     */
    static final int PROBE_EF = 512;

    /**
     * IVF-PQ lists probed (the index caps it at the lists it has): a quarter of 256 lists, four
     * times the default.
     */
    static final int PROBE_NPROBE = 64;

    /** IVF-PQ candidates re-scored from full vectors (at least the candidates asked for). */
    static final int PROBE_RERANK = 512;

    /**
     * The negative-space probe: every unhidden record of the tenant whose vector has cosine
     * similarity at or above {@code threshold} with a forgotten vector. Exact (each record compared
     * with every probe while it is in cache) unless the tenant has more than {@code
     * approximateAbove} records here, the collection ranks by cosine and its index is approximate,
     * and the request did not force it: then each forgotten vector searches the collection's index
     * over the tenant's unhidden records with a wide beam, and the candidates are scored exactly,
     * so a suspect is always a true one and what the index misses is what the approximate probe can
     * miss. Takes no lock: it reads what searches read, so writes go on.
     *
     * @return suspects, best score first, at most one per surviving record, and which probe ran
     */
    Probe probe(
            String tenant,
            List<Removed> probes,
            double threshold,
            int approximateAbove,
            boolean exactForced) {
        engine.ensureOpen();
        RoaringBitmap tenantOrds = catalogue.publishedTenant(tenant);
        if (tenantOrds == null || probes.isEmpty()) {
            return new Probe(List.of(), null);
        }
        int dim = engine.spec().dimension();
        // A zero vector has no direction, so no cosine: it cannot be near anything.
        List<Removed> same =
                probes.stream()
                        .filter(
                                p ->
                                        RecordAccess.dimension(p.record()) == dim
                                                && !isZero(RecordAccess.vectorUnsafe(p.record())))
                        .toList();
        if (same.isEmpty()) {
            return new Probe(List.of(), null);
        }
        VectorKernels kernels = Kernels.get();
        // The unit-length probes in one block: each record is scored against all of them in
        // one batch call while its vector is in cache.
        float[] probeBlock = new float[same.size() * dim];
        for (int i = 0; i < same.size(); i++) {
            float[] unit = Metric.COSINE.prepare(RecordAccess.vectorUnsafe(same.get(i).record()));
            System.arraycopy(unit, 0, probeBlock, i * dim, dim);
            Arrays.fill(
                    unit, 0f); // copies of forgotten vectors are wiped, not left to the collector
        }
        RoaringBitmap visible = RoaringBitmap.andNot(tenantOrds, catalogue.hidden());
        int survivors = visible.getCardinality();
        VectorIndex idx = engine.index();
        String why =
                exactForced
                        ? "forced by the request"
                        : survivors <= approximateAbove
                                ? "the tenant has "
                                        + survivors
                                        + " records here; the policy searches the"
                                        + " index above "
                                        + approximateAbove
                                : idx.kind().equals(ExactIndex.KIND)
                                        ? "the index is exact: searching it costs what the exact"
                                                + " probe costs"
                                        : engine.spec().metric() != Metric.COSINE
                                                ? "metric "
                                                        + engine.spec().metric()
                                                        + ": the index does not rank"
                                                        + " by cosine"
                                                : null;
        try {
            if (why != null) {
                List<Suspect> found =
                        scan(visible.toArray(), probeBlock, same, threshold, kernels, dim);
                return new Probe(
                        found,
                        new ProbeRun(
                                name, false, idx.kind(), why, Map.of(), survivors, survivors, 0));
            }
            return searchIndex(idx, visible, probeBlock, same, threshold, kernels, dim);
        } finally {
            Arrays.fill(probeBlock, 0f);
        }
    }

    /** The exact probe over {@code ords}: each record against every unit probe of {@code block}. */
    private List<Suspect> scan(
            int[] ords,
            float[] block,
            List<Removed> rows,
            double threshold,
            VectorKernels kernels,
            int dim) {
        ConcurrentLinkedQueue<Suspect> found = new ConcurrentLinkedQueue<>();
        ThreadLocal<float[]> scores = ThreadLocal.withInitial(() -> new float[rows.size()]);
        // Each thread's copy of the row it scores; wiped when the scan ends.
        ConcurrentLinkedQueue<float[]> rowCopies = new ConcurrentLinkedQueue<>();
        ThreadLocal<float[]> rowCopy =
                ThreadLocal.withInitial(
                        () -> {
                            float[] row = new float[dim];
                            rowCopies.add(row);
                            return row;
                        });
        // Parallel only where a core is left over for searches: on two cores the probe runs
        // on the forget worker alone (measured: search p99 while forgets run, BENCHMARKS.md).
        IntStream range = IntStream.range(0, ords.length);
        if (Runtime.getRuntime().availableProcessors() > 2) {
            range = range.parallel();
        }
        range.forEach(
                i -> {
                    Entry e = catalogue.entry(ords[i]);
                    float[] v = rowCopy.get();
                    if (e == null || !catalogue.readVector(e, v)) {
                        return; // deleted or replaced since the bitmap was published
                    }
                    VectorRecord r = e.record();
                    float norm = (float) Math.sqrt(kernels.dot(v, v));
                    if (norm == 0) {
                        return;
                    }
                    float[] out = scores.get();
                    kernels.dotBatch(v, block, 0, out.length, dim, out, 0);
                    int bestProbe = 0;
                    for (int p = 1; p < out.length; p++) {
                        if (out[p] > out[bestProbe]) {
                            bestProbe = p;
                        }
                    }
                    float best = out[bestProbe] / norm;
                    if (best >= threshold) {
                        found.add(
                                new Suspect(
                                        "vector-residue",
                                        name,
                                        r.id(),
                                        best,
                                        rows.get(bestProbe).record().id()));
                    }
                });
        rowCopies.forEach(row -> Arrays.fill(row, 0f));
        List<Suspect> out = new ArrayList<>(found);
        out.sort(Comparator.comparingDouble(Suspect::score).reversed());
        return out;
    }

    /**
     * The approximate probe: each forgotten vector searches the index over the tenant's unhidden
     * records, and each candidate is scored exactly, with the exact probe's arithmetic. A record
     * several forgotten vectors find keeps its best score, as in the exact probe.
     */
    private Probe searchIndex(
            VectorIndex idx,
            RoaringBitmap visible,
            float[] block,
            List<Removed> rows,
            double threshold,
            VectorKernels kernels,
            int dim) {
        int survivors = visible.getCardinality();
        Accept accept = new BitmapAccept(visible);
        Map<String, Suspect> best = new ConcurrentHashMap<>();
        AtomicLong scored = new AtomicLong();
        AtomicInteger fallbacks = new AtomicInteger();
        IntStream range = IntStream.range(0, rows.size());
        if (Runtime.getRuntime().availableProcessors() > 2) {
            range = range.parallel();
        }
        range.forEach(
                p -> {
                    float[] unit = Arrays.copyOfRange(block, p * dim, (p + 1) * dim);
                    String forgotten = rows.get(p).record().id();
                    float[] score = new float[1];
                    float[] v = new float[dim];
                    try {
                        for (int k = PROBE_CANDIDATES;
                                ;
                                k = (int) Math.min(4L * k, Integer.MAX_VALUE)) {
                            if (k >= survivors) {
                                // So many survivors at or above the threshold that the candidates
                                // would be
                                // the whole tenant: compare this vector with every survivor.
                                fallbacks.incrementAndGet();
                                scored.addAndGet(survivors);
                                scan(
                                                visible.toArray(),
                                                unit,
                                                List.of(rows.get(p)),
                                                threshold,
                                                kernels,
                                                dim)
                                        .forEach(s -> keepBest(best, s));
                                return;
                            }
                            SearchResult r =
                                    idx.search(
                                            unit,
                                            k,
                                            accept,
                                            new SearchParams(
                                                    Map.of(
                                                            "efSearch",
                                                            Math.max(PROBE_EF, k),
                                                            "nprobe",
                                                            PROBE_NPROBE,
                                                            "rerank",
                                                            Math.max(PROBE_RERANK, k))));
                            scored.addAndGet(r.size());
                            boolean lastAbove = false;
                            for (int i = 0; i < r.size(); i++) {
                                Entry e = catalogue.entry(r.ordinals()[i]);
                                boolean read = e != null && catalogue.readVector(e, v);
                                float norm = read ? (float) Math.sqrt(kernels.dot(v, v)) : 0;
                                if (norm == 0) {
                                    continue; // deleted since the search, or no direction
                                }
                                kernels.dotBatch(v, unit, 0, 1, dim, score, 0);
                                float cosine = score[0] / norm;
                                if (cosine >= threshold) {
                                    keepBest(
                                            best,
                                            new Suspect(
                                                    "vector-residue",
                                                    name,
                                                    e.record().id(),
                                                    cosine,
                                                    forgotten));
                                }
                                lastAbove = i == r.size() - 1 && cosine >= threshold;
                            }
                            if (r.size() < k || !lastAbove) {
                                return;
                            }
                        }
                    } finally {
                        Arrays.fill(unit, 0f);
                        Arrays.fill(v, 0f);
                    }
                });
        List<Suspect> out = new ArrayList<>(best.values());
        out.sort(Comparator.comparingDouble(Suspect::score).reversed());
        return new Probe(
                out,
                new ProbeRun(
                        name,
                        true,
                        idx.kind(),
                        null,
                        Map.of(
                                "candidates",
                                PROBE_CANDIDATES,
                                "efSearch",
                                PROBE_EF,
                                "nprobe",
                                PROBE_NPROBE,
                                "rerank",
                                PROBE_RERANK),
                        survivors,
                        scored.get(),
                        fallbacks.get()));
    }

    private static void keepBest(Map<String, Suspect> best, Suspect s) {
        best.merge(s.recordId(), s, (a, b) -> a.score() >= b.score() ? a : b);
    }

    private static boolean isZero(float[] v) {
        for (float x : v) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Join keys: unhidden records of the tenant whose metadata holds one of {@code names} (the
     * forgotten subject, forgotten record ids) as a string value or as a token inside one ("alice,
     * bob"), ignoring case and surrounding blanks, or whose {@code derivedFrom} still names a
     * forgotten record ({@code forgottenIds}: its id, and its {@code "@<collection>/<id>"} spelling
     * for records of other collections). Looked up by name (the catalogue keeps both indexes), so
     * it costs the names and what they find. Declared identifiers (names, emails, phone numbers of
     * the subject) are searched for in every unhidden record's metadata and text of the tenant:
     * that part costs what the tenant holds, and only forgets that declare identifiers pay it.
     * Holds the writer mutex throughout.
     */
    List<Suspect> joinKeys(
            String tenant,
            Set<String> names,
            Set<String> forgottenIds,
            List<JoinKeys.Identifier> identifiers) {
        Set<String> folded = new HashSet<>();
        names.forEach(n -> folded.add(JoinKeys.fold(n)));
        List<Suspect> out = new ArrayList<>();
        writer.lock();
        try {
            engine.ensureOpen();
            RoaringBitmap tenantOrds = catalogue.tenantOrdinals(tenant);
            if (tenantOrds == null) {
                return List.of();
            }
            RoaringBitmap found = new RoaringBitmap();
            for (String n : folded) {
                RoaringBitmap b = catalogue.withMetadataKey(n);
                if (b != null) {
                    found.or(b);
                }
            }
            for (String id : forgottenIds) {
                RoaringBitmap b = catalogue.derivedFrom(id);
                if (b != null) {
                    found.or(b);
                }
            }
            found.and(tenantOrds);
            found.andNot(catalogue.hidden());
            found.forEach(
                    (int ord) -> {
                        VectorRecord r = catalogue.entry(ord).record();
                        Map<String, Object> metadata = catalogue.metadata(catalogue.entry(ord));
                        for (Map.Entry<String, Object> m :
                                metadata == null
                                        ? Map.<String, Object>of().entrySet()
                                        : metadata.entrySet()) {
                            if (m.getValue() instanceof String sv
                                    && JoinKeys.keysOf(sv).stream().anyMatch(folded::contains)) {
                                out.add(
                                        new Suspect(
                                                "join-key",
                                                name,
                                                r.id(),
                                                Double.NaN,
                                                "metadata key " + m.getKey()));
                                return;
                            }
                        }
                        out.add(new Suspect("join-key", name, r.id(), Double.NaN, "derivedFrom"));
                    });
            if (!identifiers.isEmpty()) {
                RoaringBitmap scan = RoaringBitmap.andNot(tenantOrds, catalogue.hidden());
                scan.forEach(
                        (int ord) -> {
                            // Text and metadata from one decryption of the record's copy.
                            VectorRecord r = catalogue.withStoredParts(catalogue.entry(ord));
                            if (r == null) {
                                return;
                            }
                            String where = identifierIn(r, r.text(), identifiers);
                            RecordAccess.wipe(r);
                            if (where != null) {
                                out.add(
                                        new Suspect(
                                                "declared-identifier",
                                                name,
                                                r.id(),
                                                Double.NaN,
                                                where));
                            }
                        });
            }
            return out;
        } finally {
            writer.unlock();
        }
    }

    /**
     * Where a record holds one of the identifiers ("metadata key K", "text"), or null. Never the
     * identifier.
     */
    private static String identifierIn(
            VectorRecord r, String text, List<JoinKeys.Identifier> identifiers) {
        for (Map.Entry<String, Object> m : r.metadata().entrySet()) {
            if (m.getValue() instanceof String sv) {
                for (JoinKeys.Identifier id : identifiers) {
                    if (id.foundIn(sv)) {
                        return "metadata key " + m.getKey();
                    }
                }
            }
        }
        if (text != null) {
            for (JoinKeys.Identifier id : identifiers) {
                if (id.foundIn(text)) {
                    return "text";
                }
            }
        }
        return null;
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
