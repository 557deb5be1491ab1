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
 * search runs again, at most {@link #SEARCH_ATTEMPTS} times, each time asking the index for as
 * many more hits as the attempts before it lost: a writer that keeps replacing records near the
 * query costs a search index calls, not its k hits.
 */
final class CollectionSearch {

    /** A search reruns at most this often when writes or marks changed its hits under it. */
    private static final int SEARCH_ATTEMPTS = 3;

    private final CollectionEngine engine;

    CollectionSearch(CollectionEngine engine) {
        this.engine = engine;
    }

    /** Ranks candidate ordinals: the {@code k} best of the accepted ones (null: every live ordinal). */
    @FunctionalInterface
    interface Ranker {
        SearchResult rank(RoaringBitmap accept, int k) throws java.io.IOException;
    }

    /** The k nearest visible records of the request's tenant (validated), narrowed by its subject and filter. */
    List<SearchHit> search(SearchRequest request) {
        float[] query = request.vector();
        return search(request, request.k(), (accept, k) -> engine.index().search(query, k,
                accept == null ? Accept.ALL : new BitmapAccept(accept), request.params()));
    }

    /** The {@code k} best visible records the ranker finds among the request's candidates, best first. */
    List<SearchHit> search(SearchRequest request, int k, Ranker ranker) {
        RecordCatalogue catalogue = engine.catalogue();
        // Records a forget has marked are left out of the candidates the index sees, so a
        // search still finds k visible records. A mark, delete or ordinal reuse that lands while
        // this search runs is caught at materialisation; if it cost any of the hits, the search
        // runs again (bounded: each retry sees every earlier change).
        List<SearchHit> hits = List.of();
        int lostBefore = 0;
        for (int attempt = 1; attempt <= SEARCH_ATTEMPTS; attempt++) {
            long start = catalogue.publishedStamp();
            RoaringBitmap hiddenAtStart = catalogue.hidden();
            RoaringBitmap accept = candidates(request, hiddenAtStart);
            if (accept != null && accept.isEmpty()) {
                return List.of();
            }
            // As many more as earlier attempts lost, so that losing as many again still leaves k.
            int asked = Math.min(k + lostBefore, Math.max(k, SearchRequest.MAX_K));
            SearchResult result;
            try {
                result = ranker.rank(accept, asked);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("collection '" + engine.name() + "': searching failed", e);
            }
            Runnable pause = CollectionEngine.afterIndexSearch;
            if (pause != null) {
                pause.run();
            }
            // The volatile read sees every mark and delete that returned before this point.
            RoaringBitmap nowHidden = catalogue.hidden();
            hits = new ArrayList<>(Math.min(k, result.size()));
            int lost = 0;
            for (int i = 0; i < result.size() && hits.size() < k; i++) {
                int ord = result.ordinals()[i];
                if (accept != null && !accept.contains(ord)) {
                    continue;
                }
                Entry e = catalogue.entry(ord);
                if (e == null || e.ordinalFreedAt() > start || nowHidden.contains(ord) || !matches(e, request)) {
                    lost++;
                    continue;
                }
                VectorRecord r = catalogue.materialise(e);
                if (r == null) {
                    lost++; // deleted or replaced while its vector was read
                    continue;
                }
                hits.add(new SearchHit(r, result.scores()[i]));
            }
            // A lost hit may have been replaced by a version this attempt could not see: run again
            // while attempts are left. The last attempt asked for as many more as the others lost,
            // so its hits are k unless the changes under it outran all of theirs together.
            if (lost == 0) {
                return hits;
            }
            lostBefore += lost;
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
