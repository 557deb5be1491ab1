package dev.nepenthe.springai;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.test.vectorstore.BaseVectorStoreTests;
import org.springframework.ai.vectorstore.VectorStore;

/**
 * Spring AI's published suite for vector stores (spring-ai-test 2.0.1's BaseVectorStoreTests:
 * delete by ids, by a filter expression object and by its text form), run unchanged against {@link
 * NepentheVectorStore}, embedding with the collection's own embedder (the bundled
 * all-MiniLM-L6-v2).
 */
class NepentheVectorStoreIT extends BaseVectorStoreTests {

    @TempDir static Path folder;

    private static Nepenthe nepenthe;
    private static final AtomicInteger COLLECTIONS = new AtomicInteger();

    @BeforeAll
    static void open() throws IOException {
        nepenthe =
                Nepenthe.open(
                        folder.resolve("data"),
                        StoreOptions.defaults()
                                .withKeystore(folder.resolve("keys"))
                                .withEmbedder(new MiniLmEmbedder()));
    }

    @AfterAll
    static void close() throws IOException {
        nepenthe.close();
    }

    /** Each test gets a new, empty collection of the same store. */
    @Override
    protected void executeTest(Consumer<VectorStore> testFunction) {
        testFunction.accept(
                NepentheVectorStore.builder(
                                nepenthe,
                                nepenthe.createCollection(
                                        CollectionSpec.of(
                                                        "docs-" + COLLECTIONS.incrementAndGet(),
                                                        MiniLmEmbedder.DIMENSION,
                                                        Metric.COSINE)
                                                .withEmbedder(MiniLmEmbedder.NAME)))
                        .build());
    }
}
