package dev.nepenthe.cache;

import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.vector.Kernels;
import dev.nepenthe.core.vector.VectorKernels;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rule {@link QueryCache#purge} and {@link QueryCache#verify} share: why an entry of a forget's
 * tenant serves forgotten data (a forgotten record among its hits, the forgotten subject as its
 * query's subject, a query near a forgotten vector), or null; and how verification words what it
 * found (counts only). One class, so that what the purge evicts and what verification looks for
 * cannot drift apart.
 */
final class ForgetResidue {

    /** Why an entry serves forgotten data. */
    enum Reason {
        RECORD,
        SUBJECT,
        NEAR_QUERY
    }

    private final Map<String, Set<String>> idsByCollection = new HashMap<>();
    private final List<float[]> vectors = new ArrayList<>();
    private final String subject;
    private final double threshold;
    private final VectorKernels kernels = Kernels.get();

    ForgetResidue(ForgottenRecords forgotten, double threshold) {
        this.subject = forgotten.subject();
        this.threshold = threshold;
        for (ForgottenRecords.Item i : forgotten.items()) {
            idsByCollection.computeIfAbsent(i.collection(), c -> new HashSet<>()).add(i.recordId());
            if (i.vector() != null) {
                vectors.add(i.vector()); // the store's copy, zeroed by the store after the call
            }
        }
    }

    /**
     * Why the entry serves forgotten data.
     *
     * @param e an entry of the forget's tenant
     * @return the first reason found, or null
     */
    Reason why(CacheEntry e) {
        if (e.holdsAny(idsByCollection.get(e.key.collection))) {
            return Reason.RECORD;
        }
        if (subject != null && subject.equals(e.key.subject)) {
            return Reason.SUBJECT;
        }
        float[] q = e.key.vector;
        for (float[] v : vectors) {
            // cosine is 0 for a zero vector (a wiped key, a zeroed probe): never near.
            if (v.length == q.length && kernels.cosine(q, v) >= threshold) {
                return Reason.NEAR_QUERY;
            }
        }
        return null;
    }

    /**
     * Verification's problems for the entries found, by reason, in counts only.
     *
     * @param found the reasons of the entries found, one per entry
     * @param threshold the cache's probe threshold, as the message names it
     * @return the problems, none when nothing was found
     */
    static List<String> problems(Collection<Reason> found, double threshold) {
        Map<Reason, Integer> byReason = new EnumMap<>(Reason.class);
        found.forEach(r -> byReason.merge(r, 1, Integer::sum));
        List<String> problems = new ArrayList<>();
        if (byReason.containsKey(Reason.RECORD)) {
            problems.add(byReason.get(Reason.RECORD) + " cached entries hold a forgotten record");
        }
        if (byReason.containsKey(Reason.SUBJECT)) {
            problems.add(
                    byReason.get(Reason.SUBJECT)
                            + " cached entries were asked for the forgotten subject");
        }
        if (byReason.containsKey(Reason.NEAR_QUERY)) {
            problems.add(
                    byReason.get(Reason.NEAR_QUERY)
                            + " cached entries have a query at cosine "
                            + threshold
                            + " or above to a forgotten vector");
        }
        return problems;
    }
}
