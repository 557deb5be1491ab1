package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.HeldRecordsException;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A legal hold keeps its records against every plain delete (by id, by subject, a collection drop)
 * and against a replacement, with or without a forget waiting on it, across a restart, and only in
 * its own tenant; lifting it lets the deletes and the waiting forget through. The oracle is the
 * record count and a get of each record, before and after.
 */
class LegalHoldDeleteTest {

    private static final int DIM = 8;
    private static final String HELD = "held-subject-9c1e";
    private static final String TENANT = VectorRecord.DEFAULT_TENANT;
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir Path tmp;

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    /** h0..h2 of the held subject, f0..f1 of a free one, s0 of nobody from source doc/d1. */
    private static VectorCollection populate(Nepenthe store, String name) {
        VectorCollection c = store.createCollection(CollectionSpec.of(name, DIM, Metric.COSINE));
        List<VectorRecord> batch = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            batch.add(
                    VectorRecord.builder("h" + i)
                            .subject(HELD)
                            .vector(Datasets.gaussian(10 + i, DIM))
                            .build());
        }
        for (int i = 0; i < 2; i++) {
            batch.add(
                    VectorRecord.builder("f" + i)
                            .subject("free")
                            .vector(Datasets.gaussian(20 + i, DIM))
                            .build());
        }
        batch.add(
                VectorRecord.builder("s0")
                        .source("doc", "d1", 1)
                        .vector(Datasets.gaussian(30, DIM))
                        .build());
        c.upsertAll(batch);
        return c;
    }

    private static void assertPresent(VectorCollection c, String... ids) {
        for (String id : ids) {
            assertTrue(c.get(id).isPresent(), id + " must still be stored");
        }
    }

    private static void assertNamesNoRecord(HeldRecordsException e) {
        assertFalse(e.getMessage().contains(HELD), e.getMessage());
        assertFalse(e.getMessage().contains("h0"), e.getMessage());
    }

    @Test
    void aHoldOnASubjectRefusesEveryPlainDeleteOfItWhole() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, "notes");
            LegalHold hold = store.placeHold(TENANT, ForgetScope.subject(HELD), "litigation-1");

            HeldRecordsException byId =
                    assertThrows(
                            HeldRecordsException.class,
                            () -> c.deleteAll(TENANT, List.of("f0", "h1")));
            assertEquals(List.of(hold.id()), byId.holds());
            assertTrue(byId.getMessage().contains("1 of the records"), byId.getMessage());
            assertNamesNoRecord(byId);
            assertPresent(c, "f0", "h1"); // refused whole: the free record stays too

            HeldRecordsException bySubject =
                    assertThrows(HeldRecordsException.class, () -> c.deleteSubject(TENANT, HELD));
            assertNamesNoRecord(bySubject);
            assertThrows(HeldRecordsException.class, () -> store.dropCollection("notes"));
            assertEquals(6, c.size());
            assertPresent(c, "h0", "h1", "h2");

            // A replacement would lose the held version as a delete would: refused, whole.
            float[] before = c.get("h2").orElseThrow().vector();
            float[] freeBefore = c.get("f1").orElseThrow().vector();
            assertThrows(
                    HeldRecordsException.class,
                    () ->
                            c.upsertAll(
                                    List.of(
                                            VectorRecord.builder("f1")
                                                    .subject("free")
                                                    .vector(Datasets.gaussian(50, DIM))
                                                    .build(),
                                            VectorRecord.builder("h2")
                                                    .subject(HELD)
                                                    .vector(Datasets.gaussian(51, DIM))
                                                    .build())));
            assertArrayEquals(before, c.get("h2").orElseThrow().vector());
            assertArrayEquals(freeBefore, c.get("f1").orElseThrow().vector());
            // A new record of the held subject is no loss: taken.
            c.upsert(
                    VectorRecord.builder("h3")
                            .subject(HELD)
                            .vector(Datasets.gaussian(52, DIM))
                            .build());
            assertEquals(7, c.size());
            assertThrows(HeldRecordsException.class, () -> c.deleteAll(TENANT, List.of("h3")));

            // Control: records the hold does not name delete as before.
            assertEquals(1, c.deleteAll(TENANT, List.of("f0")));
            assertEquals(1, c.deleteSubject(TENANT, "free"));
            assertEquals(5, c.size());
        }
    }

    @Test
    void aHoldOnAnEmptySubjectStillKeepsItsKey() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, "notes");
            store.placeHold(TENANT, ForgetScope.subject("nobody-yet"), "litigation-2");
            // No record, but deleteSubject would destroy the subject's key: refused all the same.
            assertThrows(HeldRecordsException.class, () -> c.deleteSubject(TENANT, "nobody-yet"));
            assertEquals(0, c.deleteSubject(TENANT, "other-nobody"));
        }
    }

    @Test
    void aHoldOnASourceKeepsItsRecordsAndStaysInItsTenant() throws IOException {
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, "notes");
            c.upsert(
                    VectorRecord.builder("h0")
                            .tenant("other")
                            .subject(HELD)
                            .vector(Datasets.gaussian(40, DIM))
                            .build());
            store.placeHold(TENANT, ForgetScope.source("doc", "d1"), "litigation-3");
            store.placeHold("other", ForgetScope.subject("someone-else"), "litigation-4");
            assertThrows(HeldRecordsException.class, () -> c.deleteAll(TENANT, List.of("s0")));
            assertPresent(c, "s0");
            // The hold names the default tenant's source; the other tenant's records go.
            assertEquals(1, c.deleteAll("other", List.of("h0")));
            assertEquals(3, c.deleteSubject(TENANT, HELD));
        }
    }

    @Test
    void aForgetWaitingOnAHoldKeepsItsRecordsUntilTheHoldLifts() throws Exception {
        String holdId;
        String opId;
        try (Nepenthe store = open()) {
            VectorCollection c = populate(store, "notes");
            holdId = store.placeHold(TENANT, ForgetScope.subject(HELD), "litigation-5").id();
            ForgetOperation held =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                    ForgetScope.subject(HELD),
                                                    "req-held",
                                                    "gdpr-art17"))
                                    .id(),
                            WAIT);
            opId = held.id();
            assertEquals(OperationState.COMPLETED_WITH_EXCEPTION, held.state());
            assertThrows(
                    HeldRecordsException.class,
                    () -> c.deleteAll(TENANT, List.of("h0", "h1", "h2")));
        }
        try (Nepenthe store = open()) {
            VectorCollection c = store.collection("notes");
            // The holds are known again before anything is served after a restart.
            assertThrows(HeldRecordsException.class, () -> c.deleteAll(TENANT, List.of("h2")));
            assertThrows(HeldRecordsException.class, () -> store.dropCollection("notes"));
            store.liftHold(holdId);
            ForgetOperation sealed = store.awaitOperation(opId, WAIT);
            assertEquals(OperationState.SEALED, sealed.state(), sealed.note());
            // The forget found every held record still there, and removed them.
            assertEquals(3, sealed.recordsForgotten().get("notes"));
            assertEquals(3, c.size());
            assertTrue(store.dropCollection("notes"));
        }
    }
}
