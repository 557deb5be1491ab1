package dev.nepenthe.bench.hnsw;

import java.io.IOException;
import java.util.List;

/**
 * One graph library behind the harness, run the way its users run it: build over all vectors, then
 * answer top-k queries. An engine may search another engine's index in a different way (Lucene's
 * quantized index with a full-precision rescore, jvector's graph with PQ scores): it names that
 * engine in {@link #sharesIndexOf()} and is listed after it.
 */
interface AnnEngine extends AutoCloseable {

    String name();

    /**
     * Builds over {@code data}; ordinals are array positions. An engine that shares another's index
     * ({@link #sharesIndexOf()}) is built after it and builds only what it adds, if anything.
     */
    void build(float[][] data) throws IOException;

    /** The k nearest ordinals with beam width {@code ef}, best first. */
    int[] search(float[] query, int k, int ef) throws IOException;

    /** What the build time covers, one phrase for the build table. */
    String buildNote();

    /** The engine whose index this one searches (built first), or null when it builds its own. */
    default String sharesIndexOf() {
        return null;
    }

    /** Whether one built engine may serve searches from several threads at once. */
    default boolean concurrentSearch() {
        return true;
    }

    /**
     * What the built index occupies, part by part (empty where the harness does not measure it).
     */
    default List<Part> footprint() {
        return List.of();
    }

    /** One part of an index's footprint: what it is and its size in bytes over all vectors. */
    record Part(String what, long bytes) {}

    /** Releases files and threads; the default has none. */
    @Override
    default void close() throws IOException {}
}
