package dev.nepenthe.embed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Metric;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.SearchRequest;
import dev.nepenthe.core.SourceRef;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A document ingested as chunks in two versions, embedded by the real MiniLM model in a store;
 * forgetting version 1 by its source takes every chunk of that version and no other record (the
 * oracle: the ids the chunker made for each version, looked up one by one, and what every kind of
 * search still returns). One model load for the whole class (the other test loads none).
 */
class ChunkedDocumentForgetTest {

    @TempDir Path tmp;

    private static final String V1 =
            """
            Harbor maintenance schedule. The lighthouse lantern is cleaned every Tuesday by the night crew.

            Quarantine rules for the copper pier: boats from the northern canal wait two days before unloading.

            The invoice ledger for dredging is kept in the harbor master's office, copied weekly to the archive.
            """
                    .repeat(3);

    private static final String V2 =
            """
            Harbor maintenance schedule, revised. The lighthouse lantern is now cleaned on Thursdays by the day crew.

            The copper pier is closed for repairs; boats unload at the granite quay instead.

            Dredging invoices go to the finance team directly and are no longer copied to the archive.
            """
                    .repeat(3);

    private static final String OTHER =
            "Orchard pruning notes: cut the walnut trees in late winter, before the sap rises.";

    @Test
    void forgettingVersionOneOfADocumentTakesAllItsChunksAndOnlyThem() throws Exception {
        // The server's way: the model registered lazily, loaded by the first embedding.
        LazyEmbedder model = LazyEmbedder.miniLm();
        StoreOptions options =
                StoreOptions.defaults().withKeystore(tmp.resolve("keys")).withEmbedder(model);
        Chunker chunker = Chunker.tokens(48, 8);
        SourceRef v1 = new SourceRef("file", "harbor.md", 1);
        SourceRef v2 = new SourceRef("file", "harbor.md", 2);
        SourceRef other = new SourceRef("file", "orchard.md", 1);
        try (Nepenthe store = Nepenthe.open(tmp.resolve("data"), options)) {
            VectorCollection docs =
                    store.createCollection(
                            CollectionSpec.of("docs", MiniLmEmbedder.DIMENSION, Metric.COSINE)
                                    .withTextIndex("english")
                                    .withEmbedder(MiniLmEmbedder.NAME));
            assertFalse(
                    model.isLoaded(),
                    "opening the store and creating the collection loads no model");
            List<VectorRecord> first =
                    chunker.records(v1, VectorRecord.DEFAULT_TENANT, null, V1, null);
            List<VectorRecord> second =
                    chunker.records(v2, VectorRecord.DEFAULT_TENANT, null, V2, null);
            List<VectorRecord> bystander =
                    chunker.records(other, VectorRecord.DEFAULT_TENANT, null, OTHER, null);
            assertTrue(
                    first.size() >= 3 && second.size() >= 3,
                    "both versions should make several chunks: "
                            + first.size()
                            + ", "
                            + second.size());
            List<VectorRecord> all = new ArrayList<>(first);
            all.addAll(second);
            all.addAll(bystander);
            docs.upsertAll(all);
            assertEquals(all.size(), docs.size());
            assertTrue(model.isLoaded());
            // The store embedded every chunk with the collection's model.
            for (VectorRecord r : all) {
                VectorRecord stored = docs.get(r.id()).orElseThrow();
                assertEquals(MiniLmEmbedder.DIMENSION, stored.vector().length, r.id());
                assertEquals(r.text(), stored.text(), r.id());
            }
            // Before: a keyword only version 1 has ("quarantine") finds version 1's chunks.
            assertTrue(
                    ids(docs.search(SearchRequest.keyword("quarantine", 10))).stream()
                            .anyMatch(id -> id.startsWith("file:harbor.md:v1#")));

            ForgetOperation op =
                    store.forget(
                            ForgetRequest.of(
                                    ForgetScope.source("file", "harbor.md", 1),
                                    "chunks-v1",
                                    "retention-expired"));
            ForgetOperation settled = store.awaitOperation(op.id(), Duration.ofSeconds(120));
            // Version 2 says much of what version 1 said, so the verification probe finds v2
            // chunks whose vectors are close to forgotten v1 chunks (cosine above 0.85) and asks
            // for review, as it should: the store cannot tell a newer version from residue.
            assertEquals(
                    OperationState.NEEDS_REVIEW,
                    settled.state(),
                    settled.note() + " " + settled.suspects());
            assertFalse(settled.suspects().isEmpty());
            assertEquals(Integer.valueOf(first.size()), settled.recordsForgotten().get("docs"));
            for (Suspect s : settled.suspects()) {
                assertTrue(
                        s.recordId().startsWith("file:harbor.md:v2#")
                                && s.relatedTo().startsWith("file:harbor.md:v1#"),
                        s.toString());
            }
            assertTrue(
                    settled.surfaces().stream().allMatch(SurfaceOutcome::clean),
                    settled.surfaces().toString());
            // The operator judges them the newer version, not residue, and the forget seals.
            ForgetOperation done = store.override(op.id(), "newer-version-kept");
            assertEquals(OperationState.SEALED, done.state(), String.valueOf(done.note()));
            for (VectorRecord r : first) {
                assertTrue(docs.get(r.id()).isEmpty(), r.id() + " survived the forget");
            }
            for (VectorRecord r : second) {
                assertEquals(
                        r.text(),
                        docs.get(r.id())
                                .orElseThrow(() -> new AssertionError(r.id() + " was lost"))
                                .text());
            }
            assertTrue(docs.get(bystander.get(0).id()).isPresent());
            assertEquals(second.size() + bystander.size(), docs.size());

            Set<String> survivors = new HashSet<>(ids(second));
            survivors.addAll(ids(bystander));
            // No search of any kind returns a forgotten chunk; each still finds the survivors.
            for (SearchRequest q :
                    List.of(
                            SearchRequest.keyword("quarantine lighthouse invoice", 50),
                            SearchRequest.semantic("when is the lighthouse lantern cleaned", 50),
                            SearchRequest.hybrid("lighthouse lantern cleaning crew", 50))) {
                List<String> found = ids(docs.search(q));
                assertFalse(found.isEmpty(), q.toString());
                assertTrue(survivors.containsAll(found), q + " returned " + found);
            }
        }
    }

