package dev.nepenthe.hnsw;

import java.util.Arrays;
import java.util.BitSet;

/**
 * Keeps the proof that every live node is reachable on layer 0 from the entry point, and restores
 * reachability when the proof fails. The proof is a labelling (each live node but the entry point
 * has an in-neighbour with a smaller label), so after a removal or an insert only the nodes that
 * lost an in-link need checking, not the whole graph; when that cannot settle it, a full walk links
 * stranded nodes back and labels the graph again. Apart from {@link HnswRepairer}, which unlinks
 * and re-selects lists: this class never changes a list except to link a stranded node back. Caller
 * holds the index's writer gate exclusively.
 */
final class ReachabilityCertifier {

    private final HnswGraph g;
    private final int repairEf;

    /** Stranded nodes linked back since the index was created. */
    long reconnected;

    ReachabilityCertifier(HnswGraph g, int repairEf) {
        this.g = g;
        this.repairEf = repairEf;
    }

    /**
     * The safety net behind the local rules: walks layer 0 from the entry point and links every
     * live node it cannot reach from the closest reachable node that can take the link (Lucene
     * connects components the same way after a merge). Cost: one pass over every list, plus a
     * search per stranded group. Caller holds the writer gate exclusively.
     *
     * @return how many stranded nodes (or groups) were linked back
     */
    int connectUnreachable() {
        // A link that had to trade away another edge can strand something else; passes repeat
        // until one finds nothing to do (in practice the second pass finds nothing). That last
        // pass walked every node from the entry point and labelled it on the way.
        fullWalks++;
        g.invalidateLabels();
        int total = 0;
        for (int pass = 0; pass < 8; pass++) {
            int linked = connectPass();
            total += linked;
            if (linked == 0) {
                if (lastPassReachedAll) {
                    g.labelsRebuilt();
                }
                break;
            }
        }
        return total;
    }

    /** Full layer-0 walks since the index was created (for tests and benchmarks). */
    long fullWalks;

    /** Labels the certificate raised since the index was created (for tests and benchmarks). */
    long relabelled;

    /**
     * Proves, after a removal, that every live node is still reachable on layer 0, at the cost of
     * the nodes the removal touched rather than a walk over the graph. The certificate: each live
     * node but the entry point has an in-neighbour with a smaller label (a walk labels the graph
     * with discovery depths, spaced by {@link #LABEL_STEP}), so following smaller labels always
     * ends at the entry point. Only nodes that lost a layer-0 in-link, and new nodes, can break it
     * (the graph records them); each is checked against its in-neighbours (the reverse lists), a
     * node with no smaller in-neighbour is relabelled above its smallest one, and the nodes that
     * may have leaned on it are checked in turn. A node with no live in-neighbour at all, a
     * relabelling that runs on (nodes cut off together keep raising each other), a moved entry
     * point, or more pending nodes than an eighth of the graph fall back to the full walk, which
     * links stranded nodes back and relabels. Caller holds the writer gate exclusively.
     *
     * @return how many stranded nodes were linked back (only a full walk links any)
     */
    int certifyReachability() {
        int ep = HnswGraph.entrySlot(g.entry());
        if (ep < 0) {
            g.labelsRebuilt();
            return 0;
        }
        if (!g.labelsValid()) {
            return connectUnreachable();
        }
        BitSet pending = g.drainUncertified();
        int n = pending.cardinality();
        if (n > Math.max(1024, g.highWater() / 8)) {
            return connectUnreachable();
        }
        IntBag queue = new IntBag(Math.max(16, n));
        for (int s = pending.nextSetBit(0); s >= 0; s = pending.nextSetBit(s + 1)) {
            queue.add(s);
        }
        // A raise reads a node's in- and out-lists, about what a walk spends on two nodes: up to
        // an eighth of the graph's nodes in raises costs a quarter of the walk it avoids. A
        // budget of the pending nodes alone ran out in a forget's 100 removals at 1M nodes (a
        // cut-off group raises forever: the budget is what catches it).
        long budget = Math.max(16L * n + 1024, g.highWater() / 8);
        long raised = 0;
        for (int i = 0; i < queue.size(); i++) {
            int s = queue.get(i);
            if (s == ep || !g.isLive(s)) {
                continue;
            }
            int before = g.label(s);
            int smallest = g.smallestInLabel(s, before);
            if (smallest == Integer.MAX_VALUE) {
                return connectUnreachable(); // no live in-link: stranded
            }
            if (smallest < before) {
                continue;
            }
            g.setLabel(s, smallest + 1);
            relabelled++;
            if (++raised > budget) {
                return connectUnreachable();
            }
            // Only an out-neighbour labelled above s's old label can have leaned on s, and only
            // one s's new label no longer stays below has lost it. Checking every out-neighbour
            // up to the new label also revisited nodes s never certified (at 1M nodes, half of a
            // forget's 0.4 to 2 million checks).
            int[] out = g.listArray(s, 0);
            int base = g.listBase(s, 0);
            for (int j = 0, deg = HnswGraph.degree(out, base); j < deg; j++) {
                int t = out[base + 1 + j];
                if (t >= 0) {
                    int lt = g.label(t);
                    if (lt > before && lt <= smallest + 1 && g.isLive(t)) {
                        queue.add(t);
                    }
                }
            }
        }
        return 0;
    }

