package dev.nepenthe.server.grpc;

import dev.nepenthe.core.StoreReadOnlyException;
import dev.nepenthe.core.UnknownCollectionException;
import dev.nepenthe.core.forget.ForgottenScopeException;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.Callable;

/**
 * How the store's exceptions become gRPC statuses. The store's messages say what was expected and
 * what arrived, and name files, counts and ids, never content, so they are passed on as the
 * description: whole to a store operator, without server file paths to anyone else ({@link
 * Redaction}; a storage failure's path is logged instead). An exception the store did not
 * anticipate becomes INTERNAL with its class name only (its message could quote anything) and is
 * logged the same way.
 */
final class Statuses {

    private static final System.Logger LOG = System.getLogger(Statuses.class.getName());

    private Statuses() {}

    static StatusRuntimeException of(Throwable t) {
        StatusRuntimeException s = status(t);
        Caller caller = Caller.KEY.get();
        String d = s.getStatus().getDescription();
        if ((caller != null && caller.storeOperator()) || d == null) {
            return s;
        }
        String redacted = Redaction.paths(d);
        if (redacted.equals(d)) {
            return s;
        }
        if (s.getStatus().getCode() == Status.Code.UNAVAILABLE) {
            LOG.log(System.Logger.Level.WARNING, "a call failed on storage: {0}", d);
        }
        return s.getStatus().withDescription(redacted).asRuntimeException(s.getTrailers());
    }

    private static StatusRuntimeException status(Throwable t) {
        return switch (t) {
            case StatusRuntimeException s -> s;
            case Limits.LimitExceeded e ->
                    Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage()).asRuntimeException();
            case UnknownCollectionException e ->
                    Status.NOT_FOUND.withDescription(e.getMessage()).asRuntimeException();
            case ForgottenScopeException e ->
                    Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException();
            case IllegalArgumentException e ->
                    Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
            case IllegalStateException e ->
                    Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException();
            // Not a failure of this call: an earlier write failed and the store takes none until it
            // is reopened. Retrying will not help, so not UNAVAILABLE. The message names no file.
            case StoreReadOnlyException e ->
                    Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException();
            case UncheckedIOException e -> unavailable(e.getMessage());
            case IOException e -> unavailable(e.getMessage());
            default -> {
                LOG.log(
                        System.Logger.Level.ERROR,
                        "unexpected " + t.getClass().getName() + " in a gRPC call");
                yield Status.INTERNAL
                        .withDescription(
                                "the server failed ("
                                        + t.getClass().getSimpleName()
                                        + "); its log has the class")
                        .asRuntimeException();
            }
        };
    }

    private static StatusRuntimeException unavailable(String message) {
        return Status.UNAVAILABLE
                .withDescription("storage failed: " + message)
                .asRuntimeException();
    }

    /**
     * Runs a unary call: its value, or the status its exception maps to. A call whose client has
     * gone, or whose deadline passed while it waited for a thread, is not run: gRPC has ended it.
     */
    static <T> void unary(StreamObserver<T> out, Callable<T> body) {
        if (Context.current().isCancelled()) {
            return;
        }
        T value;
        try {
            value = body.call();
        } catch (Throwable t) {
            out.onError(of(t));
            return;
        }
        out.onNext(value);
        out.onCompleted();
    }
}
