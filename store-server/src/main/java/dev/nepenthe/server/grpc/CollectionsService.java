package dev.nepenthe.server.grpc;

import dev.nepenthe.cache.QueryCache;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.grpc.v1.CollectionInfo;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.CreateCollectionRequest;
import dev.nepenthe.grpc.v1.DescribeCollectionRequest;
import dev.nepenthe.grpc.v1.DropCollectionRequest;
import dev.nepenthe.grpc.v1.DropCollectionResponse;
import dev.nepenthe.grpc.v1.ListCollectionsRequest;
import dev.nepenthe.grpc.v1.ListCollectionsResponse;
import io.grpc.stub.StreamObserver;

/**
 * Collections over gRPC: any caller may list and describe them (a collection is shared by the
 * tenants; the size a caller sees is its own tenant's); creating and dropping need the
 * store-operator role, since a collection and its drop reach every tenant.
 */
final class CollectionsService extends CollectionsGrpc.CollectionsImplBase {

    private final Nepenthe store;
    private final Limits limits;
    private final QueryCache cache;

    CollectionsService(Nepenthe store, Limits limits, QueryCache cache) {
        this.store = store;
        this.limits = limits;
        this.cache = cache;
    }

    @Override
    public void create(CreateCollectionRequest request, StreamObserver<CollectionInfo> out) {
        Statuses.unary(
                out,
                () -> {
                    Caller caller = Role.require(Role.STORE_OPERATOR, "create a collection");
                    CollectionSpec spec = Protos.spec(request.getSpec());
                    Limits.check("collection dimension", limits.maxDimension(), spec.dimension());
                    VectorCollection c = store.createCollection(spec);
                    return info(c, caller);
                });
    }

    @Override
    public void list(ListCollectionsRequest request, StreamObserver<ListCollectionsResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    ListCollectionsResponse.Builder b = ListCollectionsResponse.newBuilder();
                    store.collections().forEach(s -> b.addCollections(Protos.spec(s)));
                    return b.build();
                });
    }

    @Override
    public void describe(DescribeCollectionRequest request, StreamObserver<CollectionInfo> out) {
        Statuses.unary(out, () -> info(store.collection(request.getName()), Caller.current()));
    }

    @Override
    public void drop(DropCollectionRequest request, StreamObserver<DropCollectionResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    Role.require(
                            Role.STORE_OPERATOR,
                            "drop a collection (every tenant's records in it)");
                    boolean dropped = store.dropCollection(request.getName());
                    if (cache != null) {
                        cache.invalidate(request.getName());
                    }
                    return DropCollectionResponse.newBuilder().setDropped(dropped).build();
                });
    }

    private static CollectionInfo info(VectorCollection c, Caller caller) {
        return CollectionInfo.newBuilder()
                .setSpec(Protos.spec(c.spec()))
                .setSize(c.size(caller.tenant()))
                .build();
    }
}
