package dev.nepenthe.langchain4j;

import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.IndexSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * What LangChain4j's contract suites run against: a real store in a temporary folder, one cosine
 * collection on the given index, and the embedding model the suites are written for (the quantized
 * all-MiniLM-L6-v2, 384 dimensions). One store per test class; each test starts from an empty
 * collection, emptied through the adapter's own {@code removeAll()}.
 */
final class ContractFixture implements AutoCloseable {

    /** Loaded once per JVM: the model takes a second or two and is safe to share. */
    static final EmbeddingModel MODEL = new AllMiniLmL6V2QuantizedEmbeddingModel();

    final Nepenthe nepenthe;
    final NepentheEmbeddingStore store;

    ContractFixture(Path folder) {
        this(folder, IndexSpec.exact());
    }

    ContractFixture(Path folder, IndexSpec index) {
        try {
            nepenthe =
                    Nepenthe.open(
                            folder.resolve("data"),
                            StoreOptions.defaults().withKeystore(folder.resolve("keys")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        store =
                NepentheEmbeddingStore.builder(
                                nepenthe,
                                nepenthe.createCollection(
                                        CollectionSpec.of("contract", 384, Metric.COSINE)
                                                .withIndex(index)))
                        .build();
    }

    @Override
    public void close() throws IOException {
        nepenthe.close();
    }
}
