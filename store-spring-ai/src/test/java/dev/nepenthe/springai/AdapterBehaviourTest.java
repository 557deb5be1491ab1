package dev.nepenthe.springai;

import dev.nepenthe.adapter.AdapterBehaviourContract;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.embed.MiniLmEmbedder;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * The cases both framework adapters pass alike, run against the Spring AI vector store, embedding
 * with the collection's own embedder (the bundled model).
 */
class AdapterBehaviourTest extends AdapterBehaviourContract {

    private static MiniLmEmbedder embedder;

    @BeforeAll
    static void loadModel() {
        embedder = new MiniLmEmbedder();
    }

    @Override
    protected StoreOptions options(StoreOptions defaults) {
        return defaults.withEmbedder(embedder);
    }

    @Override
    protected CollectionSpec spec(String name, Metric metric) {
        return CollectionSpec.of(name, MiniLmEmbedder.DIMENSION, metric)
                .withEmbedder(MiniLmEmbedder.NAME);
    }

    @Override
    protected Adapter adapter(
            Nepenthe store, VectorCollection collection, String tenant, String subjectKey) {
        NepentheVectorStore s =
                NepentheVectorStore.builder(store, collection)
                        .tenant(tenant)
                        .subjectKey(subjectKey)
                        .build();
        return new Adapter() {
            @Override
            public void add(List<Item> items) {
                s.add(
                        items.stream()
                                .map(i -> new Document(i.id(), i.text(), i.metadata()))
                                .toList());
            }

            @Override
            public void deleteMatchingNull() {
                s.delete((Filter.Expression) null);
            }

            @Override
            public void forgetMatchingNull() throws InterruptedException {
                s.forgetMatching(null, "k", "r", WAIT);
            }

            @Override
            public void delete(List<String> ids) {
                s.delete(ids);
            }

            @Override
            public ForgetOperation forgetSubject(String subject, String key)
                    throws InterruptedException {
                return s.forgetSubject(subject, key, "gdpr-art17", WAIT);
            }

            @Override
            public ForgetOperation forget(ForgetRequest request) throws InterruptedException {
                return s.forget(request, WAIT);
            }
        };
    }
}
