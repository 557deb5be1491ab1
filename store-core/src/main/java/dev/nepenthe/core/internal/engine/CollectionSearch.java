package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.index.Accept;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.engine.RecordCatalogue.Entry;
import dev.nepenthe.core.internal.index.BitmapAccept;
import dev.nepenthe.core.internal.record.RecordAccess;
import dev.nepenthe.core.vector.Kernels;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.roaringbitmap.RoaringBitmap;

/**
 * A collection's search, lock-free beside writes and forgets: it narrows the candidates to the
 * request's tenant, subject and filter minus what reads may not see, hands them to the index as an
 * {@link Accept}, and materialises the hits against what was published meanwhile. Records a forget
 * has marked are left out of the candidates the index sees (so k visible records come back), and a
 * hit whose ordinal was freed or hidden after the search started is dropped.
 *
 * <p>A replacement is atomic for a search, as it is for a get: the search returns the old version
 * or the new one, never neither and never both (as Lucene's {@code updateDocument} is at refresh).
 * The writer makes the new version searchable before the old one leaves, so a search that meets
 * both keeps one (the better scored), and one that found the old version taken away under it
 * (hidden, freed, or gone from the index before the index got to it) follows the collection's
 * {@link ReplacementLog} from the old ordinal to the new version, which it checks as it checks any
 * hit and scores as the ranker would. It follows the log from the stamp of the very publish its
 * candidates were read from ({@link RecordCatalogue#publishedAsOf}): an ordinal freed and reused
 * before that publish holds its new record in the candidates, and a move out of it by the record
 * that left earlier would name the wrong one. What is left lost (deleted, forgotten, a replacement
 * the log no longer holds, or a new version that moved on again before the search could read it)
 * makes the search run again, unless it found k and none of the lost is a new version it could not
 * read, at most {@link #SEARCH_ATTEMPTS} times, each time asking the index for as many more hits as
 * the attempts before it lost: a writer that keeps replacing records near the query costs a search
 * index calls, not its k hits.
 */
final class CollectionSearch {

    /** A search reruns at most this often when writes or marks changed its hits under it. */
    private static final int SEARCH_ATTEMPTS = 3;

    private final CollectionEngine engine;

    CollectionSearch(CollectionEngine engine) {
        this.engine = engine;
    }

    /**
     * Ranks candidate ordinals: the {@code k} best of the accepted ones (null: every live ordinal).
     */
    @FunctionalInterface
    interface Ranker {
        SearchResult rank(RoaringBitmap accept, int k) throws IOException;

        /**
         * The score this ranker gives one record (materialised from {@code ordinal}), or NaN when
         * it does not rank it: a new version found through the replacement log is scored here.
         */
        default float score(int ordinal, VectorRecord record) throws IOException {
            SearchResult r = rank(RoaringBitmap.bitmapOf(ordinal), 1);
            return r.size() == 1 && r.ordinals()[0] == ordinal ? r.scores()[0] : Float.NaN;
        }
    }

    /**
     * The k nearest visible records of the request's tenant (validated), narrowed by its subject
     * and filter.
     */
    List<SearchHit> search(SearchRequest request) {
        float[] query = request.vector();
        Metric metric = engine.index().metric();
        float[] prepared = metric.prepare(query);
        return search(
                request,
                request.k(),
                new Ranker() {
                    @Override
                    public SearchResult rank(RoaringBitmap accept, int k) {
                        return engine.index()
                                .search(
                                        query,
                                        k,
                                        accept == null ? Accept.ALL : new BitmapAccept(accept),
                                        request.params());
                    }

                    @Override
                    public float score(int ordinal, VectorRecord record) {
                        // Exactly as the indexes score what they return (their re-rank is exact
                        // too).
                        float[] v = metric.prepare(RecordAccess.vectorUnsafe(record));
                        try {
                            return metric.score(Kernels.get(), prepared, v, 0, v.length);
                        } finally {
                            Arrays.fill(v, 0f);
                        }
                    }
                });
    }

