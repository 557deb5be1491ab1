package dev.nepenthe.server.grpc;

import dev.nepenthe.core.index.SearchParams;
import dev.nepenthe.grpc.v1.Filter;
import java.util.Map;

/**
 * Bounds on what one filter or search asks of the store ({@link Limits.Queries}), checked on the
 * wire message before anything is built from it. A bound exceeded is RESOURCE_EXHAUSTED naming the
 * limit, the value allowed and the value received; a knob below its range is the index's
 * INVALID_ARGUMENT, as before.
 */
final class QueryChecks {

    private QueryChecks() {}

    /**
     * Checks a filter's terms, depth and cost in keyed hashes.
     *
     * @param where the field, for the message ("filter", "scope.metadata")
     */
    static void filter(Filter f, Limits.Queries q, String where) {
        long[] count = new long[2]; // terms, hashes
        walk(f, q, where, 0, count);
    }

    private static void walk(Filter f, Limits.Queries q, String where, int depth, long[] count) {
        Limits.check(where + ": filter nesting (not, all, any)", q.filterDepth(), depth);
        count[0]++;
        Limits.check(where + ": filter terms", q.filterTerms(), count[0]);
        switch (f.getKindCase()) {
            case EQ, EXISTS -> count[1] += 1;
            case IN -> count[1] += f.getIn().getValuesCount();
            case RANGE -> count[1] += Limits.Queries.RANGE_HASHES;
            case NOT -> walk(f.getNot().getFilter(), q, where, depth + 1, count);
            case ALL, ANY -> {
                var list =
                        f.getKindCase() == Filter.KindCase.ALL
                                ? f.getAll().getFiltersList()
                                : f.getAny().getFiltersList();
                // The width first, so that a million-wide list is refused before it is walked.
                Limits.check(where + ": filter terms", q.filterTerms(), count[0] + list.size());
                for (Filter inner : list) {
                    walk(inner, q, where, depth + 1, count);
                }
            }
            case KIND_NOT_SET -> {} // Protos refuses it with its own message
        }
        Limits.check(
                where
                        + ": filter cost in keyed hashes (1 per eq or exists, 1 per in value, "
                        + Limits.Queries.RANGE_HASHES
                        + " per range)",
                q.filterHashes(),
                count[1]);
    }

    /** Checks the number of knobs and each known knob's upper bound. */
    static void params(SearchParams p, Limits.Queries q) {
        Limits.check("params: search knobs", q.params(), p.values().size());
        for (Map.Entry<String, Integer> e : p.values().entrySet()) {
            int max =
                    switch (e.getKey()) {
                        case "efSearch" -> q.efSearch();
                        case "nprobe" -> q.nprobe();
                        case "rerank" -> q.rerank();
                        case "window" -> q.window();
                        case "rrfK" -> q.rrfK();
                        default -> Integer.MAX_VALUE; // an index ignores a name it does not know
                    };
            Limits.check("params '" + e.getKey() + "'", max, e.getValue());
        }
    }
}
