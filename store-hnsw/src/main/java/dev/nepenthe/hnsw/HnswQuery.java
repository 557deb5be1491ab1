package dev.nepenthe.hnsw;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.index.IndexChecks;
import dev.nepenthe.core.internal.index.TopK;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.PrimitiveIterator;

/**
 * One query against an {@link HnswIndex}, without a lock: the descent and the layer-0 walk ({@link
 * HnswSearcher}), an exact scan instead when a filter lets through few nodes or the walk would cost
 * more than the scan, the re-rank of a quantized walk, and the last check that drops a slot freed
 * while the query ran. It exists apart from the index so the index keeps to its locks and slots.
 */
final class HnswQuery {
    private static final VarHandle ORD_TO_SLOT = MethodHandles.arrayElementVarHandle(int[].class);

    private HnswQuery() {}

    /** {@link HnswIndex#search}: see there; runs beside writers and takes no lock. */
    static SearchResult search(
            HnswIndex index, float[] query, int k, Accept accept, SearchParams searchParams) {
        int dim = index.dimension();
        Metric metric = index.metric();
        HnswParams params = index.params();
        HnswGraph graph = index.graph();
        int upperBeam = index.upperBeam;
        IndexChecks.checkSearch(query, k, dim);
        int ef =
                searchParams == null
                        ? params.efSearch()
                        : searchParams.get(HnswParams.EF_SEARCH, params.efSearch());
        if (ef <= 0) {
            throw new IllegalArgumentException("efSearch: expected > 0, got " + ef);
        }
        ef = Math.max(ef, k);
        int rerank =
                searchParams == null
                        ? params.rerank()
                        : searchParams.get(HnswParams.RERANK, params.rerank());
        if (rerank < 0) {
            throw new IllegalArgumentException("rerank: expected >= 0 (0: twice k), got " + rerank);
        }
        float[] q = metric.prepare(query);
        // No lock: the free epoch first, then the entry point, then the layout (at least as new
        // as the entry point's slot); see HnswGraph's concurrency contract.
        int startEpoch = graph.freeEpoch();
        long entry = graph.entry();
        if (entry < 0) {
            return SearchResult.EMPTY;
        }
        GraphLayout layout = graph.layout();
        // The walk's scorer: over the codes in a quantized graph, else exact (see the re-rank
        // below).
        NodeScorer scorer = layout.searchScorers().queryScorer(q);
        HnswSearcher.Scratch s = HnswSearcher.scratch();
        s.begin(layout.capacity);
        long visitLimit = Long.MAX_VALUE;
        long allowed = accept.cardinality();
        if (!accept.isAll() && allowed >= 0) {
            // A filter that lets through about as few nodes as a beam would score anyway is
            // cheaper to scan exactly; otherwise walk the graph but stop once the walk costs
            // more than the exact scan would.
            if (allowed <= 2L * ef) {
                return exactFiltered(index, q, k, accept, startEpoch);
            }
            visitLimit = allowed;
        }
        int[] seeds = HnswSearcher.descendBeam(layout, scorer, entry, upperBeam, s);
        boolean complete =
                HnswSearcher.searchLayer(
                        layout, scorer, seeds, seeds.length, ef, 0, accept, -1, visitLimit, s);
        if (complete && s.results.size() < k && graph.entry() >= 0) {
            // Short: the descent may have ended on a node a removal was emptying under this walk
            // (its lists cleared), or on the old entry point of a removal that moved it. Walk
            // again, seeded also with the current entry point, whose lists are whole.
            entry = graph.entry();
            layout = graph.layout();
            scorer = layout.searchScorers().queryScorer(q);
            s.begin(layout.capacity);
            seeds = HnswSearcher.descendBeam(layout, scorer, entry, upperBeam, s);
            int top = HnswGraph.entrySlot(entry);
            seeds = Arrays.copyOf(seeds, seeds.length + 1);
            seeds[seeds.length - 1] = top;
            complete =
                    HnswSearcher.searchLayer(
                            layout, scorer, seeds, seeds.length, ef, 0, accept, -1, visitLimit, s);
        }
        if (!complete) {
            return exactFiltered(index, q, k, accept, startEpoch);
        }
        int n = s.results.size();
        int[] slots = s.batch(n);
        float[] scores = s.batchScores;
        if (!scorer.isExact()) {
            // Re-rank: the best `rerank` candidates by code score (2k for 0, never fewer than k)
            // are scored again from the floats of the walk's layout, and only those exact scores
            // go on.
            int depth = Math.min(n, rerank == 0 ? 2 * k : Math.max(rerank, k));
            while (s.results.size() > depth) {
                s.results.pop(); // worst code score first
            }
            n = s.results.size();
            for (int i = 0; i < n; i++) {
                slots[i] = s.results.slotAt(i);
            }
            scorer = layout.scorers().queryScorer(q);
            scorer.bulkScore(slots, n, scores);
            s.scored += n;
        } else {
            for (int i = 0; i < n; i++) {
                slots[i] = s.results.slotAt(i);
                scores[i] = s.results.scoreAt(i);
            }
        }
        // Scores are returned as they are: right only because they are exact by now.
        assert scorer.isExact() : "approximate scores reached a search result without a re-rank";
        // Keep only slots that still hold what was scored (checked on the current layout,
        // where frees are stamped, after the scores were read), with the ordinal they hold.
        GraphLayout now = graph.layout();
        TopK top = new TopK(k);
        for (int i = 0; i < n; i++) {
            int slot = slots[i];
            if (now.unchangedSince(slot, startEpoch)) {
                top.offer(now.ordinal(slot), scores[i]);
            }
        }
        return top.drain(s.scored);
    }

    /**
     * Scores every accepted live ordinal; lock-free like {@link #search}. Reached only with an
     * accept that enumerates its ordinals (the walk's visit limit is set from its cardinality).
     */
    private static SearchResult exactFiltered(
            HnswIndex index, float[] q, int k, Accept accept, int startEpoch) {
        HnswGraph graph = index.graph();
        TopK top = new TopK(k);
        long scored = 0;
        int[] map = index.ordinalMap();
        GraphLayout layout = graph.layout();
        NodeScorer scorer = layout.scorers().queryScorer(q);
        assert scorer.isExact() : "an exact scan needs an exact scorer";
        PrimitiveIterator.OfInt it = accept.ordinals();
        while (it.hasNext()) {
            int ord = it.nextInt();
            if (ord < 0 || ord >= map.length) {
                if (ord < 0) {
                    continue;
                }
                break;
            }
            int slot = (int) ORD_TO_SLOT.getAcquire(map, ord);
            if (slot < 0 || slot >= layout.capacity) {
                continue; // not live, or added after this search began
            }
            if (layout.isLive(slot) && layout.ordinal(slot) == ord) {
                float score = scorer.score(slot);
                scored++;
                if (layout.unchangedSince(slot, startEpoch) && layout.ordinal(slot) == ord) {
                    top.offer(ord, score);
                }
            }
        }
        return top.drain(scored);
    }
}