    /**
     * The {@code k} best visible records the ranker finds among the request's candidates, best
     * first.
     */
    List<SearchHit> search(SearchRequest request, int k, Ranker ranker) {
        RecordCatalogue catalogue = engine.catalogue();
        // Records a forget has marked are left out of the candidates the index sees, so a
        // search still finds k visible records. A mark, delete or ordinal reuse that lands while
        // this search runs is caught at materialisation; if it cost any of the hits, the search
        // runs again (bounded: each retry sees every earlier change).
        List<SearchHit> hits = List.of();
        int lostBefore = 0;
        for (int attempt = 1; attempt <= SEARCH_ATTEMPTS; attempt++) {
            // The stamp of the very publish the candidates come from: the replacements after it
            // are exactly the ones the candidates do not show yet (see followReplacements).
            RecordCatalogue.PublishedViews views =
                    catalogue.publishedAsOf(request.tenant(), request.subject());
            long start = views.stamp();
            RoaringBitmap hiddenAtStart = catalogue.hidden();
            RoaringBitmap accept = candidates(request, views, hiddenAtStart);
            if (accept != null && accept.isEmpty()) {
                return List.of();
            }
            // As many more as earlier attempts lost, so that losing as many again still leaves k.
            int asked = Math.min(k + lostBefore, Math.max(k, SearchRequest.MAX_K));
            SearchResult result;
            try {
                result = ranker.rank(accept, asked);
            } catch (IOException e) {
                throw new UncheckedIOException(
                        "collection '" + engine.name() + "': searching failed", e);
            }
            engine.testPoints().searchedIndex();
            // The volatile read sees every mark and delete that returned before this point.
            RoaringBitmap nowHidden = catalogue.hidden();
            Found found = new Found();
            RoaringBitmap lostOrdinals = new RoaringBitmap();
            for (int i = 0; i < result.size(); i++) {
                int ord = result.ordinals()[i];
                if (accept != null && !accept.contains(ord)) {
                    continue;
                }
                Entry e = catalogue.entry(ord);
                VectorRecord r =
                        e == null
                                        || e.ordinalFreedAt() > start
                                        || nowHidden.contains(ord)
                                        || !matches(e, request)
                                ? null
                                : catalogue.materialise(
                                        e); // null: deleted or replaced while its vector was read
                if (r == null) {
                    lostOrdinals.add(ord);
                    continue;
                }
                found.add(new SearchHit(r, result.scores()[i]));
            }
            // The line the index vouches for: every candidate scoring above its last hit is in its
            // result (all of them, when it returned fewer than asked).
            float floor =
                    result.size() < asked
                            ? Float.NEGATIVE_INFINITY
                            : result.scores()[result.size() - 1];
            // What the publish showed in the tenant or subject (hidden ordinals too: one may have
            // been hidden because it was being replaced after that publish). Takes what it
            // recovers out of lostOrdinals.
            RoaringBitmap shown =
                    accept == null
                            ? null
                            : request.subject() != null ? views.subject() : views.tenant();
            Unresolved unresolved =
                    followReplacements(
                            request, start, shown, nowHidden, ranker, floor, lostOrdinals, found);
            int lost = lostOrdinals.getCardinality() + unresolved.notLostYet() + found.duplicates;
            hits = found.best(k);
            // What is still lost may have a version this attempt could not see: run again while
            // attempts are left, unless k were found anyway and none of the lost is a record
            // replaced after the candidates' publish whose current version this attempt could not
            // read (it may rank among the k: returning k without it would return neither version).
            // The last attempt asked for as many more as the others lost, so its hits are k unless
            // the changes under it outran all of theirs together.
            if (lost <= 0 || (hits.size() >= k && unresolved.all() == 0)) {
                return hits;
            }
            lostBefore += lost;
        }
        return hits;
    }

    /**
     * Hits by record id (the tenant is the request's): a record found twice, in two versions, is
     * kept once.
     */
    private static final class Found {
        private final List<SearchHit> hits = new ArrayList<>();
        private final Map<String, Integer> byId = new HashMap<>();
        int duplicates;

        void add(SearchHit h) {
            Integer at = byId.putIfAbsent(h.id(), hits.size());
            if (at == null) {
                hits.add(h);
                return;
            }
            duplicates++;
            SearchHit kept = hits.get(at);
            if (h.score() > kept.score()) {
                hits.set(at, h);
                RecordAccess.wipe(kept.record());
            } else {
                RecordAccess.wipe(h.record());
            }
        }

        /** The k best, best first (ties in the order found); the copies of the others are wiped. */
        List<SearchHit> best(int k) {
            List<SearchHit> out = new ArrayList<>(hits);
            out.sort((a, b) -> Float.compare(b.score(), a.score()));
            if (out.size() <= k) {
                return out;
            }
            for (SearchHit dropped : out.subList(k, out.size())) {
                RecordAccess.wipe(dropped.record());
            }
            return new ArrayList<>(out.subList(0, k));
        }
    }

