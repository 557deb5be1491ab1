package dev.nepenthe.server.grpc;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Where a server's writes are decided when it is one replica of several: the server hands every
 * write call to this instead of running it, and waits for it before every read. A server without
 * one runs its writes on its own store. The implementation (the cluster module's) orders each write
 * in a replicated log and runs it on every replica with that replica's {@link WriteApplier}; the
 * result that comes back is the one the caller gets.
 */
public interface Replication {

    /**
     * Orders one write and runs it on every replica.
     *
     * @param call the write, its caller and its request
     * @return completes with what the write came to once it is durable on a majority and applied
     *     here; completes exceptionally only when it could not be ordered (no leader in time), with
     *     a {@link io.grpc.StatusRuntimeException} saying so
     */
    CompletableFuture<RoutedResult> write(RoutedCall call);

    /**
     * Completes when this replica may answer a read: at once for a stale read a client asked for
     * (header {@value ReplicationInterceptor#CONSISTENCY_HEADER}: {@code stale}), once it has
     * applied everything committed when the read arrived otherwise.
     *
     * @param stale whether the client accepts a stale read
     * @return completes when the read may run, exceptionally with a {@link
     *     io.grpc.StatusRuntimeException} when it may not
     */
    CompletableFuture<Void> readable(boolean stale);

    /**
     * Answers a read the replication knows better than this replica's store (a replicated forget
     * operation, say), after {@link #readable}. Empty leaves the read to the service.
     *
     * @param call the read, its caller and its request
     * @return the answer, or empty
     */
    default Optional<RoutedResult> answer(RoutedCall call) {
        return Optional.empty();
    }
}
