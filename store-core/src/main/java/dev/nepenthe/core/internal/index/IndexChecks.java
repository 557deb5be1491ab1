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
    /**
     * Metric codes as index files hold them, written out here (not the enum's order) so that a new
     * or reordered {@link Metric} cannot change what an existing file means.
     */
    private static final Metric[] METRIC_BY_CODE = {Metric.COSINE, Metric.DOT, Metric.L2};

    private IndexChecks() {}

    /**
     * The error for an add whose ordinal is live already (every index refuses it the same way).
     *
     * @return the exception to throw
     */
    public static IllegalArgumentException alreadyLive(int ordinal) {
        return new IllegalArgumentException(
                "ordinal " + ordinal + " is already live in this index");
    }

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
        out.writeByte(metricCode(metric));
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
        if (code >= METRIC_BY_CODE.length) {
            throw new IllegalArgumentException("metric code " + code + " is unknown");
        }
        Metric metric = METRIC_BY_CODE[code];
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

    /** The byte that stands for {@code metric} in an index file (see {@link #METRIC_BY_CODE}). */
    private static int metricCode(Metric metric) {
        return switch (metric) {
            case COSINE -> 0;
            case DOT -> 1;
            case L2 -> 2;
        };
    }
}
