package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.index.BitmapAccept;
import java.util.ArrayList;
import java.util.List;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's search, lock-free beside writes and forgets: it narrows the candidates to the
 * request's tenant, subject and filter minus what reads may not see, hands them to the index as
 * an {@link Accept}, and materialises the hits against what was published meanwhile. Records a
 * forget has marked are left out of the candidates the index sees (so k visible records come
 * back), and a hit whose ordinal was freed or hidden after the search started is dropped and the
 * search runs again, at most {@link #SEARCH_ATTEMPTS} times.
 */
final class CollectionSearch {

    /** A search reruns at most this often when writes or marks changed its hits under it. */
    private static final int SEARCH_ATTEMPTS = 3;

    private final CollectionEngine engine;

    CollectionSearch(CollectionEngine engine) {
        this.engine = engine;
    }

    /** Ranks candidate ordinals: an index search over the accepted ones (null: every live ordinal). */
    @FunctionalInterface
    interface Ranker {
        SearchResult rank(RoaringBitmap accept) throws java.io.IOException;
    }

    /** The k nearest visible records of the request's tenant (validated), narrowed by its subject and filter. */
    List<SearchHit> search(SearchRequest request) {
        float[] query = request.vector();
        return search(request, accept -> engine.index().search(query, request.k(),
                accept == null ? Accept.ALL : new BitmapAccept(accept), request.params()));
    }

    /** The visible records the ranker finds among the request's candidates, best first. */
    List<SearchHit> search(SearchRequest request, Ranker ranker) {
        RecordCatalogue catalogue = engine.catalogue();
        // Records a forget has marked are left out of the candidates the index sees, so a
        // search still finds k visible records. A mark, delete or ordinal reuse that lands while
        // this search runs is caught at materialisation; if it cost any of the hits, the search
        // runs again (bounded: each retry sees every earlier change).
        List<SearchHit> hits = List.of();
        for (int attempt = 1; attempt <= SEARCH_ATTEMPTS; attempt++) {
            long start = catalogue.publishedStamp();
            RoaringBitmap hiddenAtStart = catalogue.hidden();
            RoaringBitmap accept = candidates(request, hiddenAtStart);
            if (accept != null && accept.isEmpty()) {
                return List.of();
            }
            SearchResult result;
            try {
                result = ranker.rank(accept);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("collection '" + engine.name() + "': searching failed", e);
            }
            Runnable pause = CollectionEngine.afterIndexSearch;
            if (pause != null) {
                pause.run();
            }
            // The volatile read sees every mark and delete that returned before this point.
            RoaringBitmap nowHidden = catalogue.hidden();
            hits = new ArrayList<>(result.size());
            boolean lostToAConcurrentChange = false;
            for (int i = 0; i < result.size(); i++) {
                int ord = result.ordinals()[i];
                if (accept != null && !accept.contains(ord)) {
                    continue;
                }
                Entry e = catalogue.entry(ord);
                if (e == null || e.ordinalFreedAt() > start || nowHidden.contains(ord) || !matches(e, request)) {
                    lostToAConcurrentChange = true;
                    continue;
                }
                VectorRecord r = catalogue.materialise(e);
                if (r == null) {
                    lostToAConcurrentChange = true; // deleted or replaced while its vector was read
                    continue;
                }
                hits.add(new SearchHit(r, result.scores()[i]));
            }
            if (!lostToAConcurrentChange) {
                return hits;
            }
        }
        return hits;
    }

    /** Whether an entry is in the request's tenant and subject (checked when the index saw every ordinal). */
    private static boolean matches(Entry e, SearchRequest request) {
        VectorRecord r = e.record();
        return r.tenant().equals(request.tenant())
                && (request.subject() == null || request.subject().equals(r.subject()));
    }

    /** Null means "every live ordinal"; otherwise the ordinals the index may return. */
    private RoaringBitmap candidates(SearchRequest request, RoaringBitmap hiddenNow) {
        RecordCatalogue catalogue = engine.catalogue();
        RoaringBitmap tenant = catalogue.publishedTenant(request.tenant());
        if (tenant == null) {
            return new RoaringBitmap();
        }
        RoaringBitmap accept = tenant;
        if (request.subject() != null) {
            RoaringBitmap s = catalogue.publishedSubject(request.tenant(), request.subject());
            if (s == null) {
                return new RoaringBitmap();
            }
            accept = s;
        }
        if (request.filter() != null) {
            accept = catalogue.matching(request.filter(), accept, false);
        }
        if (!hiddenNow.isEmpty()) {
            accept = RoaringBitmap.andNot(accept, hiddenNow);
        }
        // One tenant, no narrowing: let the index skip the per-candidate check (a record of
        // another tenant written meanwhile is caught at materialisation).
        boolean everything = accept == tenant && request.subject() == null && catalogue.publishedTenantCount() == 1;
        return everything ? null : accept;
    }

}
