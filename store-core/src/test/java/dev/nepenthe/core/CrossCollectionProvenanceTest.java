package dev.nepenthe.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenScopeException;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.forget.Suspect;
import dev.nepenthe.core.index.IntegrityReport;
import dev.nepenthe.testing.Datasets;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Provenance across collections: a {@code derivedFrom} entry {@code "@<collection>/<id>"} names a
 * record in another collection of the tenant, and a forget follows it there, removes the derived
 * record from that collection's index, text index and files, and proves each of those surfaces on
 * the receipt. Oracles: get, vector and keyword search, each collection's integrity checker, the
 * receipt's surfaces, and the write fence.
 */
class CrossCollectionProvenanceTest {

    @TempDir Path tmp;

    private static final int DIM = 16;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String T = VectorRecord.DEFAULT_TENANT;

    private Nepenthe open() throws IOException {
        return Nepenthe.open(
                tmp.resolve("data"), StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
    }

    private static float[] vector(long seed) {
        return Datasets.gaussian(seed, DIM);
    }

    private static CollectionSpec spec(String name) {
        return CollectionSpec.of(name, DIM, Metric.COSINE).withTextIndex("standard");
    }

    private static List<String> ids(List<SearchHit> hits) {
        return hits.stream().map(SearchHit::id).toList();
    }

    private static void assertClean(VectorCollection c) {
        for (IntegrityReport r : c.verifyIntegrity().values()) {
            assertTrue(r.isClean(), r.toString());
        }
    }

    private static ForgetOperation forget(Nepenthe store, ForgetScope scope, String key)
            throws InterruptedException {
        return store.awaitOperation(
                store.forget(ForgetRequest.of(scope, key, "gdpr-art17")).id(), WAIT);
    }

    /** Alice's notes (a0, a1) and bob's (b0) in "notes"; summaries of them in "summaries". */
    private static void populate(Nepenthe store) {
        VectorCollection notes = store.createCollection(spec("notes"));
        notes.upsertAll(
                List.of(
                        VectorRecord.builder("a0")
                                .subject("alice")
                                .vector(vector(100))
                                .text("alice visited lisbon")
                                .build(),
                        VectorRecord.builder("a1")
                                .subject("alice")
                                .vector(vector(101))
                                .text("alice paid invoice")
                                .build(),
                        VectorRecord.builder("b0")
                                .subject("bob")
                                .vector(vector(200))
                                .text("bob note")
                                .build()));
        VectorCollection summaries = store.createCollection(spec("summaries"));
        summaries.upsertAll(
                List.of(
                        VectorRecord.builder("s-alice")
                                .vector(vector(400))
                                .text("zanzibarquartz summary of her travels")
                                .derivedFromRecordIn("notes", "a0")
                                .derivedFrom("@notes/a1")
                                .build(),
                        // Within "summaries", a plain id: the chain goes on from the
                        // cross-collection link.
                        VectorRecord.builder("s-of-s")
                                .vector(vector(401))
                                .derivedFrom("s-alice")
                                .build(),
                        VectorRecord.builder("s-bob")
                                .vector(vector(402))
                                .text("bob summary")
                                .derivedFrom("@notes/b0")
                                .build()));
    }

    @Test
    void
            forgettingASourceInOneCollectionRemovesItsDerivativesInAnotherAndProvesThatCollectionsSurfaces()
                    throws Exception {
        ForgetOperation done;
        try (Nepenthe store = open()) {
            populate(store);
            VectorCollection summaries = store.collection("summaries");
            // Before: the derived record is found by id, vector and keyword.
            assertEquals(
                    List.of("s-alice"),
                    ids(summaries.search(SearchRequest.keyword("zanzibarquartz", 3))));
            done = forget(store, ForgetScope.subject("alice"), "req-1");
            assertEquals(OperationState.SEALED, done.state(), done.note() + " " + done.suspects());
            assertEquals(Map.of("notes", 2, "summaries", 2), done.recordsForgotten());
            assertTrue(summaries.get("s-alice").isEmpty());
            assertTrue(summaries.get("s-of-s").isEmpty());
            assertTrue(summaries.get("s-bob").isPresent());
            assertEquals(
                    List.of(), ids(summaries.search(SearchRequest.keyword("zanzibarquartz", 3))));
            assertFalse(
                    ids(summaries.search(SearchRequest.of(vector(400), 3))).contains("s-alice"));
            assertEquals(List.of("s-bob"), summaries.ids(T));
            assertClean(summaries);
            assertClean(store.collection("notes"));
            // The other collection's surfaces were proven and are on the receipt, each clean.
            for (String surface :
                    List.of(
                            "collection:summaries/index:exact",
                            "collection:summaries/storage",
                            "collection:summaries/text")) {
                SurfaceOutcome s =
                        done.surfaces().stream()
                                .filter(o -> o.surface().equals(surface))
                                .findFirst()
                                .orElseThrow(
                                        () ->
                                                new AssertionError(
                                                        surface
                                                                + " missing from "
                                                                + done.surfaces()));
                assertTrue(s.clean(), s.toString());
                assertTrue(s.checked() > 0, s + ": checked, not skipped");
                assertTrue(done.receipt().contains("\"name\":\"" + surface + "\""), surface);
            }
            SurfaceOutcome text =
                    done.surfaces().stream()
                            .filter(o -> o.surface().equals("collection:summaries/text"))
                            .findFirst()
                            .orElseThrow();
            assertEquals(
                    1,
                    text.purged(),
                    "the one derived record with text had its document merged away");
            // A later derivative of a forgotten source in another collection is refused.
            ForgottenScopeException e =
                    assertThrows(
                            ForgottenScopeException.class,
                            () ->
                                    summaries.upsert(
                                            VectorRecord.builder("late")
                                                    .vector(vector(403))
                                                    .derivedFromRecordIn("notes", "a1")
                                                    .build()));
            assertEquals(done.id(), e.operationId());
            assertTrue(store.verifyLedger().ok());
        }
        try (Nepenthe store = open()) {
            VectorCollection summaries = store.collection("summaries");
            assertTrue(summaries.get("s-alice").isEmpty());
            assertEquals(
                    List.of(), ids(summaries.search(SearchRequest.keyword("zanzibarquartz", 3))));
            assertEquals(0, store.reconciliation().resurrectedRemoved());
        }
    }

    /**
     * A chain that leaves a collection and comes back: "zeta" holds the subject's record, "alpha"
     * derives from it, "zeta" derives from that, and "alpha" again from the last. The collections
     * are visited in name order, so "alpha" is resolved before "zeta" has removed anything: the
     * closure needs further passes, and takes exactly the chain, not its neighbours.
     */
    @Test
    void aChainFromACollectionToAnotherAndBackIsFollowedToItsEnd() throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection zeta = store.createCollection(spec("zeta"));
            VectorCollection alpha = store.createCollection(spec("alpha"));
            zeta.upsert(VectorRecord.builder("z0").subject("alice").vector(vector(100)).build());
            zeta.upsert(VectorRecord.builder("z-bob").subject("bob").vector(vector(101)).build());
            alpha.upsert(
                    VectorRecord.builder("a-sum")
                            .vector(vector(102))
                            .derivedFromRecordIn("zeta", "z0")
                            .build());
            zeta.upsert(
                    VectorRecord.builder("z-back")
                            .vector(vector(103))
                            .derivedFromRecordIn("alpha", "a-sum")
                            .build());
            zeta.upsert(
                    VectorRecord.builder("z-next")
                            .vector(vector(104))
                            .derivedFrom("z-back")
                            .build());
            alpha.upsert(
                    VectorRecord.builder("a-end")
                            .vector(vector(105))
                            .derivedFrom("@zeta/z-next")
                            .build());
            // Neighbours that name the same ids in the wrong collection are not in the chain.
            alpha.upsert(
                    VectorRecord.builder("a-other").vector(vector(106)).derivedFrom("z0").build());
            zeta.upsert(
                    VectorRecord.builder("z-other")
                            .vector(vector(107))
                            .derivedFrom("@alpha/z-back")
                            .build());
            ForgetOperation done = forget(store, ForgetScope.subject("alice"), "req-2");
            assertEquals(OperationState.SEALED, done.state(), done.note() + " " + done.suspects());
            assertEquals(Map.of("zeta", 3, "alpha", 2), done.recordsForgotten());
            for (String id : List.of("z0", "z-back", "z-next")) {
                assertTrue(zeta.get(id).isEmpty(), id);
            }
            for (String id : List.of("a-sum", "a-end")) {
                assertTrue(alpha.get(id).isEmpty(), id);
            }
            assertTrue(zeta.get("z-bob").isPresent());
            assertTrue(zeta.get("z-other").isPresent());
            assertTrue(alpha.get("a-other").isPresent());
            assertClean(zeta);
            assertClean(alpha);
        }
    }

    @Test
    void aCrossTenantReferenceIsRefusedAndMalformedReferencesSayWhatWasExpected() throws Exception {
        try (Nepenthe store = open()) {
            populate(store);
            VectorCollection summaries = store.collection("summaries");
            IllegalArgumentException crossTenant =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    summaries.upsert(
                                            VectorRecord.builder("x")
                                                    .tenant("acme")
                                                    .vector(vector(500))
                                                    .derivedFrom("@globex:notes/a0")
                                                    .build()));
            assertTrue(
                    crossTenant
                            .getMessage()
                            .contains("expected a record of the record's own tenant"),
                    crossTenant.getMessage());
            assertTrue(
                    crossTenant.getMessage().contains("got a reference naming a tenant"),
                    crossTenant.getMessage());
            assertThrows(
                    IllegalArgumentException.class,
                    () -> VectorRecord.builder("x").derivedFromRecordIn("globex:notes", "a0"));
            Map<String, String> malformed =
                    Map.of(
                            "@notes", "got '@' and no '/'",
                            "@/a0", "got no collection name between '@' and '/'",
                            "@no tes/a0",
                                    "got a collection name of 6 characters holding other"
                                            + " characters",
                            "@notes/ ", "got no id after '@notes/'");
            malformed.forEach(
                    (entry, got) -> {
                        IllegalArgumentException e =
                                assertThrows(
                                        IllegalArgumentException.class,
                                        () ->
                                                summaries.upsertAll(
                                                        List.of(
                                                                VectorRecord.builder("ok")
                                                                        .vector(vector(501))
                                                                        .build(),
                                                                VectorRecord.builder("bad")
                                                                        .vector(vector(502))
                                                                        .derivedFrom("a0", entry)
                                                                        .build())));
                        assertTrue(
                                e.getMessage()
                                        .startsWith(
                                                "record 1 of the batch: derivedFrom[1] expected a"
                                                        + " record id, or '@<collection>/<id>'"),
                                e.getMessage());
                        assertTrue(e.getMessage().endsWith(got), entry + ": " + e.getMessage());
                    });
            assertTrue(summaries.get("ok").isEmpty(), "a refused batch stores nothing");

            // The same ids in another tenant: a forget in one tenant never follows a reference into
            // the other, though the reference reads the same.
            VectorCollection notes = store.collection("notes");
            notes.upsert(
                    VectorRecord.builder("a0")
                            .tenant("globex")
                            .subject("alice")
                            .vector(vector(600))
                            .build());
            summaries.upsert(
                    VectorRecord.builder("g-sum")
                            .tenant("globex")
                            .vector(vector(601))
                            .derivedFrom("@notes/a0")
                            .build());
            ForgetOperation done = forget(store, ForgetScope.subject("alice"), "req-3");
            assertEquals(OperationState.SEALED, done.state(), done.note());
            assertEquals(Map.of("notes", 2, "summaries", 2), done.recordsForgotten());
            assertTrue(summaries.get("globex", "g-sum").isPresent());
            assertTrue(notes.get("globex", "a0").isPresent());
            ForgetOperation inGlobex =
                    store.awaitOperation(
                            store.forget(
                                            ForgetRequest.of(
                                                            ForgetScope.subject("alice"),
                                                            "req-4",
                                                            "gdpr-art17")
                                                    .inTenant("globex"))
                                    .id(),
                            WAIT);
            assertEquals(Map.of("notes", 1, "summaries", 1), inGlobex.recordsForgotten());
            assertTrue(summaries.get("globex", "g-sum").isEmpty());
        }
    }

    @Test
    void underARegeneratePolicyADerivativeInAnotherCollectionIsHeldWithItsSurvivingSources()
            throws Exception {
        try (Nepenthe store = open()) {
            VectorCollection notes = store.createCollection(spec("notes"));
            notes.upsertAll(
                    List.of(
                            VectorRecord.builder("a0").subject("alice").vector(vector(100)).build(),
                            VectorRecord.builder("b0").subject("bob").vector(vector(200)).build()));
            VectorCollection digests =
                    store.createCollection(
                            spec("digests").withProvenance(CollectionSpec.Provenance.REGENERATE));
            digests.upsert(
                    VectorRecord.builder("d0")
                            .vector(vector(300))
                            .derivedFrom("@notes/a0", "@notes/b0")
                            .build());
            ForgetOperation review = forget(store, ForgetScope.subject("alice"), "req-5");
            assertEquals(OperationState.NEEDS_REVIEW, review.state());
            assertEquals(
                    List.of(
                            new Suspect(
                                    "regeneration-required",
                                    "digests",
                                    "d0",
                                    Double.NaN,
                                    "@notes/a0; surviving sources: @notes/b0")),
                    review.suspects());
            assertTrue(digests.get("d0").isEmpty(), "blocked while it awaits regeneration");
            assertThrows(
                    IllegalStateException.class, () -> store.override(review.id(), "not-residue"));
            digests.upsert(
                    VectorRecord.builder("d1")
                            .vector(vector(301))
                            .derivedFromRecordIn("notes", "b0")
                            .build());
            assertTrue(digests.delete("d0"));
            store.reverify(review.id());
            ForgetOperation sealed = store.awaitOperation(review.id(), WAIT);
            assertEquals(OperationState.SEALED, sealed.state(), sealed.note());
            assertNotEquals(null, sealed.receipt());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"cleanup-before-delete", "cleanup-after-delete"})
    void aCleanupStoppedMidwayResumesTheCascadeIntoTheOtherCollection(String point)
            throws Exception {
        String opId;
        try (Nepenthe store = open()) {
            populate(store);
            store.testPoints().stopForgetAt(point);
            opId =
                    store.forget(
                                    ForgetRequest.of(
                                            ForgetScope.subject("alice"), "req-6", "gdpr-art17"))
                            .id();
            ForgetOperation stopped = store.awaitOperation(opId, WAIT);
            assertNotEquals(OperationState.SEALED, stopped.state());
            store.testPoints().stopForgetAt(null);
        }
        try (Nepenthe store = open()) {
            ForgetOperation done = store.awaitOperation(opId, WAIT);
            assertEquals(OperationState.SEALED, done.state(), point + ": " + done.note());
            assertEquals(Map.of("notes", 2, "summaries", 2), done.recordsForgotten(), point);
            VectorCollection summaries = store.collection("summaries");
            assertTrue(summaries.get("s-alice").isEmpty());
            assertTrue(summaries.get("s-of-s").isEmpty());
            assertEquals(
                    List.of(), ids(summaries.search(SearchRequest.keyword("zanzibarquartz", 3))));
            assertClean(summaries);
        }
    }
}
