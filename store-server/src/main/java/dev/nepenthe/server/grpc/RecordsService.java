package dev.nepenthe.server.grpc;

import dev.nepenthe.cache.QueryCache;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.SearchHit;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.grpc.v1.DeleteRequest;
import dev.nepenthe.grpc.v1.DeleteResponse;
import dev.nepenthe.grpc.v1.GetRequest;
import dev.nepenthe.grpc.v1.GetResponse;
import dev.nepenthe.grpc.v1.Record;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.SearchRequest;
import dev.nepenthe.grpc.v1.SearchResponse;
import dev.nepenthe.grpc.v1.UpsertRequest;
import dev.nepenthe.grpc.v1.UpsertResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;

/**
 * Records and search over gRPC, always in the caller's tenant: a record upserted is stored under
 * it, a get, delete or search reaches only it. A record of another tenant with the same id is
 * another record, so a caller cannot tell whether it exists. Searches go through the query cache (a
 * registered forget surface, so a forget evicts and verifies it too); every write of a tenant drops
 * that tenant's cached results of the collection.
 */
final class RecordsService extends RecordsGrpc.RecordsImplBase {

    private final Nepenthe store;
    private final Limits limits;
    private final StreamSlots slots;

    /** Null when the server runs without a query cache. */
    private final QueryCache cache;

    RecordsService(Nepenthe store, Limits limits, StreamSlots slots, QueryCache cache) {
        this.store = store;
        this.limits = limits;
        this.slots = slots;
        this.cache = cache;
    }

    @Override
    public void upsert(UpsertRequest request, StreamObserver<UpsertResponse> out) {
        Statuses.unary(
                out,
                () ->
                        UpsertResponse.newBuilder()
                                .setUpserted(store(request, Caller.current()))
                                .build());
    }

    @Override
    public StreamObserver<UpsertRequest> upsertStream(StreamObserver<UpsertResponse> out) {
        Caller caller = Caller.current();
        ServerCallStreamObserver<UpsertResponse> call =
                (ServerCallStreamObserver<UpsertResponse>) out;
        StreamSlots.Slot slot;
        try {
            slot = slots.acquire(caller);
            // The slot is the call's for as long as it lives, however it ends: completed, failed,
            // cancelled, or closed by an interceptor before this observer heard of it (a body that
            // does not parse), which reaches neither onError nor onCompleted below.
            call.setOnCancelHandler(slot::release);
            call.setOnCloseHandler(slot::release);
        } catch (RuntimeException e) {
            out.onError(Statuses.of(e));
            return new StreamObserver<>() {
                @Override
                public void onNext(UpsertRequest value) {}

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            };
        }
        return new StreamObserver<>() {
            private long stored;
            private boolean failed;

            @Override
            public void onNext(UpsertRequest request) {
                if (failed || call.isCancelled()) {
                    return; // a cancelled stream stores no further batch
                }
                try {
                    stored += store(request, caller);
                } catch (Throwable t) {
                    failed = true;
                    slot.release();
                    // Batches before this one are stored (each was durable when it arrived).
                    out.onError(
                            Statuses.of(t)
                                    .getStatus()
                                    .augmentDescription(
                                            "after "
                                                    + stored
                                                    + " records of this stream were stored")
                                    .asRuntimeException());
                }
            }

            @Override
            public void onError(Throwable t) {
                slot.release();
            }

            @Override
            public void onCompleted() {
                if (!failed) {
                    slot.release();
                    out.onNext(UpsertResponse.newBuilder().setUpserted(stored).build());
                    out.onCompleted();
                }
            }
        };
    }

    private long store(UpsertRequest request, Caller caller) {
        Limits.check("records in one upsert", limits.maxBatch(), request.getRecordsCount());
        VectorCollection c = store.collection(request.getCollection());
        List<VectorRecord> batch = new ArrayList<>(request.getRecordsCount());
        for (int i = 0; i < request.getRecordsCount(); i++) {
            Record r = request.getRecords(i);
            Limits.check(
                    "record " + i + ": text characters",
                    limits.maxTextChars(),
                    r.getText().length());
            batch.add(Protos.record(r, caller.tenant(), i));
        }
        try {
            c.upsertAll(batch);
        } finally {
            // Even a failed write may have stored part of what it reports (a checkpoint after the
            // log append); cached results of this tenant are dropped either way.
            invalidate(request.getCollection(), caller.tenant());
        }
        return batch.size();
    }

    /**
     * Cached results of a tenant go stale when it writes; the cache refuses any result computed
     * before.
     */
    private void invalidate(String collection, String tenant) {
        if (cache != null) {
            cache.invalidate(collection, tenant);
        }
    }

    @Override
    public void get(GetRequest request, StreamObserver<GetResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    VectorRecord r =
                            store.collection(request.getCollection())
                                    .get(Caller.current().tenant(), request.getId())
                                    .orElseThrow(
                                            () ->
                                                    Status.NOT_FOUND
                                                            .withDescription(
                                                                    "collection '"
                                                                            + request
                                                                                    .getCollection()
                                                                            + "' holds no record '"
                                                                            + request.getId()
                                                                            + "' for this caller")
                                                            .asRuntimeException());
                    return GetResponse.newBuilder().setRecord(Protos.record(r)).build();
                });
    }

    @Override
    public void delete(DeleteRequest request, StreamObserver<DeleteResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    Limits.check("ids in one delete", limits.maxBatch(), request.getIdsCount());
                    VectorCollection c = store.collection(request.getCollection());
                    int n;
                    try {
                        n = c.deleteAll(Caller.current().tenant(), request.getIdsList());
                    } finally {
                        invalidate(request.getCollection(), Caller.current().tenant());
                    }
                    return DeleteResponse.newBuilder().setDeleted(n).build();
                });
    }

    @Override
    public void search(SearchRequest request, StreamObserver<SearchResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    Limits.check("k", limits.maxK(), request.getK());
                    Limits.check(
                            "query text characters",
                            limits.maxTextChars(),
                            request.getText().length());
                    if (request.hasFilter()) {
                        QueryChecks.filter(request.getFilter(), limits.queries(), "filter");
                    }
                    dev.nepenthe.core.SearchRequest q =
                            Protos.search(request, Caller.current().tenant());
                    QueryChecks.params(q.params(), limits.queries());
                    VectorCollection c = store.collection(request.getCollection());
                    // QueryCache.search caches vector queries only: a text query's embedding or
                    // BM25
                    // result is not keyed by its vector, so it always goes to the collection.
                    List<SearchHit> hits = cache == null ? c.search(q) : cache.search(c, q);
                    SearchResponse.Builder b = SearchResponse.newBuilder();
                    for (SearchHit h : hits) {
                        if (request.hasMinScore() && h.score() < request.getMinScore()) {
                            continue;
                        }
                        b.addHits(Protos.hit(h, request.getIncludeVectors()));
                    }
                    return b.build();
                });
    }
}
