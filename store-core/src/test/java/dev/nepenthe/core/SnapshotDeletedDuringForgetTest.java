package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.testing.Datasets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator deleting an old snapshot while a forget purges it (found by the soak, issue 47: the
 * forget stopped in CLEANUP on a NoSuchFileException and the store went read-only). The state a
 * deletion caught halfway leaves, the copy's segment files gone and its manifest still naming them,
 * is set up here: the forget must seal, the store keep taking writes, and the snapshots surface
 * scan what is left of the copy and find nothing of the forgotten records.
 */
class SnapshotDeletedDuringForgetTest {

    private static final int DIM = 8;

    @Test
    void aSnapshotHalfDeletedUnderAForgetIsNotAFailedWrite(@TempDir Path tmp) throws Exception {
        try (Nepenthe store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")))) {
            VectorCollection c =
                    store.createCollection(CollectionSpec.of("notes", DIM, Metric.COSINE));
            List<VectorRecord> batch = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                batch.add(
                        VectorRecord.builder("a" + i)
                                .subject("alice")
                                .vector(Datasets.gaussian(100 + i, DIM))
                                .build());
                batch.add(
                        VectorRecord.builder("b" + i)
                                .subject("bob")
                                .vector(Datasets.gaussian(200 + i, DIM))
                                .build());
            }
            c.upsertAll(batch);
            Path snapshot = tmp.resolve("snap");
            store.snapshot(snapshot);
            Path segments = snapshot.resolve("collections").resolve("notes").resolve("segments");
            int deleted = 0;
            try (Stream<Path> files = Files.list(segments)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                    deleted++;
                }
            }
            assertTrue(deleted > 0, "the snapshot had segment files to delete");

            ForgetOperation done =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject("alice"),
                                                    "req-a",
                                                    "gdpr-art17"))
                                    .id(),
                            Duration.ofSeconds(60));
            assertEquals(OperationState.SEALED, done.state(), done.note());
            assertTrue(
                    store.health().writesAccepted(),
                    "the store stays writable: " + store.health().writeProblem());
            SurfaceOutcome s =
                    done.surfaces().stream()
                            .filter(o -> o.surface().equals("snapshots"))
                            .findFirst()
                            .orElseThrow();
            assertTrue(s.clean(), s.toString());
            c.upsert(
                    VectorRecord.builder("b9")
                            .subject("bob")
                            .vector(Datasets.gaussian(209, DIM))
                            .build());
            assertEquals(4, c.size(VectorRecord.DEFAULT_TENANT), "bob's three and the new one");
        }
    }
}
