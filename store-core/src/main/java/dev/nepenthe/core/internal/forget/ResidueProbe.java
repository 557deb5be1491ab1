package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.JoinKeys;
import dev.nepenthe.core.internal.engine.RecordCatalogue;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.forget.CollectionEraser.Removed;
import dev.nepenthe.core.internal.index.BitmapAccept;
import dev.nepenthe.core.internal.index.ExactIndex;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.internal.text.TextIndex;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.IntStream;
import org.roaringbitmap.RoaringBitmap;

/**
 * The negative-space probe of one collection: survivors of a forget's tenant that still carry the
 * forgotten records, by vector (a near copy, exact or through the index with a wide beam), by text
 * (a survivor sharing most of a forgotten text's distinctive terms) and by join key (metadata or
 * provenance naming the forgotten subject or records, or holding a declared identifier). Apart from
 * the eraser because the probe reads what searches read and never removes: what it finds becomes a
 * suspect for the operator, not a deletion.
 */
final class ResidueProbe {

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

    private final CollectionEngine engine;
    private final RecordCatalogue catalogue;
    private final ReentrantLock writer;
    private final String name;

    ResidueProbe(CollectionEngine engine) {
        this.engine = engine;
        this.catalogue = engine.catalogue();
        this.writer = engine.writer();
        this.name = engine.name();
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
        Map<String, Suspect> best = new HashMap<>();
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
     * eight times the default, well past the beam at which HNSW's recall on real embeddings is near
     * complete (docs/BENCHMARKS.md, "HNSW on real embeddings").
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
        // on the forget worker alone (search latency while forgets run: docs/BENCHMARKS.md).
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
}
