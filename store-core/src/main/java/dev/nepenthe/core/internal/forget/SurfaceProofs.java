package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ErasureClass;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.RecordCatalogue;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.forget.CollectionEraser.Removed;
import dev.nepenthe.core.internal.storage.CollectionStorage;
import dev.nepenthe.core.internal.text.TextIndex;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The verify phase's proofs for one collection's surfaces: the index proves the removals where they
 * changed it and holds no residue, the storage's files hold no copy of a removed record's keyed
 * hashes and no id resolves, the text index holds no forgotten document or term. Apart from the
 * eraser, which removes, because a proof only reads: each runs under the writer mutex so that no
 * write changes what it checks, and none changes anything but residue an index reports.
 */
final class SurfaceProofs {

    private final CollectionEngine engine;
    private final RecordCatalogue catalogue;
    private final CollectionStorage storage;
    private final ReentrantLock writer;
    private final String name;

    SurfaceProofs(CollectionEngine engine) {
        this.engine = engine;
        this.catalogue = engine.catalogue();
        this.storage = engine.storage();
        this.writer = engine.writer();
        this.name = engine.name();
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
            Map<Integer, Long> forgotten = new HashMap<>();
            Set<String> terms = new LinkedHashSet<>();
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
}
