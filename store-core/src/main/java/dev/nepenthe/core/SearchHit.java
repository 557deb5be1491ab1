package dev.nepenthe.core;

/**
 * One search result: the record and its score (higher is closer, see {@link Metric}).
 *
 * @param record a copy of the stored record, the caller's to keep or change
 * @param score the record's score against the query, computed from the vector the record held when
 *     the search ran
 */
public record SearchHit(VectorRecord record, float score) {
    /**
     * The record's id, unique within its tenant.
     *
     * @return the record's id
     */
    public String id() {
        return record.id();
    }
}
