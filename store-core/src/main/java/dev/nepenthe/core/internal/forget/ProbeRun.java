package dev.nepenthe.core.internal.forget;

import java.util.Map;
import java.util.TreeMap;

/**
 * Which negative-space probe ran in one collection, for the evidence and the receipt: the exact
 * probe and why, or the approximate one through the collection's index with its parameters, and
 * what it compared. Counts, kinds and knob values only.
 *
 * @param collection the collection
 * @param approximate true when the probe searched the collection's index
 * @param index the collection's index kind
 * @param why for an exact probe, why it was exact (forced by the request, the tenant at or below
 *     the policy's size, an exact index, a metric the index does not rank by cosine); null for an
 *     approximate one
 * @param params for an approximate probe, the candidates it asked for per forgotten vector and the
 *     index knobs it searched with; empty for an exact one
 * @param survivors the tenant's unhidden records in the collection when it ran
 * @param scored survivors whose cosine was computed exactly: every survivor for the exact probe,
 *     the candidates the index returned (per forgotten vector) for the approximate one
 * @param exactFallbacks for an approximate probe, the forgotten vectors with so many survivors
 *     above the threshold that their candidates grew to the whole tenant, which were then compared
 *     with every survivor
 */
record ProbeRun(
        String collection,
        boolean approximate,
        String index,
        String why,
        Map<String, Integer> params,
        long survivors,
        long scored,
        int exactFallbacks) {

    ProbeRun {
        params = Map.copyOf(params);
    }

    /** As the ledger entry and the receipt carry it (canonical JSON sorts the keys). */
    Map<String, Object> evidence() {
        Map<String, Object> m = new TreeMap<>();
        m.put("collection", collection);
        m.put("mode", approximate ? "approximate" : "exact");
        m.put("index", index);
        m.put("survivors", survivors);
        m.put("scored", scored);
        if (approximate) {
            m.put("params", new TreeMap<>(params));
            m.put("exactFallbacks", exactFallbacks);
        } else {
            m.put("why", why);
        }
        return m;
    }
}
