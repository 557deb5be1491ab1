package dev.nepenthe.server.grpc;

import dev.nepenthe.cache.QueryCache;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.RestoreRequest;
import dev.nepenthe.grpc.v1.RestoreResponse;
import dev.nepenthe.grpc.v1.ServerStats;
import dev.nepenthe.grpc.v1.ServerStatsRequest;
import dev.nepenthe.grpc.v1.SnapshotRequest;
import dev.nepenthe.grpc.v1.SnapshotResponse;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;

/**
 * Operators' calls: a snapshot of the served store (a consistent copy, no keys, taken while it
 * serves), and a restore of a snapshot into a new folder, which a server on the same keystore then
 * opens (dropping whatever was forgotten since). The served folder is never a restore target.
 */
final class AdminService extends AdminGrpc.AdminImplBase {

    private final Nepenthe store;
    private final QueryCache cache;

    AdminService(Nepenthe store, QueryCache cache) {
        this.store = store;
        this.cache = cache;
    }

    @Override
    public void stats(ServerStatsRequest request, StreamObserver<ServerStats> out) {
        Statuses.unary(out, () -> {
            CollectionsService.requireOperator("read the server's statistics");
            if (cache == null) {
                return ServerStats.newBuilder().setCacheEnabled(false).build();
            }
            QueryCache.Stats s = cache.stats();
            return ServerStats.newBuilder().setCacheEnabled(true).setCacheHits(s.hits()).setCacheMisses(s.misses())
                    .setCacheHitRate(s.hitRate()).setCacheEntries(s.entries()).setCacheBytes(s.bytes())
                    .setCacheEvictedByForget(s.evictedByForget()).setCacheEvictedByCapacity(s.evictedByCapacity())
                    .setCacheEvictedByInvalidation(s.evictedByInvalidation()).setCacheRefusedPuts(s.refusedPuts()).build();
        });
    }

    @Override
    public void snapshot(SnapshotRequest request, StreamObserver<SnapshotResponse> out) {
        Statuses.unary(out, () -> {
            CollectionsService.requireOperator("take a snapshot");
            Path target = path(request.getTarget(), "target");
            store.snapshot(target);
            return SnapshotResponse.newBuilder().setTarget(target.toString()).build();
        });
    }

    @Override
    public void restore(RestoreRequest request, StreamObserver<RestoreResponse> out) {
        Statuses.unary(out, () -> {
            CollectionsService.requireOperator("restore a snapshot");
            Path snapshot = path(request.getSnapshot(), "snapshot");
            Path target = path(request.getTarget(), "target");
            Path served = store.folder().toAbsolutePath().normalize();
            if (target.startsWith(served) || served.startsWith(target)) {
                throw new IllegalArgumentException("target: expected a folder apart from the one this server serves ("
                        + served + "), got " + target);
            }
            Nepenthe.restore(snapshot, target);
            return RestoreResponse.newBuilder().setTarget(target.toString()).build();
        });
    }

    private static Path path(String p, String field) {
        if (p.isBlank()) {
            throw new IllegalArgumentException(field + ": expected a folder path, got none");
        }
        return Path.of(p).toAbsolutePath().normalize();
    }
}
