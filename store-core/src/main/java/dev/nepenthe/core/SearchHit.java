package dev.nepenthe.core;

/** One search result: the record and its score (higher is closer, see {@link Metric}). */
public record SearchHit(VectorRecord record, float score) {
    public String id() {
        return record.id();
    }
}
