package dev.nepenthe.server.grpc;

import dev.nepenthe.cache.QueryCache;
import dev.nepenthe.core.CollectionSpec;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.StoreHealth;
import dev.nepenthe.core.VectorCollection;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.grpc.v1.AddReplicaRequest;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.ClusterStatusRequest;
import dev.nepenthe.grpc.v1.ExcuseReplicaRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.RemoveReplicaRequest;
import dev.nepenthe.grpc.v1.RestoreRequest;
import dev.nepenthe.grpc.v1.RestoreResponse;
import dev.nepenthe.grpc.v1.ServerStats;
import dev.nepenthe.grpc.v1.ServerStatsRequest;
import dev.nepenthe.grpc.v1.SnapshotRequest;
import dev.nepenthe.grpc.v1.SnapshotResponse;
import dev.nepenthe.grpc.v1.TenantStats;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;

/**
 * Administration: a snapshot of the served store (a consistent copy, no keys, taken while it
 * serves), a restore of a snapshot into a new folder, which a server on the same keystore then
 * opens (dropping whatever was forgotten since), and statistics. Snapshots and restores are the
 * store operator's, and only inside the folders the server was started with ({@link
 * SnapshotFolders}); the served folder is never a restore target. Statistics are a store operator's
 * for every tenant, a tenant administrator's for their own tenant only.
 */
final class AdminService extends AdminGrpc.AdminImplBase {

    private final Nepenthe store;
    private final QueryCache cache;
    private final SnapshotFolders folders;

    AdminService(Nepenthe store, QueryCache cache, SnapshotFolders folders) {
        this.store = store;
        this.cache = cache;
        this.folders = folders;
    }

    @Override
    public void getClusterStatus(ClusterStatusRequest request, StreamObserver<ClusterStatus> out) {
        out.onError(notAReplica());
    }

    @Override
    public void excuseReplica(ExcuseReplicaRequest request, StreamObserver<Operation> out) {
        out.onError(notAReplica());
    }

    @Override
    public void addReplica(AddReplicaRequest request, StreamObserver<ClusterStatus> out) {
        out.onError(notAReplica());
    }

    @Override
    public void removeReplica(RemoveReplicaRequest request, StreamObserver<ClusterStatus> out) {
        out.onError(notAReplica());
    }

    /** Only a replica of a cluster answers these; its {@link Replication} does. */
    private static StatusRuntimeException notAReplica() {
        return Status.FAILED_PRECONDITION
                .withDescription(
                        "expected a replica of a cluster, got a single-node server (start it with"
                                + " 'nepenthe cluster node' to serve as a replica)")
                .asRuntimeException();
    }

    @Override
    public void stats(ServerStatsRequest request, StreamObserver<ServerStats> out) {
        Statuses.unary(
                out,
                () -> {
                    Caller caller = Role.require(Role.TENANT_ADMIN, "read statistics");
                    ServerStats.Builder b = ServerStats.newBuilder();
                    StoreHealth health = store.health();
                    b.setWritesAccepted(health.writesAccepted());
                    if (health.writeProblem() != null) {
                        b.setWriteProblem(
                                caller.storeOperator()
                                        ? health.writeProblem()
                                        : Redaction.paths(health.writeProblem()));
                    }
                    if (!caller.storeOperator()) {
                        // Their own tenant, and not the cache: its counters are every tenant's
                        // traffic.
                        return b.setCacheEnabled(false).addTenants(tenant(caller.tenant())).build();
                    }
                    TreeSet<String> tenants = new TreeSet<>(store.tenants());
                    store.operations(op -> true).forEach(op -> tenants.add(op.tenant()));
                    store.holds().forEach(h -> tenants.add(h.tenant()));
                    tenants.forEach(t -> b.addTenants(tenant(t)));
                    if (cache == null) {
                        return b.setCacheEnabled(false).build();
                    }
                    QueryCache.Stats s = cache.stats();
                    return b.setCacheEnabled(true)
                            .setCacheHits(s.hits())
                            .setCacheMisses(s.misses())
                            .setCacheHitRate(s.hitRate())
                            .setCacheEntries(s.entries())
                            .setCacheBytes(s.bytes())
                            .setCacheEvictedByForget(s.evictedByForget())
                            .setCacheEvictedByCapacity(s.evictedByCapacity())
                            .setCacheEvictedByInvalidation(s.evictedByInvalidation())
                            .setCacheRefusedPuts(s.refusedPuts())
                            .build();
                });
    }

    /** One tenant's counts: its records per collection, its forgets, its holds. */
    private TenantStats tenant(String tenant) {
        TenantStats.Builder t = TenantStats.newBuilder().setTenant(tenant);
        for (CollectionSpec spec : store.collections()) {
            VectorCollection c = store.collection(spec.name());
            t.putRecords(spec.name(), c.size(tenant));
        }
        List<ForgetOperation> ops = store.operations(op -> op.tenant().equals(tenant));
        t.setForgetOperations(ops.size());
        t.setForgetOperationsUnsettled(ops.stream().filter(op -> !op.state().isSettled()).count());
        t.setLegalHolds(store.holds().stream().filter(h -> h.tenant().equals(tenant)).count());
        return t.build();
    }

    @Override
    public void snapshot(SnapshotRequest request, StreamObserver<SnapshotResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    Role.require(Role.STORE_OPERATOR, "take a snapshot (every tenant's records)");
                    Path target = folders.newFolder(request.getTarget(), "target");
                    store.snapshot(target);
                    return SnapshotResponse.newBuilder().setTarget(target.toString()).build();
                });
    }

    @Override
    public void restore(RestoreRequest request, StreamObserver<RestoreResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    Role.require(
                            Role.STORE_OPERATOR, "restore a snapshot (every tenant's records)");
                    Path snapshot = folders.existingFolder(request.getSnapshot(), "snapshot");
                    Path target = folders.newFolder(request.getTarget(), "target");
                    // Real paths on both sides: a link to the served folder is the served folder.
                    Path served = store.folder().toRealPath();
                    if (target.startsWith(served) || served.startsWith(target)) {
                        throw new IllegalArgumentException(
                                "target: expected a folder apart from the one this server serves ("
                                        + served
                                        + "), got "
                                        + target);
                    }
                    if (target.startsWith(snapshot) || snapshot.startsWith(target)) {
                        throw new IllegalArgumentException(
                                "target: expected a folder apart from the snapshot ("
                                        + snapshot
                                        + "), got "
                                        + target);
                    }
                    Nepenthe.restore(snapshot, target);
                    return RestoreResponse.newBuilder().setTarget(target.toString()).build();
                });
    }
}
