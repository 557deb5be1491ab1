package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.PersistentIndexFactory;

/**
 * Registered through {@code META-INF/services}: kind "hnsw", parameters M, efConstruction,
 * efSearch, levelMultiplier, repairEf, quantization ({@code none} or {@code int8}) and rerank (see
 * {@link HnswParams}).
 */
public final class HnswIndexFactory extends PersistentIndexFactory {

    /** The factory the service loader makes. */
    public HnswIndexFactory() {
        super(
                HnswIndex.KIND,
                c -> new HnswIndex(c.dimension(), c.metric(), HnswParams.parse(c)),
                HnswIndex::load,
                HnswIndex::readFrom);
    }
}
