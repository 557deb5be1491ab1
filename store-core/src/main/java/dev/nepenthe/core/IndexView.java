package dev.nepenthe.core;

import java.util.List;
import java.util.Map;

/**
 * A collection's index as an operator or auditor sees it ({@link
 * VectorCollection#describeIndex()}): the index's counts, and for a partitioned index (IVF-PQ) each
 * list's routing centroid with its members and the records its codebooks were trained on, named by
 * record. With {@link VectorCollection#get} an auditor can recompute each centroid as the mean of
 * its members' vectors and check that no forgotten record is among the members or the lineage.
 *
 * @param kind the index kind ("exact", "hnsw", "ivfpq")
 * @param size live vectors in the index
 * @param stats named counts from the index (levels and degrees for HNSW; lists, trainings, a
 *     training in progress, training members removed since the last one for IVF-PQ)
 * @param partitions each inverted list with its centroid and members; empty for an index that does
 *     not partition (exact, HNSW)
 * @param trainingLineage the live records the codebooks were fitted on, or null when the index
 *     trains nothing
 */
public record IndexView(
        String kind,
        int size,
        Map<String, Number> stats,
        List<Partition> partitions,
        List<Ref> trainingLineage) {

    /**
     * A record by tenant and id (ids are unique within a tenant).
     *
     * @param tenant the record's tenant
     * @param id the record's id
     */
    public record Ref(String tenant, String id) {}

    /**
     * One inverted list: its routing centroid and the records in it.
     *
     * @param id the list's number in the index
     * @param centroid the routing centroid when the index was described (a copy)
     * @param members the live records in the list
     */
    @SuppressWarnings("ArrayRecordComponent") // a description to read, never compared
    public record Partition(int id, float[] centroid, List<Ref> members) {}
}
