package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreOptions;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.internal.evidence.SigningKey;
import dev.nepenthe.grpc.v1.CollectionSpec;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.DeleteRequest;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.DropCollectionRequest;
import dev.nepenthe.grpc.v1.Filter;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.LedgerVerification;
import dev.nepenthe.grpc.v1.LiftHoldRequest;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.grpc.v1.ListHoldsRequest;
import dev.nepenthe.grpc.v1.Metric;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.PlaceHoldRequest;
import dev.nepenthe.grpc.v1.PublicKeyRequest;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchMode;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.SearchResponse;
import dev.nepenthe.grpc.v1.SnapshotRequest;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.UpsertResponse;
import dev.nepenthe.grpc.v1.Value;
import dev.nepenthe.grpc.v1.VerifyLedgerRequest;
import dev.nepenthe.grpc.v1.VerifyReceiptRequest;
import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every call of the gRPC API against a real store, in process: what each returns checked against
 * the store itself (the oracle), each error status the API promises, and the tenant wall (a token
 * of one tenant can neither see, search nor forget another's records, nor tell whether they exist).
 */
class GrpcServerTest {

    private static final int DIM = 4;

    @TempDir Path tmp;

    private Nepenthe store;
    private NepentheServer server;
    private ManagedChannel channel;
    private String operatorToken;
    private String acmeToken;
    private String globexToken;

    @BeforeEach
    void start() throws IOException {
        store =
                Nepenthe.open(
                        tmp.resolve("data"),
                        StoreOptions.defaults().withKeystore(tmp.resolve("keys")));
        operatorToken = Tokens.newToken();
        acmeToken = Tokens.newToken();
        globexToken = Tokens.newToken();
        Path tokens = tmp.resolve("tokens.conf");
        Tokens.writeOwnerOnly(
                tokens,
                "# test tokens\n"
                        + Tokens.line(operatorToken, "ops", true)
                        + "\n"
                        + Tokens.line(acmeToken, "acme", false)
                        + "\n"
                        + Tokens.line(globexToken, "globex", false)
                        + "\n");
        String name = "nepenthe-test-" + System.nanoTime();
        Limits limits =
                new Limits(
                        1 << 20,
                        50,
                        100,
                        1000,
                        64,
                        2,
                        5,
                        1000,
                        1L << 20,
                        Limits.Calls.DEFAULTS,
                        Limits.Queries.DEFAULTS);
        SnapshotFolders folders =
                SnapshotFolders.of(
                        List.of(tmp.resolve("snaps")), tmp.resolve("data"), tmp.resolve("keys"));
        Tokens read = Tokens.read(tokens);
        server =
                NepentheServer.start(
                        InProcessServerBuilder.forName(name),
                        store,
                        () -> read,
                        limits,
                        folders,
                        true);
        channel = InProcessChannelBuilder.forName(name).build();
    }

    @AfterEach
    void stop() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    private static CallCredentials bearer(String token) {
        return new CallCredentials() {
            @Override
            public void applyRequestMetadata(
                    RequestInfo info, Executor executor, MetadataApplier applier) {
                Metadata m = new Metadata();
                m.put(AuthInterceptor.AUTHORIZATION, "Bearer " + token);
                applier.apply(m);
            }
        };
    }

    private CollectionsGrpc.CollectionsBlockingStub collections(String token) {
        return CollectionsGrpc.newBlockingStub(channel).withCallCredentials(bearer(token));
    }

    private RecordsGrpc.RecordsBlockingStub records(String token) {
        return RecordsGrpc.newBlockingStub(channel).withCallCredentials(bearer(token));
    }

    private ForgetGrpc.ForgetBlockingStub forget(String token) {
        return ForgetGrpc.newBlockingStub(channel).withCallCredentials(bearer(token));
    }

    private void createNotes() {
        collections(operatorToken)
                .create(
                        CreateCollectionRequest.newBuilder()
                                .setSpec(
                                        CollectionSpec.newBuilder()
                                                .setName("notes")
                                                .setDimension(DIM)
                                                .setMetric(Metric.COSINE))
                                .build());
    }

    private static Record rec(String id, String subject, float... v) {
        Record.Builder b =
                Record.newBuilder()
                        .setId(id)
                        .setSubject(subject)
                        .putMetadata(
                                "lang",
                                Value.newBuilder()
                                        .setStringValue(id.startsWith("f") ? "fr" : "en")
                                        .build());
        for (float x : v) {
            b.addVector(x);
        }
        return b.build();
    }

    private static SearchRequest query(int k, float... v) {
        SearchRequest.Builder b = SearchRequest.newBuilder().setCollection("notes").setK(k);
        for (float x : v) {
            b.addVector(x);
        }
        return b.build();
    }

    private static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    private static StatusRuntimeException failure(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run);
    }

    @Test
    void collectionsRecordsAndSearchMatchTheStore() {
        createNotes();
        assertEquals(
                List.of("notes"),
                collections(acmeToken)
                        .list(ListCollectionsRequest.getDefaultInstance())
                        .getCollectionsList()
                        .stream()
                        .map(CollectionSpec::getName)
                        .toList());
        UpsertResponse up =
                records(acmeToken)
                        .upsert(
                                UpsertRequest.newBuilder()
                                        .setCollection("notes")
                                        .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                        .addRecords(rec("a2", "alice", 0.9f, 0.1f, 0, 0))
                                        .addRecords(rec("b1", "bob", 0, 1, 0, 0))
                                        .addRecords(rec("f1", "bob", 0, 0, 1, 0))
                                        .build());
        assertEquals(4, up.getUpserted());
        assertEquals(4, store.collection("notes").size("acme"), "stored under the caller's tenant");
        assertEquals(
                4,
                collections(acmeToken)
                        .describe(DescribeCollectionRequest.newBuilder().setName("notes").build())
                        .getSize());

        // Oracle: the embedded store's own search for the same query in the same tenant.
        SearchResponse hits = records(acmeToken).search(query(3, 1, 0.05f, 0, 0));
        List<String> expected =
                store
                        .collection("notes")
                        .search(
                                dev.nepenthe.core.SearchRequest.of(new float[] {1, 0.05f, 0, 0}, 3)
                                        .tenant("acme"))
                        .stream()
                        .map(h -> h.record().id())
                        .toList();
        assertEquals(
                expected, hits.getHitsList().stream().map(h -> h.getRecord().getId()).toList());
        assertEquals("alice", hits.getHits(0).getRecord().getSubject());
        assertEquals(
                0, hits.getHits(0).getRecord().getVectorCount(), "vectors only when asked for");
        assertEquals(
                List.of(1f, 0f, 0f, 0f),
                records(acmeToken)
                        .search(
                                query(1, 1, 0.05f, 0, 0).toBuilder()
                                        .setIncludeVectors(true)
                                        .build())
                        .getHits(0)
                        .getRecord()
                        .getVectorList());

        SearchResponse fr =
                records(acmeToken)
                        .search(
                                query(3, 1, 0.05f, 0, 0).toBuilder()
                                        .setFilter(
                                                Filter.newBuilder()
                                                        .setEq(
                                                                Filter.Eq.newBuilder()
                                                                        .setKey("lang")
                                                                        .setValue(
                                                                                Value.newBuilder()
                                                                                        .setStringValue(
                                                                                                "fr"))))
                                        .build());
        assertEquals(
                List.of("f1"), fr.getHitsList().stream().map(h -> h.getRecord().getId()).toList());
        SearchResponse close =
                records(acmeToken)
                        .search(query(3, 1, 0.05f, 0, 0).toBuilder().setMinScore(0.9f).build());
        assertEquals(
                List.of("a1", "a2"),
                close.getHitsList().stream().map(h -> h.getRecord().getId()).toList());

        assertEquals(
                "b1",
                records(acmeToken)
                        .get(GetRequest.newBuilder().setCollection("notes").setId("b1").build())
                        .getRecord()
                        .getId());
        assertEquals(
                1,
                records(acmeToken)
                        .delete(
                                DeleteRequest.newBuilder()
                                        .setCollection("notes")
                                        .addIds("b1")
                                        .addIds("nope")
                                        .build())
                        .getDeleted());
        assertEquals(
                Status.Code.NOT_FOUND,
                code(
                        () ->
                                records(acmeToken)
                                        .get(
                                                GetRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .setId("b1")
                                                        .build())));
        assertTrue(
                collections(operatorToken)
                        .drop(DropCollectionRequest.newBuilder().setName("notes").build())
                        .getDropped());
        assertEquals(
                Status.Code.NOT_FOUND, code(() -> records(acmeToken).search(query(3, 1, 0, 0, 0))));
    }

    @Test
    void bulkUpsertStreamStoresEveryBatch() throws Exception {
        createNotes();
        CompletableFuture<UpsertResponse> done = new CompletableFuture<>();
        StreamObserver<UpsertRequest> in =
                RecordsGrpc.newStub(channel)
                        .withCallCredentials(bearer(acmeToken))
                        .upsertStream(
                                new StreamObserver<>() {
                                    @Override
                                    public void onNext(UpsertResponse value) {
                                        done.complete(value);
                                    }

                                    @Override
                                    public void onError(Throwable t) {
                                        done.completeExceptionally(t);
                                    }

                                    @Override
                                    public void onCompleted() {}
                                });
        for (int batch = 0; batch < 5; batch++) {
            UpsertRequest.Builder b = UpsertRequest.newBuilder().setCollection("notes");
            for (int i = 0; i < 20; i++) {
                b.addRecords(rec("r" + batch + "-" + i, "s", 1, batch, i, 1));
            }
            in.onNext(b.build());
        }
        in.onCompleted();
        assertEquals(100, done.get(10, TimeUnit.SECONDS).getUpserted());
        assertEquals(100, store.collection("notes").size("acme"));
    }

    @Test
    void forgetOverGrpcSealsWithAReceiptThatVerifiesOffline() throws Exception {
        createNotes();
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                .addRecords(rec("b1", "bob", 0, 1, 0, 0))
                                .build());
        Operation marked =
                forget(acmeToken)
                        .forget(
                                ForgetRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setIdempotencyKey("ticket-1")
                                        .setReasonCode("gdpr-art17")
                                        .build());
        assertEquals("BLOCKED", marked.getState());
        // From the moment forget returned, no search returns her records.
        assertFalse(
                records(acmeToken).search(query(5, 1, 0, 0, 0)).getHitsList().stream()
                        .anyMatch(h -> h.getRecord().getSubject().equals("alice")));

        List<String> states = new ArrayList<>();
        Operation last = null;
        Iterator<Operation> watch =
                ForgetGrpc.newBlockingStub(channel)
                        .withCallCredentials(bearer(acmeToken))
                        .withDeadlineAfter(60, TimeUnit.SECONDS)
                        .watch(GetOperationRequest.newBuilder().setId(marked.getId()).build());
        while (watch.hasNext()) {
            last = watch.next();
            states.add(last.getState());
        }
        assertEquals("SEALED", states.get(states.size() - 1), "watched " + states);
        assertTrue(last.getSettled());
        assertEquals("ERASED", last.getOutcome());
        assertTrue(
                last.getTimelineMicrosMap()
                        .keySet()
                        .containsAll(List.of("BLOCKED", "CLEANUP", "VERIFYING", "SEALED")),
                last.getTimelineMicrosMap().toString());
        assertEquals(1, last.getForgottenMap().get("notes"));

        // The receipt verifies with only the public key, offline, and the ledger holds it.
        String pem = forget(acmeToken).getPublicKey(PublicKeyRequest.getDefaultInstance()).getPem();
        assertTrue(
                Receipt.verify(last.getReceipt(), SigningKey.parsePem(pem)) != null,
                "the signature verifies offline");
        assertTrue(
                forget(acmeToken)
                        .verifyReceipt(
                                VerifyReceiptRequest.newBuilder()
                                        .setReceipt(last.getReceipt())
                                        .build())
                        .getOk());
        assertFalse(
                forget(acmeToken)
                        .verifyReceipt(
                                VerifyReceiptRequest.newBuilder()
                                        .setReceipt(
                                                last.getReceipt()
                                                        .replace("alice", "alicf")
                                                        .replace("SEALED", "SEALEd"))
                                        .build())
                        .getOk());
        LedgerVerification ledger =
                forget(operatorToken).verifyLedger(VerifyLedgerRequest.getDefaultInstance());
        assertTrue(ledger.getOk(), ledger.getProblem());
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(
                        () ->
                                forget(acmeToken)
                                        .verifyLedger(VerifyLedgerRequest.getDefaultInstance())));
        // The same idempotency key returns the same operation.
        assertEquals(
                marked.getId(),
                forget(acmeToken)
                        .forget(
                                ForgetRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setIdempotencyKey("ticket-1")
                                        .setReasonCode("gdpr-art17")
                                        .build())
                        .getId());
        // A write into the forgotten scope is refused as a failed precondition.
        StatusRuntimeException refused =
                failure(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .addRecords(rec("a9", "alice", 1, 1, 0, 0))
                                                        .build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode());
        assertTrue(
                refused.getStatus().getDescription().contains("forgotten"),
                refused.getStatus().getDescription());
    }

    /**
     * Re-admission over gRPC, in the caller's tenant only: after acme's forget of alice seals, her
     * writes are refused until acme re-admits her; globex, which forgot no alice, has nothing to
     * re-admit; the forget's receipt still verifies and the ledger still holds.
     */
    @Test
    void readmitLiftsTheFencesOfTheCallersSealedForgetsOnly() throws Exception {
        createNotes();
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                .addRecords(rec("b1", "bob", 0, 1, 0, 0))
                                .build());
        Operation marked =
                forget(acmeToken)
                        .forget(
                                ForgetRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setIdempotencyKey("ticket-r")
                                        .setReasonCode("gdpr-art17")
                                        .setExactProbe(true)
                                        .build());
        var sealed = store.awaitOperation(marked.getId(), java.time.Duration.ofSeconds(60));
        assertEquals("SEALED", sealed.state().name(), sealed.note());
        assertTrue(
                sealed.receipt().contains("\"exactForced\":true"),
                "exact_probe reaches the request: " + sealed.receipt());
        UpsertRequest again =
                UpsertRequest.newBuilder()
                        .setCollection("notes")
                        .addRecords(rec("a1", "alice", 0, 0, 1, 0))
                        .build();
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> records(acmeToken).upsert(again)));

        dev.nepenthe.grpc.v1.ReadmitRequest readmitAlice =
                dev.nepenthe.grpc.v1.ReadmitRequest.newBuilder()
                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                        .setReasonCode("consent-renewed")
                        .build();
        StatusRuntimeException nothing = failure(() -> forget(globexToken).readmit(readmitAlice));
        assertEquals(Status.Code.INVALID_ARGUMENT, nothing.getStatus().getCode());
        assertFalse(
                nothing.getStatus().getDescription().contains("alice"),
                nothing.getStatus().getDescription());
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(
                        () ->
                                forget(acmeToken)
                                        .readmit(
                                                readmitAlice.toBuilder()
                                                        .setScope(
                                                                ForgetScope.newBuilder()
                                                                        .setSource(
                                                                                ForgetScope.Source
                                                                                        .newBuilder()
                                                                                        .setKind(
                                                                                                "doc")
                                                                                        .setId(
                                                                                                "d1")))
                                                        .build())));
        assertEquals(
                Status.Code.FAILED_PRECONDITION,
                code(() -> records(acmeToken).upsert(again)),
                "still fenced");

        dev.nepenthe.grpc.v1.Readmission r = forget(acmeToken).readmit(readmitAlice);
        assertEquals(List.of(marked.getId()), r.getForgetOperationsList());
        assertEquals("subject", r.getScopeKind());
        assertEquals(marked.getScopeHash(), r.getScopeHash());
        assertEquals(store.readmissions().get(0).ledgerEntry().hash(), r.getLedgerHash());
        assertEquals(1, records(acmeToken).upsert(again).getUpserted());
        assertEquals(
                List.of(0f, 0f, 1f, 0f),
                records(acmeToken)
                        .get(GetRequest.newBuilder().setCollection("notes").setId("a1").build())
                        .getRecord()
                        .getVectorList());
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(() -> forget(acmeToken).readmit(readmitAlice)),
                "once only");
        assertTrue(
                forget(acmeToken)
                        .verifyReceipt(
                                VerifyReceiptRequest.newBuilder()
                                        .setReceipt(sealed.receipt())
                                        .build())
                        .getOk());
        LedgerVerification ledger =
                forget(operatorToken).verifyLedger(VerifyLedgerRequest.getDefaultInstance());
        assertTrue(ledger.getOk(), ledger.getProblem());
    }

    /**
     * A derivedFrom reference to another collection is followed by a forget; one naming a tenant is
     * refused.
     */
    @Test
    void aReferenceToAnotherCollectionIsFollowedAndOneNamingATenantIsRefused() throws Exception {
        createNotes();
        collections(operatorToken)
                .create(
                        CreateCollectionRequest.newBuilder()
                                .setSpec(
                                        CollectionSpec.newBuilder()
                                                .setName("summaries")
                                                .setDimension(DIM)
                                                .setMetric(Metric.COSINE))
                                .build());
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                .build());
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("summaries")
                                .addRecords(
                                        rec("s1", "", 0, 1, 0, 0).toBuilder()
                                                .addDerivedFrom("@notes/a1"))
                                .build());
        StatusRuntimeException refused =
                failure(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("summaries")
                                                        .addRecords(
                                                                rec("s2", "", 0, 0, 1, 0)
                                                                        .toBuilder()
                                                                        .addDerivedFrom(
                                                                                "@globex:notes/a1"))
                                                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
        assertTrue(
                refused.getStatus()
                        .getDescription()
                        .contains("expected a record of the record's own tenant"),
                refused.getStatus().getDescription());
        Operation marked =
                forget(acmeToken)
                        .forget(
                                ForgetRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setIdempotencyKey("ticket-x")
                                        .setReasonCode("gdpr-art17")
                                        .build());
        var sealed = store.awaitOperation(marked.getId(), java.time.Duration.ofSeconds(60));
        assertEquals(java.util.Map.of("notes", 1, "summaries", 1), sealed.recordsForgotten());
        assertEquals(
                Status.Code.NOT_FOUND,
                code(
                        () ->
                                records(acmeToken)
                                        .get(
                                                GetRequest.newBuilder()
                                                        .setCollection("summaries")
                                                        .setId("s1")
                                                        .build())));
    }

    @Test
    void aTokenNeverReachesAnotherTenant() {
        createNotes();
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                .build());
        // Globex searches, gets and deletes in its own tenant: acme's record is simply not there.
        assertEquals(0, records(globexToken).search(query(5, 1, 0, 0, 0)).getHitsCount());
        StatusRuntimeException get =
                failure(
                        () ->
                                records(globexToken)
                                        .get(
                                                GetRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .setId("a1")
                                                        .build()));
        assertEquals(Status.Code.NOT_FOUND, get.getStatus().getCode());
        StatusRuntimeException never =
                failure(
                        () ->
                                records(globexToken)
                                        .get(
                                                GetRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .setId("never-existed")
                                                        .build()));
        assertEquals(
                get.getStatus().getDescription().replace("a1", "X"),
                never.getStatus().getDescription().replace("never-existed", "X"),
                "same answer as for a missing record");
        assertEquals(
                0,
                records(globexToken)
                        .delete(
                                DeleteRequest.newBuilder()
                                        .setCollection("notes")
                                        .addIds("a1")
                                        .build())
                        .getDeleted());
        assertEquals(
                0,
                collections(globexToken)
                        .describe(DescribeCollectionRequest.newBuilder().setName("notes").build())
                        .getSize());
        // Its forget of the same subject name touches nothing of acme's ...
        Operation op =
                forget(globexToken)
                        .forget(
                                ForgetRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setIdempotencyKey("k")
                                        .setReasonCode("test")
                                        .build());
        assertTrue(store.collection("notes").get("acme", "a1").isPresent());
        // ... and acme cannot see globex's operation, nor globex acme's holds.
        assertEquals(
                Status.Code.NOT_FOUND,
                code(
                        () ->
                                forget(acmeToken)
                                        .getOperation(
                                                GetOperationRequest.newBuilder()
                                                        .setId(op.getId())
                                                        .build())));
        var hold =
                forget(acmeToken)
                        .placeHold(
                                PlaceHoldRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setReasonCode("litigation")
                                        .build());
        assertEquals(
                0,
                forget(globexToken)
                        .listHolds(ListHoldsRequest.getDefaultInstance())
                        .getHoldsCount());
        assertEquals(
                Status.Code.NOT_FOUND,
                code(
                        () ->
                                forget(globexToken)
                                        .liftHold(
                                                LiftHoldRequest.newBuilder()
                                                        .setId(hold.getId())
                                                        .build())));
        assertEquals(
                1,
                forget(acmeToken).listHolds(ListHoldsRequest.getDefaultInstance()).getHoldsCount());
        // The hold keeps acme's record against a plain delete too.
        DeleteRequest deleteA1 =
                DeleteRequest.newBuilder().setCollection("notes").addIds("a1").build();
        StatusRuntimeException held = failure(() -> records(acmeToken).delete(deleteA1));
        assertEquals(Status.Code.FAILED_PRECONDITION, held.getStatus().getCode());
        assertTrue(
                held.getStatus().getDescription().contains(hold.getId()),
                held.getStatus().getDescription());
        assertTrue(store.collection("notes").get("acme", "a1").isPresent());
        assertTrue(
                forget(acmeToken)
                                .liftHold(LiftHoldRequest.newBuilder().setId(hold.getId()).build())
                                .getLiftedAtMillis()
                        > 0);
        assertEquals(1, records(acmeToken).delete(deleteA1).getDeleted());
    }

    @Test
    void eachErrorHasItsStatusAndSaysWhatWasExpected() {
        createNotes();
        // Authentication and roles.
        StatusRuntimeException noToken =
                failure(
                        () ->
                                CollectionsGrpc.newBlockingStub(channel)
                                        .list(ListCollectionsRequest.getDefaultInstance()));
        assertEquals(Status.Code.UNAUTHENTICATED, noToken.getStatus().getCode());
        assertTrue(
                noToken.getStatus()
                        .getDescription()
                        .contains("expected an 'authorization: Bearer <token>' header"));
        assertEquals(
                Status.Code.UNAUTHENTICATED,
                code(
                        () ->
                                collections("not-a-token")
                                        .list(ListCollectionsRequest.getDefaultInstance())));
        StatusRuntimeException role =
                failure(
                        () ->
                                collections(acmeToken)
                                        .create(
                                                CreateCollectionRequest.newBuilder()
                                                        .setSpec(
                                                                CollectionSpec.newBuilder()
                                                                        .setName("x")
                                                                        .setDimension(3)
                                                                        .setMetric(Metric.L2))
                                                        .build()));
        assertEquals(Status.Code.PERMISSION_DENIED, role.getStatus().getCode());
        assertTrue(
                role.getStatus()
                        .getDescription()
                        .contains("expected a token with the store-operator role"));
        assertEquals(
                Status.Code.PERMISSION_DENIED,
                code(() -> AdminGrpcStub.snapshot(channel, acmeToken, tmp)));

        // Bad input: INVALID_ARGUMENT naming what was expected and what arrived.
        StatusRuntimeException dim =
                failure(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .addRecords(rec("a", "s", 1, 2, 3))
                                                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, dim.getStatus().getCode());
        assertTrue(
                dim.getStatus().getDescription().contains("expected a vector of dimension 4"),
                dim.getStatus().getDescription());
        StatusRuntimeException nan =
                failure(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .addRecords(
                                                                rec("a", "s", 1, Float.NaN, 0, 0))
                                                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, nan.getStatus().getCode());
        assertTrue(
                nan.getStatus().getDescription().contains("NaN"), nan.getStatus().getDescription());
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(() -> records(acmeToken).search(query(0, 1, 0, 0, 0))));
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> records(acmeToken).search(query(3))));
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(
                        () ->
                                forget(acmeToken)
                                        .forget(
                                                ForgetRequest.newBuilder()
                                                        .setIdempotencyKey("k")
                                                        .setReasonCode("r")
                                                        .build())));
        assertEquals(
                Status.Code.NOT_FOUND,
                code(
                        () ->
                                records(acmeToken)
                                        .search(
                                                query(3, 1, 0, 0, 0).toBuilder()
                                                        .setCollection("nope")
                                                        .build())));
        assertEquals(
                0, store.collection("notes").size(), "nothing of the refused batches was stored");

        // Limits: RESOURCE_EXHAUSTED naming the limit.
        StatusRuntimeException k = failure(() -> records(acmeToken).search(query(101, 1, 0, 0, 0)));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, k.getStatus().getCode());
        assertTrue(k.getStatus().getDescription().contains("k: expected at most 100, got 101"));
        UpsertRequest.Builder big = UpsertRequest.newBuilder().setCollection("notes");
        for (int i = 0; i < 51; i++) {
            big.addRecords(rec("r" + i, "s", 1, 0, 0, i));
        }
        assertEquals(
                Status.Code.RESOURCE_EXHAUSTED, code(() -> records(acmeToken).upsert(big.build())));
        assertEquals(
                Status.Code.RESOURCE_EXHAUSTED,
                code(
                        () ->
                                collections(operatorToken)
                                        .create(
                                                CreateCollectionRequest.newBuilder()
                                                        .setSpec(
                                                                CollectionSpec.newBuilder()
                                                                        .setName("wide")
                                                                        .setDimension(65)
                                                                        .setMetric(Metric.L2))
                                                        .build())));
        Record longText = rec("t", "s", 1, 0, 0, 0).toBuilder().setText("x".repeat(1001)).build();
        assertEquals(
                Status.Code.RESOURCE_EXHAUSTED,
                code(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .addRecords(longText)
                                                        .build())));
        Record huge = rec("h", "s", 1, 0, 0, 0).toBuilder().setText("y".repeat(2 << 20)).build();
        assertEquals(
                Status.Code.RESOURCE_EXHAUSTED,
                code(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .addRecords(huge)
                                                        .build())),
                "over the message size limit");

        // Text on a collection of vectors only: what the collection lacks is a precondition
        // (FAILED_PRECONDITION, the store's message); an ambiguous or contradictory request is
        // the caller's mistake (INVALID_ARGUMENT). TextSearchOverGrpcTest has the rest.
        StatusRuntimeException keyword =
                failure(
                        () ->
                                records(acmeToken)
                                        .search(
                                                SearchRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .setK(3)
                                                        .setText("hiking")
                                                        .setMode(SearchMode.KEYWORD)
                                                        .build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, keyword.getStatus().getCode());
        assertEquals(
                "collection 'notes' has no text index: keyword and hybrid search need one"
                        + " (CollectionSpec.withTextIndex, set when the collection is created)",
                keyword.getStatus().getDescription());
        StatusRuntimeException semantic =
                failure(
                        () ->
                                records(acmeToken)
                                        .search(
                                                SearchRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .setK(3)
                                                        .setText("hiking")
                                                        .build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, semantic.getStatus().getCode());
        assertTrue(
                semantic.getStatus()
                        .getDescription()
                        .startsWith(
                                "collection 'notes' cannot embed text: it was"
                                        + " created without an embedder"),
                semantic.getStatus().getDescription());
        StatusRuntimeException both =
                failure(
                        () ->
                                records(acmeToken)
                                        .search(
                                                query(3, 1, 0, 0, 0).toBuilder()
                                                        .setText("hiking")
                                                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, both.getStatus().getCode());
        assertTrue(
                both.getStatus()
                        .getDescription()
                        .startsWith("mode: expected VECTOR, KEYWORD or HYBRID when both"),
                both.getStatus().getDescription());
        StatusRuntimeException textOnly =
                failure(
                        () ->
                                records(acmeToken)
                                        .upsert(
                                                UpsertRequest.newBuilder()
                                                        .setCollection("notes")
                                                        .addRecords(
                                                                Record.newBuilder()
                                                                        .setId("t")
                                                                        .setText("no vector"))
                                                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, textOnly.getStatus().getCode());
        assertTrue(
                textOnly.getStatus().getDescription().contains("cannot embed text"),
                textOnly.getStatus().getDescription());

        // Deadlines are honoured.
        assertEquals(
                Status.Code.DEADLINE_EXCEEDED,
                code(
                        () ->
                                records(acmeToken)
                                        .withDeadlineAfter(1, TimeUnit.NANOSECONDS)
                                        .search(query(3, 1, 0, 0, 0))));
        assertEquals(0, store.collection("notes").size());
    }

    @Test
    void theQueryCacheServesRepeatsForgetsWithTheStoreAndSeesWrites() throws Exception {
        createNotes();
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                .addRecords(rec("b1", "bob", 0.3f, 1, 0, 0))
                                .build());
        // The others lie far from alice's vector (cosine under 0.3), so the forget's probe finds no
        // residue.
        SearchRequest q = query(5, 1, 0.1f, 0, 0);
        List<String> first = ids(records(acmeToken).search(q));
        assertEquals(
                first, ids(records(acmeToken).search(q)), "the repeat is served from the cache");
        dev.nepenthe.grpc.v1.ServerStats stats =
                dev.nepenthe.grpc.v1.AdminGrpc.newBlockingStub(channel)
                        .withCallCredentials(bearer(operatorToken))
                        .stats(dev.nepenthe.grpc.v1.ServerStatsRequest.getDefaultInstance());
        assertTrue(
                stats.getCacheEnabled()
                        && stats.getCacheHits() >= 1
                        && stats.getCacheEntries() >= 1,
                stats.toString());

        // A write is seen by the next search: the tenant's cached results are dropped.
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("c1", "carol", 0.2f, 0, 1, 0))
                                .build());
        assertTrue(ids(records(acmeToken).search(q)).contains("c1"));

        // A forget: from the moment it returns, the cached result holding alice is not served, and
        // the operation seals with the cache among its surfaces, clean.
        assertTrue(ids(records(acmeToken).search(q)).contains("a1"), "cached with alice in it");
        Operation marked =
                forget(acmeToken)
                        .forget(
                                ForgetRequest.newBuilder()
                                        .setScope(ForgetScope.newBuilder().setSubject("alice"))
                                        .setIdempotencyKey("t-9")
                                        .setReasonCode("gdpr")
                                        .build());
        assertFalse(ids(records(acmeToken).search(q)).contains("a1"));
        store.awaitOperation(marked.getId(), java.time.Duration.ofMinutes(1));
        Operation sealed =
                forget(acmeToken)
                        .getOperation(
                                GetOperationRequest.newBuilder().setId(marked.getId()).build());
        assertEquals("SEALED", sealed.getState(), sealed.getNote());
        dev.nepenthe.grpc.v1.SurfaceOutcome cache =
                sealed.getSurfacesList().stream()
                        .filter(s -> s.getSurface().equals("cache:query"))
                        .findFirst()
                        .orElseThrow();
        assertTrue(cache.getClean(), cache.toString());
        assertFalse(ids(records(acmeToken).search(q)).contains("a1"));
    }

    private static List<String> ids(SearchResponse r) {
        return r.getHitsList().stream().map(h -> h.getRecord().getId()).toList();
    }

    @Test
    void reflectionListsTheServicesWithoutAToken() throws Exception {
        CompletableFuture<List<String>> names = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> req =
                io.grpc.reflection.v1.ServerReflectionGrpc.newStub(channel)
                        .serverReflectionInfo(
                                new StreamObserver<>() {
                                    @Override
                                    public void onNext(
                                            io.grpc.reflection.v1.ServerReflectionResponse r) {
                                        names.complete(
                                                r
                                                        .getListServicesResponse()
                                                        .getServiceList()
                                                        .stream()
                                                        .map(
                                                                io.grpc.reflection.v1
                                                                                .ServiceResponse
                                                                        ::getName)
                                                        .sorted()
                                                        .toList());
                                    }

                                    @Override
                                    public void onError(Throwable t) {
                                        names.completeExceptionally(t);
                                    }

                                    @Override
                                    public void onCompleted() {}
                                });
        req.onNext(
                io.grpc.reflection.v1.ServerReflectionRequest.newBuilder()
                        .setListServices("")
                        .build());
        req.onCompleted();
        assertTrue(
                names.get(10, TimeUnit.SECONDS)
                        .containsAll(
                                List.of(
                                        "nepenthe.v1.Admin",
                                        "nepenthe.v1.Collections",
                                        "nepenthe.v1.Forget",
                                        "nepenthe.v1.Records",
                                        "grpc.health.v1.Health")),
                names.get().toString());
    }

    @Test
    void healthAndSnapshotsForOperators() {
        HealthCheckResponse h =
                HealthGrpc.newBlockingStub(channel).check(HealthCheckRequest.getDefaultInstance());
        assertEquals(HealthCheckResponse.ServingStatus.SERVING, h.getStatus());
        assertEquals(
                HealthCheckResponse.ServingStatus.SERVING,
                HealthGrpc.newBlockingStub(channel)
                        .check(
                                HealthCheckRequest.newBuilder()
                                        .setService("nepenthe.v1.Records")
                                        .build())
                        .getStatus());
        createNotes();
        records(acmeToken)
                .upsert(
                        UpsertRequest.newBuilder()
                                .setCollection("notes")
                                .addRecords(rec("a1", "alice", 1, 0, 0, 0))
                                .build());
        AdminGrpcStub.snapshot(channel, operatorToken, tmp);
        assertTrue(
                Files.isDirectory(
                        tmp.resolve("snaps")
                                .resolve("snap")
                                .resolve("collections")
                                .resolve("notes")));
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(() -> AdminGrpcStub.snapshot(channel, operatorToken, tmp)),
                "the target exists now");
        assertEquals(
                Status.Code.INVALID_ARGUMENT,
                code(
                        () ->
                                dev.nepenthe.grpc.v1.AdminGrpc.newBlockingStub(channel)
                                        .withCallCredentials(bearer(operatorToken))
                                        .restore(
                                                dev.nepenthe.grpc.v1.RestoreRequest.newBuilder()
                                                        .setSnapshot(
                                                                tmp.resolve("snaps")
                                                                        .resolve("snap")
                                                                        .toString())
                                                        .setTarget(tmp.resolve("data").toString())
                                                        .build())),
                "the served folder is never a restore target");
        dev.nepenthe.grpc.v1.AdminGrpc.newBlockingStub(channel)
                .withCallCredentials(bearer(operatorToken))
                .restore(
                        dev.nepenthe.grpc.v1.RestoreRequest.newBuilder()
                                .setSnapshot(tmp.resolve("snaps").resolve("snap").toString())
                                .setTarget(tmp.resolve("snaps").resolve("restored").toString())
                                .build());
        assertTrue(
                Files.isDirectory(
                        tmp.resolve("snaps")
                                .resolve("restored")
                                .resolve("collections")
                                .resolve("notes")));
    }

    /** The snapshot call, shared by two tests. */
    private static final class AdminGrpcStub {
        static void snapshot(ManagedChannel channel, String token, Path tmp) {
            dev.nepenthe.grpc.v1.AdminGrpc.newBlockingStub(channel)
                    .withCallCredentials(bearer(token))
                    .snapshot(
                            SnapshotRequest.newBuilder()
                                    .setTarget(tmp.resolve("snaps").resolve("snap").toString())
                                    .build());
        }
    }
}
