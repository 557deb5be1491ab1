package dev.nepenthe.core;

import java.util.List;
import java.util.Map;

/**
 * A collection's index as an operator or auditor sees it ({@link VectorCollection#describeIndex()}):
 * the index's counts, and for a partitioned index (IVF-PQ) each list's routing centroid with
 * its members and the records its codebooks were trained on, named by record. With
 * {@link VectorCollection#get} an auditor can recompute each centroid as the mean of its
 * members' vectors and check that no forgotten record is among the members or the lineage.
 *
 * @param stats named counts from the index (levels and degrees for HNSW; lists, trainings,
 *     taint for IVF-PQ)
 * @param trainingLineage the live records the codebooks were fitted on, or null when the index
 *     trains nothing
 */
public record IndexView(String kind, int size, Map<String, Number> stats, List<Partition> partitions,
        List<Ref> trainingLineage) {

    /** A record by tenant and id (ids are unique within a tenant). */
    public record Ref(String tenant, String id) {}

    /** One inverted list: its routing centroid and the records in it. */
    public record Partition(int id, float[] centroid, List<Ref> members) {}
}