    /**
     * Adds the new versions of records replaced since {@code start} whose old version the publish
     * at {@code start} {@code shown} in the request's tenant or subject (null: all of them), hidden
     * or not: the index may have lost the old one (hidden, freed, or removed from it before it got
     * there) while the new one was not yet a candidate. Only the first replacement out of an
     * ordinal since {@code start} names the record the search saw there; the chain of later
     * replacements leads to its current version, which must be where the last one put it, visible,
     * in the request's tenant, subject and filter, and score at or above {@code floor}. Takes the
     * ordinals it recovered a record from out of {@code lostOrdinals}; returns the replaced records
     * whose current version it could not read because it moved or left after the log was read (all
     * of them when the log no longer holds every move since {@code start}): one of them may rank,
     * so the caller runs again.
     */
    private Unresolved followReplacements(
            SearchRequest request,
            long start,
            RoaringBitmap shown,
            RoaringBitmap nowHidden,
            Ranker ranker,
            float floor,
            RoaringBitmap lostOrdinals,
            Found found) {
        List<ReplacementLog.Move> moves = engine.replacements().since(start);
        if (moves == null) {
            // Overtaken by more moves than the log holds: only another attempt can tell.
            return new Unresolved(1, 1);
        }
        RecordCatalogue catalogue = engine.catalogue();
        RoaringBitmap seen = new RoaringBitmap();
        int unresolved = 0;
        int notLostYet = 0;
        for (int m = 0; m < moves.size(); m++) {
            ReplacementLog.Move first = moves.get(m);
            // With a filter, the old version may have passed it in a view the candidates were
            // not read from: the new version is checked against the filter itself below.
            boolean candidate =
                    shown == null || shown.contains(first.from()) || request.filter() != null;
            if (!seen.checkedAdd(first.from()) || !candidate) {
                continue;
            }
            int to = first.to();
            long at = first.stamp();
            for (int n = m + 1; n < moves.size(); n++) {
                ReplacementLog.Move later = moves.get(n);
                if (later.from() == to && later.stamp() > at) {
                    to = later.to();
                    at = later.stamp();
                }
            }
            Entry e = catalogue.entry(to);
            // The ordinal still holds the version the last replacement put there (not one placed
            // there after it was freed again); else that version moved on (or left) after the
            // log was read, and only another attempt can tell which.
            boolean there = e != null && e.ordinalFreedAt() < at;
            if (there
                    && (nowHidden.contains(to)
                            || !matches(e, request)
                            || (request.filter() != null
                                    && !catalogue
                                            .matching(
                                                    request.filter(),
                                                    RoaringBitmap.bitmapOf(to),
                                                    false)
                                            .contains(to)))) {
                continue; // hidden now (a forget's mark, a delete), or outside the request
            }
            VectorRecord r = there ? catalogue.materialise(e) : null;
            if (r == null) {
                unresolved++;
                if (!lostOrdinals.contains(first.from())) {
                    notLostYet++; // (a lost ordinal's record is counted as lost already)
                }
                continue;
            }
            float score;
            try {
                score = ranker.score(to, r);
            } catch (IOException ex) {
                throw new UncheckedIOException(
                        "collection '" + engine.name() + "': searching failed", ex);
            }
            if (Float.isNaN(score) || score < floor) {
                // Not ranked, or below what the index vouches for: another attempt places it.
                RecordAccess.wipe(r);
                continue;
            }
            found.add(new SearchHit(r, score));
            lostOrdinals.remove(first.from());
        }
        return new Unresolved(unresolved, notLostYet);
    }

    /**
     * Replaced records whose current version a search could not read: {@code all} of them, and
     * those the index had not returned ({@code notLostYet}: not among its lost hits already).
     */
    private record Unresolved(int all, int notLostYet) {}

    /**
     * Whether an entry is in the request's tenant and subject (checked when the index saw every
     * ordinal).
     */
    private static boolean matches(Entry e, SearchRequest request) {
        VectorRecord r = e.record();
        return r.tenant().equals(request.tenant())
                && (request.subject() == null || request.subject().equals(r.subject()));
    }

    /** Null means "every live ordinal"; otherwise the ordinals the index may return. */
    // Identity on purpose: whether the accept set is the tenant bitmap itself, unnarrowed.
    @SuppressWarnings("ReferenceEquality")
    private RoaringBitmap candidates(
            SearchRequest request, RecordCatalogue.PublishedViews views, RoaringBitmap hiddenNow) {
        RecordCatalogue catalogue = engine.catalogue();
        RoaringBitmap tenant = views.tenant();
        if (tenant == null) {
            return new RoaringBitmap();
        }
        RoaringBitmap accept = tenant;
        if (request.subject() != null) {
            RoaringBitmap s = views.subject();
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
        boolean everything = accept == tenant && request.subject() == null && views.tenants() == 1;
        return everything ? null : accept;
    }
}
