package dev.nepenthe.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.EmbeddingStoreWithRemovalIT;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * LangChain4j's published contract for removal (langchain4j-core 1.19.0's test-jar: by id, by ids,
 * by filter, everything, and the errors for missing arguments), run unchanged against {@link
 * NepentheEmbeddingStore}.
 */
class NepentheEmbeddingStoreWithRemovalIT extends EmbeddingStoreWithRemovalIT {

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

    /** This suite has no clearing hook of its own, and its tests count what is left. */
    @BeforeEach
    void startEmpty() {
        fixture.store.removeAll();
        assertEquals(
                0,
                fixture.store.collection().size(fixture.store.tenant()),
                "records left before the test");
    }

    @Override
    protected EmbeddingStore<TextSegment> embeddingStore() {
        return fixture.store;
    }

    @Override
    protected EmbeddingModel embeddingModel() {
        return ContractFixture.MODEL;
    }
}
