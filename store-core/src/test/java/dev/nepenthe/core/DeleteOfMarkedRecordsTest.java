package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A delete never reaches a record a forget or a legal hold has marked: a get no longer finds it, so
 * a delete counting it would claim what the forget does (the anomaly the cluster's history test
 * found: a delete after a forget returned counted the records the forget's cleanup had not yet
 * removed), and deleting a held record would break the hold. The hold keeps the forget from
 * finishing, so the marked records are there, deterministically, when the delete comes.
 */
class DeleteOfMarkedRecordsTest {

    @TempDir Path tmp;

    @Test
    void aDeleteOfHeldRecordsDeletesAndCountsNoneAndTheForgetStillFindsThem() throws Exception {
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection notes =
                    store.createCollection(CollectionSpec.of("notes", 2, Metric.COSINE));
            List<String> ids = new ArrayList<>();
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                ids.add("a" + i);
                batch.add(
                        VectorRecord.builder("a" + i)
                                .subject("alice")
                                .vector(new float[] {1f, i / 100f})
                                .build());
            }
            batch.add(
                    VectorRecord.builder("b0").subject("bob").vector(new float[] {0f, 1f}).build());
            notes.upsertAll(batch);

            LegalHold hold =
                    store.placeHold(
                            VectorRecord.DEFAULT_TENANT,
                            ForgetScope.subject("alice"),
                            "litigation");
            ForgetOperation op =
                    store.forget(
                            ForgetRequest.of(ForgetScope.subject("alice"), "k1", "gdpr-art17"));
            ForgetOperation held = store.awaitOperation(op.id(), Duration.ofSeconds(30));
            assertEquals(OperationState.COMPLETED_WITH_EXCEPTION, held.state());
            assertTrue(notes.get("a0").isEmpty(), "a held, forgotten record is not served");

            List<String> asked = new ArrayList<>(ids);
            asked.add("b0");
            assertEquals(1, notes.deleteAll(VectorRecord.DEFAULT_TENANT, asked), "only bob's");
            assertEquals(0, notes.deleteAll(VectorRecord.DEFAULT_TENANT, ids));

            store.liftHold(hold.id());
            ForgetOperation sealed = store.awaitOperation(op.id(), Duration.ofSeconds(30));
            assertEquals(OperationState.SEALED, sealed.state());
            assertEquals(20, sealed.totalForgotten(), "the forget found all twenty still there");
        }
    }
}
