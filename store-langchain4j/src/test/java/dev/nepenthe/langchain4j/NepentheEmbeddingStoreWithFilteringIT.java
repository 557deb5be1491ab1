package dev.nepenthe.langchain4j;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.EmbeddingStoreWithFilteringIT;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * LangChain4j's published contract for embedding stores with metadata filters (langchain4j-core
 * 1.19.0's test-jar: adding, searching, scores, minScore, metadata types and every filter,
 * ContainsString included), run unchanged against {@link NepentheEmbeddingStore}.
 */
class NepentheEmbeddingStoreWithFilteringIT extends EmbeddingStoreWithFilteringIT {

    @TempDir static Path folder;

    private static ContractFixture fixture;

    @BeforeAll
    static void open() {
        fixture = new ContractFixture(folder);
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

    /** The suite calls this before each test and then checks the store is empty. */
    @Override
    protected void clearStore() {
        fixture.store.removeAll();
    }

    /** The store has a substring filter (Filter.contains), so the ContainsString tests run. */
    @Override
    protected boolean supportsContains() {
        return true;
    }
}
