package dev.nepenthe.core.forget;

/**
 * How far a forget goes with graph and quantized indexes.
 *
 * <ul>
 *   <li>{@code REPAIR}: forgotten nodes and codes are removed and their neighbourhoods repaired in
 *       place. Second-order influence stays: where a forgotten vector steered later inserts, the
 *       links they chose remain. The receipt says so.
 *   <li>{@code REBUILD}: after the removal, every index that held a forgotten record is rebuilt
 *       from the surviving records, so no influence of the forgotten ones remains. Costs a full
 *       index build per affected collection.
 * </ul>
 */
public enum ErasureLevel {
    /** Remove and repair in place; second-order influence remains, and the receipt names it. */
    REPAIR,
    /** Remove, then rebuild every index that held a forgotten record from the survivors. */
    REBUILD
}
