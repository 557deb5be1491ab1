package dev.nepenthe.bench;

import dev.nepenthe.core.IndexSpec;
import java.util.HashMap;
import java.util.Map;

/**
 * The index settings the storage and forget harnesses share, in one place, so that their tables
 * compare the same HNSW and IVF-PQ builds and a change of setting reaches every harness at once.
 */
public final class BenchIndexes {

    private BenchIndexes() {}

    /**
     * The index named by a harness's {@code index=} argument: {@code hnsw} (M 16, efConstruction
     * 100, efSearch 64, with {@code hnswExtra} added), {@code ivfpq} (nlist 256, m = dim / 8,
     * nprobe 16, rerank 64) or, where {@code exactAllowed}, {@code exact}.
     *
     * @throws IllegalArgumentException naming the kinds expected and the one given
     */
    public static IndexSpec forKind(
            String kind, int dim, Map<String, String> hnswExtra, boolean exactAllowed) {
        return switch (kind) {
            case "hnsw" -> {
                Map<String, String> p = new HashMap<>(hnswExtra);
                p.putAll(Map.of("M", "16", "efConstruction", "100", "efSearch", "64"));
                yield IndexSpec.of("hnsw", p);
            }
            case "ivfpq" ->
                    IndexSpec.of(
                            "ivfpq",
                            Map.of(
                                    "nlist",
                                    "256",
                                    "m",
                                    Integer.toString(dim / 8),
                                    "nprobe",
                                    "16",
                                    "rerank",
                                    "64"));
            case "exact" -> {
                if (!exactAllowed) {
                    throw unknown(kind, false);
                }
                yield IndexSpec.exact();
            }
            default -> throw unknown(kind, exactAllowed);
        };
    }

    private static IllegalArgumentException unknown(String kind, boolean exactAllowed) {
        return new IllegalArgumentException(
                "index: expected "
                        + (exactAllowed ? "hnsw, ivfpq or exact" : "hnsw or ivfpq")
                        + ", got '"
                        + kind
                        + "'");
    }
}
