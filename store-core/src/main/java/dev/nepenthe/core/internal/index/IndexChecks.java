package dev.nepenthe.core.internal.index;

import dev.nepenthe.core.Metric;
import dev.nepenthe.core.index.IndexConfig;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/**
 * The argument checks and the file "shape" (dimension and metric) every index shares, so the exact,
 * HNSW and IVF-PQ indexes refuse bad input with the same words.
 */
public final class IndexChecks {
    private IndexChecks() {}

    /** An ordinal the store may hand out, and a vector of the index's dimension. */
    public static void checkAdd(int ordinal, float[] vector, int dim) {
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal: expected >= 0, got " + ordinal);
        }
        if (vector == null || vector.length != dim) {
            throw new IllegalArgumentException(
                    "vector: expected dimension "
                            + dim
                            + ", got "
                            + (vector == null ? "null" : vector.length));
        }
    }

    /** A positive k and a query of the index's dimension. */
    public static void checkSearch(float[] query, int k, int dim) {
        if (k <= 0) {
            throw new IllegalArgumentException("k: expected > 0, got " + k);
        }
        if (query == null || query.length != dim) {
            throw new IllegalArgumentException(
                    "query: expected dimension "
                            + dim
                            + ", got "
                            + (query == null ? "null" : query.length));
        }
    }

    /** Writes dimension and metric, the first fields of every index file. */
    public static void writeShape(DataOutput out, int dim, Metric metric) throws IOException {
        out.writeInt(dim);
        out.writeByte(metric.ordinal());
    }

    /**
     * Reads what {@link #writeShape} wrote and checks it against the collection's config.
     *
     * @throws IllegalArgumentException (reported by the file reader as corruption, naming the file)
     *     when the metric code is unknown or the shape differs from {@code config}
     */
    public static void readShape(DataInput in, IndexConfig config) throws IOException {
        int dim = in.readInt();
        int code = in.readUnsignedByte();
        if (code >= Metric.values().length) {
            throw new IllegalArgumentException("metric code " + code + " is unknown");
        }
        Metric metric = Metric.values()[code];
        if (dim != config.dimension() || metric != config.metric()) {
            throw new IllegalArgumentException(
                    "index holds dimension "
                            + dim
                            + " metric "
                            + metric
                            + ", collection expects dimension "
                            + config.dimension()
                            + " metric "
                            + config.metric());
        }
    }
}
