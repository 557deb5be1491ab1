package dev.nepenthe.hnsw;

import dev.nepenthe.core.index.IndexConfig;
import dev.nepenthe.core.index.VectorIndex;
import dev.nepenthe.core.index.VectorIndexFactory;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Registered through {@code META-INF/services}: kind "hnsw", parameters M, efConstruction,
 * efSearch, levelMultiplier, repairEf, quantization ({@code none} or {@code int8}) and rerank (see
 * {@link HnswParams}).
 */
public final class HnswIndexFactory implements VectorIndexFactory {

    @Override
    public String kind() {
        return HnswIndex.KIND;
    }

    @Override
    public VectorIndex create(IndexConfig config) {
        return new HnswIndex(config.dimension(), config.metric(), HnswParams.parse(config));
    }

    @Override
    public VectorIndex load(IndexConfig config, Path file) throws IOException {
        return HnswIndex.load(config, file);
    }

    @Override
    public boolean persists() {
        return true;
    }

    @Override
    public VectorIndex readFrom(IndexConfig config, DataInputStream in) throws IOException {
        return HnswIndex.readFrom(config, in);
    }
}
