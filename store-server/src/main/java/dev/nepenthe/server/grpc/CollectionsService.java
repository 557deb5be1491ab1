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
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/**
 * Collections over gRPC: any caller may list and describe them (a collection is shared by the
 * tenants; the size a caller sees is its own tenant's); creating and dropping need the operator
 * role.
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
        Statuses.unary(out, () -> {
            Caller caller = requireOperator("create a collection");
            CollectionSpec spec = Protos.spec(request.getSpec());
            Limits.check("collection dimension", limits.maxDimension(), spec.dimension());
            VectorCollection c = store.createCollection(spec);
            return info(c, caller);
        });
    }

    @Override
    public void list(ListCollectionsRequest request, StreamObserver<ListCollectionsResponse> out) {
        Statuses.unary(out, () -> {
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
        Statuses.unary(out, () -> {
            requireOperator("drop a collection");
            boolean dropped = store.dropCollection(request.getName());
            if (cache != null) {
                cache.invalidate(request.getName());
            }
            return DropCollectionResponse.newBuilder().setDropped(dropped).build();
        });
    }

    private static CollectionInfo info(VectorCollection c, Caller caller) {
        return CollectionInfo.newBuilder().setSpec(Protos.spec(c.spec())).setSize(c.size(caller.tenant())).build();
    }

    static Caller requireOperator(String what) {
        Caller c = Caller.current();
        if (!c.operator()) {
            throw Status.PERMISSION_DENIED.withDescription("to " + what + ": expected a token with the operator role,"
                    + " got one with the tenant role only").asRuntimeException();
        }
        return c;
    }
}
