package dev.nepenthe.core.internal.engine;

import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.index.SearchResult;
import dev.nepenthe.core.internal.text.TextIndex;
import java.util.List;

/**
 * The three ways a collection is searched (by vector, by keyword, both fused), over the one search
 * loop in {@link CollectionSearch}: what each mode asks of the request (a vector, given or
 * embedded; a text index) and how hybrid results are fused. Apart from the loop so that the loop
 * stays about correctness under concurrent writes, and this about what the caller asked for.
 */
final class SearchModes {

    private final String collection;
    private final RecordValidator validator;
    private final Embedding embedding;
    private final CollectionSearch search;

    /** The text index, or null when the collection has none. */
    private final TextIndex text;

    SearchModes(
            String collection,
            RecordValidator validator,
            Embedding embedding,
            CollectionSearch search,
            TextIndex text) {
        this.collection = collection;
        this.validator = validator;
        this.embedding = embedding;
        this.search = search;
        this.text = text;
    }

    /** The k best hits of the request's mode. */
    List<SearchHit> search(SearchRequest request) {
        return switch (request.mode()) {
            case VECTOR -> search.search(withVector(request));
            case KEYWORD -> keywordSearch(request, request.k());
            case HYBRID -> hybridSearch(request);
        };
    }

    /** The request with its vector: the caller's, checked, or the embedding of its text. */
    private SearchRequest withVector(SearchRequest request) {
        if (request.vector() != null) {
            validator.checkVector(request.vector(), "query");
            return request;
        }
        float[] v = embedding.require(collection).embed(request.text());
        validator.checkVector(v, "query embedding");
        return new SearchRequest(
                v,
                request.text(),
                request.mode(),
                request.k(),
                request.tenant(),
                request.subject(),
                request.filter(),
                request.params());
    }

    private TextIndex requireText() {
        if (text == null) {
            throw new IllegalStateException(
                    "collection '"
                            + collection
                            + "' has no text index: keyword and hybrid search need one"
                            + " (CollectionSpec.withTextIndex, set when the collection is"
                            + " created)");
        }
        return text;
    }

    private List<SearchHit> keywordSearch(SearchRequest request, int k) {
        TextIndex t = requireText();
        return search.search(
                request,
                k,
                (accept, asked) -> {
                    TextIndex.Ranked r = t.search(request.text(), accept, asked);
                    return new SearchResult(r.ordinals(), r.scores(), r.size());
                });
    }

    /** Keyword and vector results fused by reciprocal rank fusion (see SearchRequest). */
    private List<SearchHit> hybridSearch(SearchRequest request) {
        requireText();
        int window =
                Math.min(
                        SearchRequest.MAX_K,
                        Math.max(
                                request.k(),
                                request.params().get("window", SearchRequest.DEFAULT_WINDOW)));
        int rrfK = request.params().get("rrfK", SearchRequest.DEFAULT_RRF_K);
        if (window < 1 || rrfK < 0) {
            throw new IllegalArgumentException(
                    "hybrid search: expected window >= 1 and rrfK >= 0, got window "
                            + window
                            + ", rrfK "
                            + rrfK);
        }
        SearchRequest wide = withVector(request);
        wide =
                new SearchRequest(
                        wide.vector(),
                        wide.text(),
                        SearchRequest.Mode.VECTOR,
                        window,
                        wide.tenant(),
                        wide.subject(),
                        wide.filter(),
                        wide.params());
        List<SearchHit> byVector = search.search(wide);
        List<SearchHit> byKeyword = keywordSearch(request, window);
        return ReciprocalRankFusion.fuse(List.of(byVector, byKeyword), rrfK, request.k());
    }
}
