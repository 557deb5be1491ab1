package dev.nepenthe.cluster.history;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Wing and Gong search, with Lowe's memoisation, for one key's history: an order of its
 * operations that respects real time (one that completed before another was invoked comes first)
 * and that {@link KeyModel} accepts. A configuration is the set of operations placed so far and the
 * model's state; one seen before is not searched again. An operation may be placed next only if it
 * was invoked before every unplaced operation's completion. Operations of unknown outcome never
 * complete: each may be placed at any point after its invocation, or never; of several with the
 * same effect only the earliest invoked is tried (any placement of a later one can be swapped for
 * it), which keeps a run of failed writes from multiplying the configurations.
 */
final class KeySearch {

    /** Thrown when a search visits more configurations than it was given. */
    static final class Exploded extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Exploded(String message) {
            super(message);
        }
    }

    private record Config(long[] placed, long state) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Config c && c.state == state && Arrays.equals(c.placed, placed);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(placed) * 31 + Long.hashCode(state);
        }

        @Override
        public String toString() {
            return "Config[" + KeyModel.describe(state) + "]";
        }
    }

    private final String key;
    private final Op[] ops;
    private final long[] written;
    private final int[] effect;
    private final int known;
    private final long budget;
    private final Set<Config> seen = new HashSet<>();
    private final BitSet placed = new BitSet();
    private final int[] path;
    private int depth;
    private int deepest = -1;
    private int[] deepestPath = new int[0];
    private long deepestState = KeyModel.INITIAL;
    private Set<Long> finals;

    /**
     * @param key the key, for messages
     * @param history the key's operations (its forgets included); reads that failed are left out,
     *     and a write whose answer was unexpected counts as one of unknown outcome
     * @param reads the operations whose reads tell write numbers apart (the history, or more)
     * @param budget how many configurations the search may visit before it gives up
     */
    KeySearch(String key, List<Op> history, List<Op> reads, long budget) {
        this.key = key;
        this.budget = budget;
        this.ops =
                history.stream()
                        .filter(o -> o.isWrite() || o.outcome() == Op.Outcome.OK)
                        .map(KeySearch::unknownIfUnexpected)
                        .sorted(Comparator.comparingLong(Op::invoked))
                        .toArray(Op[]::new);
        Set<Long> observed = new HashSet<>();
        for (Op o : reads) {
            if ((o.kind() == Op.Kind.GET || o.kind() == Op.Kind.STALE_GET)
                    && o.seen() != Op.NOT_FOUND) {
                observed.add(o.seen());
            }
        }
        written = new long[ops.length];
        effect = new int[ops.length];
        Map<List<Long>, Integer> effects = new HashMap<>();
        int k = 0;
        for (int i = 0; i < ops.length; i++) {
            Op o = ops[i];
            written[i] = observed.contains(o.write()) ? o.write() : KeyModel.UNSEEN;
            if (o.outcome() == Op.Outcome.UNKNOWN) {
                effect[i] =
                        effects.computeIfAbsent(
                                List.of((long) o.kind().ordinal(), written[i]),
                                e -> effects.size());
            } else {
                effect[i] = -1;
                k++;
            }
        }
        known = k;
        path = new int[ops.length];
    }

    private static Op unknownIfUnexpected(Op o) {
        if (o.outcome() != Op.Outcome.UNEXPECTED) {
            return o;
        }
        return new Op(
                o.seq(),
                o.thread(),
                o.node(),
                o.kind(),
                o.key(),
                o.subject(),
                o.write(),
                Op.Outcome.UNKNOWN,
                -1,
                o.invoked(),
                Op.NEVER,
                o.note());
    }

    /** Whether some order of the history is one the model accepts. */
    boolean linearizable() {
        finals = null;
        seen.clear();
        placed.clear();
        depth = 0;
        deepest = -1;
        return search(KeyModel.INITIAL, known);
    }

    /**
     * Every state the model may end in once every operation of known outcome is placed (and any of
     * those of unknown outcome): the states a final read may see.
     */
    Set<Long> finalStates() {
        finals = new LinkedHashSet<>();
        seen.clear();
        placed.clear();
        depth = 0;
        boolean found = search(KeyModel.INITIAL, known);
        if (found) {
            throw new AssertionError("an exhaustive search does not stop early");
        }
        return finals;
    }

    /** How many configurations the last search visited. */
    int visited() {
        return seen.size();
    }

    private boolean search(long state, int left) {
        if (left == 0) {
            if (finals == null) {
                return true;
            }
            finals.add(state);
        }
        if (!seen.add(new Config(placed.toLongArray(), state))) {
            return false;
        }
        if (seen.size() > budget) {
            throw new Exploded(
                    "the search of "
                            + key
                            + " visited more than "
                            + budget
                            + " configurations ("
                            + ops.length
                            + " operations, "
                            + (ops.length - known)
                            + " of unknown outcome): shorten the history");
        }
        if (depth > deepest) {
            deepest = depth;
            deepestPath = Arrays.copyOf(path, depth);
            deepestState = state;
        }
        long horizon = Long.MAX_VALUE;
        for (int i = placed.nextClearBit(0); i < ops.length; i = placed.nextClearBit(i + 1)) {
            horizon = Math.min(horizon, ops[i].completed());
        }
        // Operations of known outcome first: an order that needs no answerless write is found
        // without trying them. An answerless write that would not change the state is never
        // tried: placing it only uses it up.
        for (int pass = 0; pass < 2; pass++) {
            Set<Integer> effectsTried = new HashSet<>();
            for (int i = placed.nextClearBit(0);
                    i < ops.length && ops[i].invoked() <= horizon;
                    i = placed.nextClearBit(i + 1)) {
                boolean unknown = effect[i] >= 0;
                if (unknown != (pass == 1) || (unknown && !effectsTried.add(effect[i]))) {
                    continue;
                }
                long next = KeyModel.step(ops[i], written[i], state);
                if (next == KeyModel.INVALID || (unknown && next == state)) {
                    continue;
                }
                placed.set(i);
                path[depth++] = i;
                boolean found = search(next, unknown ? left : left - 1);
                depth--;
                placed.clear(i);
                if (found) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Why no order was found: the longest prefix the search placed, the state it left, and each
     * operation that could not come next.
     */
    String explain(long origin) {
        StringBuilder b = new StringBuilder();
        b.append("no linearization of ")
                .append(key)
                .append(": ")
                .append(ops.length)
                .append(" operations, ")
                .append(ops.length - known)
                .append(" of unknown outcome\n  longest order found (")
                .append(deepestPath.length)
                .append(" placed), its last steps:");
        for (int j = Math.max(0, deepestPath.length - 8); j < deepestPath.length; j++) {
            b.append("\n    ").append(ops[deepestPath[j]].describe(origin));
        }
        b.append("\n  state then: ").append(KeyModel.describe(deepestState));
        BitSet done = new BitSet();
        for (int i : deepestPath) {
            done.set(i);
        }
        long horizon = Long.MAX_VALUE;
        for (int i = done.nextClearBit(0); i < ops.length; i = done.nextClearBit(i + 1)) {
            horizon = Math.min(horizon, ops[i].completed());
        }
        b.append("\n  none of these may come next:");
        for (int i = done.nextClearBit(0);
                i < ops.length && ops[i].invoked() <= horizon;
                i = done.nextClearBit(i + 1)) {
            b.append("\n    ").append(ops[i].describe(origin));
        }
        return b.toString();
    }

    /** The whole sub-history, in invocation order. */
    String history(long origin) {
        List<String> lines = new ArrayList<>();
        for (Op o : ops) {
            lines.add("    " + o.describe(origin));
        }
        return String.join("\n", lines);
    }
}