    @Test
    void aLazyEmbedderRefusesAModelOfAnotherNameOrDimension() {
        // The inner embedders are lazy too, so nothing here loads a model.
        LazyEmbedder renamed =
                new LazyEmbedder(
                        MiniLmEmbedder.NAME,
                        MiniLmEmbedder.DIMENSION,
                        () ->
                                new LazyEmbedder(
                                        "another-model",
                                        MiniLmEmbedder.DIMENSION,
                                        MiniLmEmbedder::new));
        IllegalStateException name =
                org.junit.jupiter.api.Assertions.assertThrows(
                        IllegalStateException.class, () -> renamed.embed("x"));
        assertEquals(
                "lazy embedder: expected 'all-minilm-l6-v2' of dimension 384, the loader made"
                        + " 'another-model' of dimension 384",
                name.getMessage());
        LazyEmbedder narrower =
                new LazyEmbedder(
                        MiniLmEmbedder.NAME,
                        MiniLmEmbedder.DIMENSION,
                        () -> new LazyEmbedder(MiniLmEmbedder.NAME, 128, MiniLmEmbedder::new));
        org.junit.jupiter.api.Assertions.assertThrows(
                IllegalStateException.class, () -> narrower.embedAll(List.of("x")));
        assertFalse(renamed.isLoaded() || narrower.isLoaded());
        org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class,
                () -> new LazyEmbedder("m", 0, MiniLmEmbedder::new));
    }

    private static List<String> ids(List<?> hitsOrRecords) {
        List<String> out = new ArrayList<>();
        for (Object o : hitsOrRecords) {
            out.add(o instanceof SearchHit h ? h.id() : ((VectorRecord) o).id());
        }
        return out;
    }
}