    /**
     * The gap a walk leaves between the labels of one depth and the next. Most of a large graph
     * sits at depths whose nodes have one in-neighbour a depth above them; a node that loses it is
     * raised just above its smallest in-neighbour, usually one of its own depth. With depths one
     * apart that raise reached the next depth, whose nodes had leaned on it and were raised in
     * turn: at 1M nodes a forget of 100 records raised 17,000 to 91,000 nodes (0.15 to 0.56 s of
     * the forget, BENCHMARKS.md, issue 19). A gap absorbs raises until they have stacked up that
     * many times within one depth.
     */
    static final int LABEL_STEP = 16;

    /** Whether the last pass reached every live node (so its labels certify them all). */
    private boolean lastPassReachedAll;

    private int connectPass() {
        long entry = g.entry();
        int ep = HnswGraph.entrySlot(entry);
        lastPassReachedAll = true;
        if (ep < 0) {
            return 0;
        }
        int hw = g.highWater();
        BitSet reached = new BitSet(hw);
        int[] queue = new int[16];
        queue = markReachable(ep, reached, queue);
        int linked = 0;
        HnswSearcher.Scratch s = HnswSearcher.scratch();
        for (int u = 0; u < hw; u++) {
            if (reached.get(u) || !g.isLive(u)) {
                continue;
            }
            // Search layer 0 from a reached node: the upper layers may lead straight into the
            // stranded group, which layer 0 alone does not reach.
            GraphLayout layout = g.layout();
            NodeScorer query = layout.scorers().nodeScorer(u);
            s.begin(g.capacity());
            int start = HnswSearcher.descend(layout, query, entry, 0, s);
            if (!reached.get(start)) {
                start = ep;
            }
            s.visited.visit(u);
            HnswSearcher.searchAround(
                    layout, query, new int[] {start}, Math.max(repairEf, g.maxDegree0), 0, u, s);
            int[] cand = HnswSearcher.takeBestFirst(s);
            int m = cand.length;
            IntBag onlyReached = new IntBag(m);
            for (int c : cand) {
                if (reached.get(c)) {
                    onlyReached.add(c);
                }
            }
            if (HnswRepairer.linkFromClosest(g, u, 0, onlyReached.toArray())) {
                linked++;
                queue = markReachable(u, reached, queue);
            } else {
                lastPassReachedAll = false;
            }
        }
        reconnected += linked;
        return linked;
    }

    /**
     * Breadth-first walk of layer 0 from {@code from}, adding what it reaches to {@code reached}
     * and labelling each node {@link #LABEL_STEP} more than the node it was found from. From the
     * entry point the labels are the nodes' depths times the step. A depth-first walk's labels
     * follow one long path instead: at 1M nodes, a forget of 100 early-inserted records (hubs near
     * the entry point) raised over 125,000 of them and walked the graph again, where depths raised
     * 15,000 to 50,000 and never walked (BENCHMARKS.md, issue 19). At 60,000 nodes depth-first
     * labels raised fewer (17 to 56 against 223 to 626 over five batches of 100, neither walking):
     * the gain is at scale, where a walk costs most.
     */
    private int[] markReachable(int from, BitSet reached, int[] queue) {
        int head = 0;
        int tail = 0;
        queue[tail++] = from;
        reached.set(from);
        if (from == HnswGraph.entrySlot(g.entry())) {
            g.setLabel(from, 0);
        }
        while (head < tail) {
            int v = queue[head++];
            int[] arr = g.listArray(v, 0);
            int base = g.listBase(v, 0);
            int deg = HnswGraph.degree(arr, base);
            for (int i = 0; i < deg; i++) {
                int n = arr[base + 1 + i];
                if (n >= 0 && !reached.get(n)) {
                    reached.set(n);
                    // Discovered from v: a step above v, so v certifies it (see
                    // certifyReachability).
                    g.setLabel(n, g.label(v) + LABEL_STEP);
                    if (tail == queue.length) {
                        queue = Arrays.copyOf(queue, tail * 2);
                    }
                    queue[tail++] = n;
                }
            }
        }
        return queue;
    }
}
