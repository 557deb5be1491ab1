package dev.nepenthe.core.index;

import java.util.List;
import java.util.Map;

/**
 * What an index shows an operator or auditor about its structure: counts, and for an index that
 * partitions its vectors, each partition's centroid and members, so the first-order rule (a
 * data-dependent parameter is an exact function of the surviving records, see FORGET.md) can be
 * checked from outside: recompute each centroid as the mean of its members' vectors.
 *
 * @param kind the index kind
 * @param size live vectors in the index
 * @param stats named counts (for example "levels", "meanDegreeLayer0", "trainings")
 * @param partitions each partition's centroid and member ordinals; empty for an unpartitioned index
 * @param lineage ordinals a trained codebook was fitted on (still live), or null when the index
 *     trains nothing
 */
@SuppressWarnings("ArrayRecordComponent") // read once, never compared; copies would cost lists
public record IndexDescription(
        String kind,
        int size,
        Map<String, Number> stats,
        List<Partition> partitions,
        int[] lineage) {

    /**
     * One partition (an inverted list): its routing centroid and its members' ordinals.
     *
     * @param id the partition's number in the index
     * @param centroid the routing centroid, in an array the index does not keep using
     * @param members the ordinals in the partition
     */
    @SuppressWarnings("ArrayRecordComponent") // as the description: read once, not compared
    public record Partition(int id, float[] centroid, int[] members) {}

    /**
     * Copies the counts and the partitions (the arrays are kept as given).
     *
     * @throws NullPointerException if the stats or the partitions are null or hold a null
     */
    public IndexDescription {
        stats = Map.copyOf(stats);
        partitions = List.copyOf(partitions);
    }
}
