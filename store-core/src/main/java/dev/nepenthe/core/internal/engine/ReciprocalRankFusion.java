package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.SearchHit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009): each record scores the sum,
 * over the ranked lists that hold it, of {@code 1 / (k + rank)}, ranks counted from 1. It needs no
 * calibration between BM25 scores and cosines, which live on unrelated scales; the constant k damps
 * the top ranks, so agreement between lists outweighs one list's first place.
 */
final class ReciprocalRankFusion {

    private ReciprocalRankFusion() {}

    private static final class Fused {
        final SearchHit hit;
        double score;
        int bestRank = Integer.MAX_VALUE;

        Fused(SearchHit hit) {
            this.hit = hit;
        }
    }

    /**
     * Fuses lists of hits from one tenant (a record is identified by its id).
     *
     * @return at most {@code limit} hits, highest fused score first (ties: the better best rank,
     *     then the id), each scored with its fused score
     */
    static List<SearchHit> fuse(List<List<SearchHit>> lists, int k, int limit) {
        Map<String, Fused> byId = new LinkedHashMap<>();
        for (List<SearchHit> list : lists) {
            for (int i = 0; i < list.size(); i++) {
                SearchHit h = list.get(i);
                Fused f = byId.computeIfAbsent(h.id(), id -> new Fused(h));
                int rank = i + 1;
                f.score += 1.0 / (k + rank);
                f.bestRank = Math.min(f.bestRank, rank);
            }
        }
        List<Fused> all = new ArrayList<>(byId.values());
        all.sort(
                Comparator.comparingDouble((Fused f) -> -f.score)
                        .thenComparingInt(f -> f.bestRank)
                        .thenComparing(f -> f.hit.id()));
        List<SearchHit> out = new ArrayList<>(Math.min(limit, all.size()));
        for (int i = 0; i < all.size() && i < limit; i++) {
            Fused f = all.get(i);
            out.add(new SearchHit(f.hit.record(), (float) f.score));
        }
        return out;
    }
}
