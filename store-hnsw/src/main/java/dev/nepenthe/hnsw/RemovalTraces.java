package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.IntegrityReport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

/**
 * What each removal through an index changed, kept so {@link HnswIndex#verifyRemoval} can prove a
 * removal by checking where it touched the graph rather than the whole graph. Bounded: when full,
 * every trace is dropped at once and the ordinals they covered fall back to the full check. Read
 * and written with the index's writer gate held exclusively.
 */
final class RemovalTraces {
    /** At most this many removal traces are kept; beyond, all are dropped. */
    static final int MAX_TRACES = 1 << 16;

    /** At most this many touched slots are kept over all traces (about 8 MB). */
    static final long MAX_TRACED_SLOTS = 1L << 21;

    /**
     * Per removed ordinal, what its removal changed, oldest first when it was removed more than
     * once. Kept after a re-add, so a check after the ordinal came back still covers where its
     * removal changed the graph.
     */
    private final HashMap<Integer, RemovalTrace[]> traces = new HashMap<>();

    private int traceCount;
    private long tracedSlots;

    /** Traces dropped to keep within the bounds; their ordinals get the full check. */
    private long droppedTraces;

    /**
     * Records one trace per removed ordinal, all sharing the batch's touched slots (without the
     * removed slots themselves, which are checked as freed). Caller holds the writer gate
     * exclusively. Cost: the touched slots, sorted.
     */
    void keep(int[] ords, int[] slots, int n, IntBag touchedBag) {
        int[] removedSlots = Arrays.copyOf(slots, n);
        Arrays.sort(removedSlots);
        int[] all = HnswIntegrityChecker.sortedUnique(touchedBag);
        int k = 0;
        for (int s : all) {
            if (Arrays.binarySearch(removedSlots, s) < 0) {
                all[k++] = s;
            }
        }
        int[] touched = Arrays.copyOf(all, k);
        if (traceCount + n > MAX_TRACES || tracedSlots + touched.length > MAX_TRACED_SLOTS) {
            // Dropping all (rather than the oldest) keeps this O(1) amortised; the ordinals they
            // covered fall back to the full check, which proves their removal too.
            droppedTraces += traceCount;
            traces.clear();
            traceCount = 0;
            tracedSlots = 0;
            if (n > MAX_TRACES || touched.length > MAX_TRACED_SLOTS) {
                droppedTraces += n;
                return;
            }
        }
        tracedSlots += touched.length;
        for (int i = 0; i < n; i++) {
            RemovalTrace t = new RemovalTrace(ords[i], slots[i], touched);
            traces.merge(
                    ords[i],
                    new RemovalTrace[] {t},
                    (earlier, next) -> {
                        RemovalTrace[] both = Arrays.copyOf(earlier, earlier.length + 1);
                        both[earlier.length] = next[0];
                        return both;
                    });
            traceCount++;
        }
    }

    /**
     * The removed nodes' neighbours both ways on every layer, taken before the repair (so a list
     * the repair forgot is still looked at); the repair then adds whatever it changes.
     */
    static IntBag neighbourhood(HnswGraph graph, int[] slots, int n) {
        IntBag touched = new IntBag();
        for (int i = 0; i < n; i++) {
            int x = slots[i];
            for (int l = 0; l <= graph.level(x); l++) {
                for (int a : graph.reverseNeighbors(x, l)) {
                    touched.add(a);
                }
                for (int b : graph.neighbors(x, l)) {
                    touched.add(b);
                }
            }
        }
        return touched;
    }

    /**
     * The scoped proof of {@link ScopedRemovalCheck#check} over the traces of {@code
     * removedOrdinals}, or the full check when any of them has no trace.
     */
    IntegrityReport verify(HnswGraph graph, int[] ordToSlot, int live, int[] removedOrdinals) {
        List<RemovalTrace> scope = new ArrayList<>();
        long untraced = 0;
        for (int ord : removedOrdinals) {
            RemovalTrace[] ts = traces.get(ord);
            if (ts == null) {
                untraced++;
            } else {
                scope.addAll(Arrays.asList(ts));
            }
        }
        if (untraced > 0) {
            return HnswIntegrityChecker.fallBack(
                    graph, ordToSlot, live, "scoped-fallback-untraced-ordinals", untraced);
        }
        return ScopedRemovalCheck.check(graph, ordToSlot, live, scope);
    }

    /** The latest removal trace of an ordinal, or null. */
    RemovalTrace latest(int ordinal) {
        RemovalTrace[] ts = traces.get(ordinal);
        return ts == null ? null : ts[ts.length - 1];
    }

    /** Traces dropped so far to keep within the bounds. */
    long dropped() {
        return droppedTraces;
    }
}
