package dev.nepenthe.testing.index;

import dev.nepenthe.core.index.SearchResult;
import java.util.HashSet;
import java.util.Set;

/** recall@k of an approximate result against the exact one. */
public final class Recall {
    private Recall() {}

    /** Fraction of the exact top-k ordinals that the approximate result contains. */
    public static double of(SearchResult exact, SearchResult approx) {
        if (exact.size() == 0) {
            return 1.0;
        }
        Set<Integer> truth = new HashSet<>();
        for (int o : exact.ordinals()) {
            truth.add(o);
        }
        int hit = 0;
        for (int o : approx.ordinals()) {
            if (truth.contains(o)) {
                hit++;
            }
        }
        return hit / (double) exact.size();
    }
}
