package dev.nepenthe.hnsw;

/**
 * What one removal changed, kept by the index ({@link RemovalTraces}) so {@link
 * ScopedRemovalCheck#check} can look there instead of at the whole graph. A class, not a record:
 * the touched array is shared by every ordinal of a batch and compared by identity, which a
 * record's array-valued equality would hide.
 */
final class RemovalTrace {
    private final int ordinal;
    private final int slot;
    private final int[] touched;

    /**
     * @param ordinal the removed ordinal
     * @param slot the slot it had (freed by the removal, perhaps handed out again since)
     * @param touched sorted slots whose lists the removal's batch changed or whose reachability
     *     certificate it put at risk: the removed nodes' in- and out-neighbours on every layer, the
     *     lists the repair re-selected or linked from, the nodes that lost an in-link. One array is
     *     shared by every ordinal of a batch (not copied).
     */
    RemovalTrace(int ordinal, int slot, int[] touched) {
        this.ordinal = ordinal;
        this.slot = slot;
        this.touched = touched;
    }

    int ordinal() {
        return ordinal;
    }

    int slot() {
        return slot;
    }

    /** The shared array itself; callers read it and never write it. */
    int[] touched() {
        return touched;
    }
}
