package dev.nepenthe.langchain4j;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.store.embedding.filter.Filter;
import dev.nepenthe.adapter.AdapterBehaviourContract;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** The cases both framework adapters pass alike, run against the LangChain4j embedding store. */
class AdapterBehaviourTest extends AdapterBehaviourContract {

    private static final int DIM = 32;

    @Override
    protected StoreOptions options(StoreOptions defaults) {
        return defaults;
    }

    @Override
    protected CollectionSpec spec(String name, Metric metric) {
        return CollectionSpec.of(name, DIM, metric);
    }

    @Override
    protected Adapter adapter(
            Nepenthe store, VectorCollection collection, String tenant, String subjectKey) {
        NepentheEmbeddingStore s =
                NepentheEmbeddingStore.builder(store, collection)
                        .tenant(tenant)
                        .subjectKey(subjectKey)
                        .build();
        return new Adapter() {
            @Override
            public void add(List<Item> items) {
                List<String> ids = new ArrayList<>();
                List<Embedding> embeddings = new ArrayList<>();
                List<TextSegment> segments = new ArrayList<>();
                for (Item item : items) {
                    ids.add(item.id());
                    embeddings.add(embedding(item.id()));
                    segments.add(TextSegment.from(item.text(), Metadata.from(item.metadata())));
                }
                s.addAll(ids, embeddings, segments);
            }

            @Override
            public void deleteMatchingNull() {
                s.removeAll((Filter) null);
            }

            @Override
            public void forgetMatchingNull() throws InterruptedException {
                s.forgetMatching(null, "k", "r", WAIT);
            }

            @Override
            public void delete(List<String> ids) {
                s.removeAll(ids);
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

    /**
     * A vector of the collection's dimension, the same for the same id: Gaussian, so two ids'
     * vectors are far apart (a forget's probe would otherwise find the others near the forgotten
     * one).
     */
    private static Embedding embedding(String id) {
        Random rnd = new Random(id.hashCode());
        float[] v = new float[DIM];
        for (int i = 0; i < DIM; i++) {
            v[i] = (float) rnd.nextGaussian();
        }
        return Embedding.from(v);
    }
}
