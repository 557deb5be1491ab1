package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.AbstractVectorIndex;

/**
 * An index that keeps its own copy of every live vector in a {@link SwapRemoveVectors} block,
 * guarded by one {@link IndexLock}: the exact index and IVF-PQ. It holds the two and answers {@link
 * #contains} and {@link #size} from the block under the read lock, so those readers are written
 * once for both.
 */
public abstract class BlockBackedIndex extends AbstractVectorIndex {

    /** The index's read-write lock; it guards {@link #store} and whatever else the index holds. */
    protected final IndexLock lock = new IndexLock();

    /** The live vectors, prepared, back to back; read and written under {@link #lock}. */
    protected final SwapRemoveVectors store;

    /**
     * Checks and keeps the shape (see {@link AbstractVectorIndex}) and makes an empty block.
     *
     * @param kind the kind the index's factory registers
     * @param dimension the vectors' length, above 0
     * @param metric how the index scores
     */
    protected BlockBackedIndex(String kind, int dimension, Metric metric) {
        super(kind, dimension, metric);
        this.store = new SwapRemoveVectors(dimension);
    }

    @Override
    public final boolean contains(int ordinal) {
        return lock.readBoolean(() -> store.contains(ordinal));
    }

    @Override
    public final int size() {
        return lock.readInt(store::size);
    }
}
