package dev.nepenthe.langchain4j;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.EmbeddingStoreWithFilteringIT;
import dev.nepenthe.core.IndexSpec;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same LangChain4j filtering contract as {@link NepentheEmbeddingStoreWithFilteringIT}, over an
 * HNSW collection: the filters reach the graph search as the candidates it may return, and every
 * test's {@code removeAll()} deletes from the graph with repair.
 */
class NepentheHnswEmbeddingStoreWithFilteringIT extends EmbeddingStoreWithFilteringIT {

    @TempDir static Path folder;

    private static ContractFixture fixture;

    @BeforeAll
    static void open() {
        fixture = new ContractFixture(folder, IndexSpec.of("hnsw"));
    }

    @AfterAll
    static void close() throws IOException {
        fixture.close();
    }

    @Override
    protected EmbeddingStore<TextSegment> embeddingStore() {
        return fixture.store;
    }

    @Override
    protected EmbeddingModel embeddingModel() {
        return ContractFixture.MODEL;
    }

    @Override
    protected void clearStore() {
        fixture.store.removeAll();
    }

    @Override
    protected boolean supportsContains() {
        return true;
    }
}
