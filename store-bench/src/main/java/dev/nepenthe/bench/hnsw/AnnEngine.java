package dev.nepenthe.bench.hnsw;

import java.io.IOException;

/** One graph library behind the harness: build over all vectors, then answer top-k queries. */
interface AnnEngine {

    String name();

    /** Builds over {@code data}; ordinals are array positions. */
    void build(float[][] data) throws IOException;

    /** The k nearest ordinals with beam width {@code ef}, best first. */
    int[] search(float[] query, int k, int ef) throws IOException;
}
