package dev.nepenthe.server.grpc;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.nepenthe.grpc.v1.AdminGrpc;
import dev.nepenthe.grpc.v1.CollectionsGrpc;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.RecordsGrpc;
import dev.nepenthe.grpc.v1.UpsertResponse;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Makes a server one replica of several: a write call is not run here but handed to the {@link
 * Replication}, which orders it and runs it on every replica (this one included), and the caller
 * gets what it came to; a read waits until this replica may answer it. Sits inside the auth
 * interceptor and the call limiter (a call is counted once, where it arrived) and inside the
 * refusal of requests that did not parse.
 */
final class ReplicationInterceptor implements ServerInterceptor {

    /** The request header by which a client accepts a stale read: {@code stale}. */
    static final String CONSISTENCY_HEADER = "nepenthe-consistency";

    private static final Metadata.Key<String> CONSISTENCY =
            Metadata.Key.of(CONSISTENCY_HEADER, Metadata.ASCII_STRING_MARSHALLER);

    private static final Set<String> WRITES =
            Set.of(
                    CollectionsGrpc.getCreateMethod().getFullMethodName(),
                    CollectionsGrpc.getDropMethod().getFullMethodName(),
                    RecordsGrpc.getUpsertMethod().getFullMethodName(),
                    RecordsGrpc.getDeleteMethod().getFullMethodName(),
                    ForgetGrpc.getForgetMethod().getFullMethodName(),
                    ForgetGrpc.getPlaceHoldMethod().getFullMethodName(),
                    ForgetGrpc.getLiftHoldMethod().getFullMethodName(),
                    ForgetGrpc.getReadmitMethod().getFullMethodName());

    /** Reads of the replicated state; the rest (stats, keys, ledger checks) are this node's own. */
    private static final Set<String> READS =
            Set.of(
                    CollectionsGrpc.getListMethod().getFullMethodName(),
                    CollectionsGrpc.getDescribeMethod().getFullMethodName(),
                    RecordsGrpc.getGetMethod().getFullMethodName(),
                    RecordsGrpc.getSearchMethod().getFullMethodName(),
                    ForgetGrpc.getGetOperationMethod().getFullMethodName(),
                    ForgetGrpc.getWatchMethod().getFullMethodName(),
                    ForgetGrpc.getListHoldsMethod().getFullMethodName());

    /** Answered by the replication alone, for a store operator. */
    private static final Set<String> CLUSTER =
            Set.of(
                    AdminGrpc.getGetClusterStatusMethod().getFullMethodName(),
                    AdminGrpc.getExcuseReplicaMethod().getFullMethodName(),
                    AdminGrpc.getAddReplicaMethod().getFullMethodName(),
                    AdminGrpc.getRemoveReplicaMethod().getFullMethodName());

    private static final String UPSERT = RecordsGrpc.getUpsertMethod().getFullMethodName();
    private static final String UPSERT_STREAM =
            RecordsGrpc.getUpsertStreamMethod().getFullMethodName();
    private static final String WATCH = ForgetGrpc.getWatchMethod().getFullMethodName();
    private static final String RESTORE = AdminGrpc.getRestoreMethod().getFullMethodName();

    /** How long a read waits for this replica to catch up before it is refused. */
    private static final long READ_WAIT_SECONDS = 10;

    /** How often a watch of an operation the replication answers looks again. */
    private static final long WATCH_POLL_MILLIS = 200;

    private final Replication replication;
    private final StreamSlots slots;

    ReplicationInterceptor(Replication replication, StreamSlots slots) {
        this.replication = replication;
        this.slots = slots;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (WRITES.contains(method)) {
            call.request(2); // a second message is refused, as a unary handler would
            return new UnaryWrite<>(call, method, Caller.current());
        }
        if (method.equals(UPSERT_STREAM)) {
            return new StreamedUpserts<>(call, Caller.current(), slots, replication);
        }
        if (method.equals(RESTORE)) {
            call.close(
                    Status.FAILED_PRECONDITION.withDescription(
                            "expected a single-node server for a restore, got a replica of a"
                                    + " cluster: restoring one replica in place would part it from"
                                    + " the others; add a new replica instead, which catches up"
                                    + " from the group"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        if (CLUSTER.contains(method)) {
            Caller caller = Caller.current();
            if (!caller.storeOperator()) {
                call.close(
                        Status.PERMISSION_DENIED.withDescription(
                                "expected the store-operator role for "
                                        + method
                                        + ", got "
                                        + caller.role().name()),
                        new Metadata());
                return new ServerCall.Listener<>() {};
            }
            call.request(2);
            return new Answered<>(call, method, caller);
        }
        if (READS.contains(method)) {
            boolean stale = "stale".equalsIgnoreCase(headers.get(CONSISTENCY));
            return new BarrierRead<>(next.startCall(call, headers), call, method, stale);
        }
        return next.startCall(call, headers);
    }

    private static <T> byte[] bytes(MethodDescriptor.Marshaller<T> m, T message) {
        try (InputStream in = m.stream(message)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // an in-memory message does not fail
        }
    }

    private static Status statusOf(Throwable t) {
        Throwable c = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        if (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        return c instanceof StatusRuntimeException s
                ? s.getStatus()
                : Status.UNAVAILABLE.withDescription(
                        "the write could not be ordered (" + c.getClass().getSimpleName() + ")");
    }

    /** Ends a call with a routed result; a call already closed or cancelled is left alone. */
    private static <Q, R> void finish(ServerCall<Q, R> call, RoutedResult r) {
        synchronized (call) {
            try {
                if (!r.ok()) {
                    call.close(r.status(), new Metadata());
                    return;
                }
                R response =
                        call.getMethodDescriptor()
                                .parseResponse(new ByteArrayInputStream(r.response()));
                call.sendHeaders(new Metadata());
                call.sendMessage(response);
                call.close(Status.OK, new Metadata());
            } catch (IllegalStateException e) {
                // The client went away while the write was being ordered; the write stands.
            }
        }
    }

    /** A unary write: ordered and run on every replica; the caller gets this replica's result. */
    private final class UnaryWrite<Q, R> extends ServerCall.Listener<Q> {
        private final ServerCall<Q, R> call;
        private final String method;
        private final Caller caller;
        private Q request;
        private boolean closed;

        UnaryWrite(ServerCall<Q, R> call, String method, Caller caller) {
            this.call = call;
            this.method = method;
            this.caller = caller;
        }

        @Override
        public void onMessage(Q message) {
            if (request != null && !closed) {
                closed = true;
                call.close(
                        Status.INVALID_ARGUMENT.withDescription(
                                "expected one request message, got a second"),
                        new Metadata());
            }
            request = message;
        }

        @Override
        public void onHalfClose() {
            if (closed) {
                return;
            }
            if (request == null) {
                call.close(
                        Status.INVALID_ARGUMENT.withDescription(
                                "expected one request message, got none"),
                        new Metadata());
                return;
            }
            byte[] body = bytes(call.getMethodDescriptor().getRequestMarshaller(), request);
            request = null;
            // finish() ends the call either way; nothing is left to observe on the future.
            CompletableFuture<RoutedResult> _ =
                    replication
                            .write(RoutedCall.of(method, caller, body))
                            .whenComplete(
                                    (r, t) ->
                                            finish(
                                                    call,
                                                    t == null ? r : RoutedResult.of(statusOf(t))));
        }
    }

    /**
     * A stream of upserts: each message is one replicated upsert, in order, the next asked for when
     * the last is applied; the response counts what was stored. A failed batch ends the stream
     * (earlier ones stand, as on a single node).
     */
    private static final class StreamedUpserts<Q, R> extends ServerCall.Listener<Q> {
        private final ServerCall<Q, R> call;
        private final Caller caller;
        private final Replication replication;
        private final StreamSlots.Slot slot;
        private CompletableFuture<Long> tail = CompletableFuture.completedFuture(0L);
        private volatile boolean failed;

        StreamedUpserts(
                ServerCall<Q, R> call, Caller caller, StreamSlots slots, Replication replication) {
            this.call = call;
            this.caller = caller;
            this.replication = replication;
            StreamSlots.Slot s = null;
            try {
                s = slots.acquire(caller);
                call.request(1);
            } catch (RuntimeException e) {
                failed = true;
                call.close(Statuses.of(e).getStatus(), new Metadata());
            }
            this.slot = s;
        }

        @Override
        public void onMessage(Q message) {
            if (failed) {
                return;
            }
            byte[] body = bytes(call.getMethodDescriptor().getRequestMarshaller(), message);
            tail =
                    tail.thenCompose(
                            stored ->
                                    replication
                                            .write(RoutedCall.of(UPSERT, caller, body))
                                            .thenApply(r -> add(stored, r)));
            CompletableFuture<Long> _ =
                    tail.whenComplete(
                            (stored, t) -> {
                                if (t != null) {
                                    // A batch failed: the stream ends now (earlier batches
                                    // stand), rather than when the client stops sending.
                                    failed = true;
                                    release();
                                    finish(call, RoutedResult.of(statusOf(t)));
                                    return;
                                }
                                synchronized (call) {
                                    try {
                                        call.request(1);
                                    } catch (IllegalStateException e) {
                                        // cancelled meanwhile
                                    }
                                }
                            });
        }

        private long add(long stored, RoutedResult r) {
            if (!r.ok()) {
                throw new StatusRuntimeException(
                        r.status()
                                .augmentDescription(
                                        "after " + stored + " records of this stream were stored"));
            }
            try {
                return stored + UpsertResponse.parseFrom(r.response()).getUpserted();
            } catch (InvalidProtocolBufferException e) {
                throw new StatusRuntimeException(
                        Status.INTERNAL.withDescription("an upsert's response did not parse"));
            }
        }

        @Override
        public void onHalfClose() {
            if (failed) {
                return;
            }
            CompletableFuture<Long> _ =
                    tail.whenComplete(
                            (stored, t) -> {
                                release();
                                byte[] response =
                                        t == null
                                                ? UpsertResponse.newBuilder()
                                                        .setUpserted(stored)
                                                        .build()
                                                        .toByteArray()
                                                : new byte[0];
                                finish(
                                        call,
                                        t == null
                                                ? new RoutedResult(0, "", response)
                                                : RoutedResult.of(statusOf(t)));
                            });
        }

        @Override
        public void onCancel() {
            failed = true;
            release();
        }

        private void release() {
            if (slot != null) {
                slot.release();
            }
        }
    }

    /** A call the replication answers (it may wait on the log, as an excuse does). */
    private final class Answered<Q, R> extends ServerCall.Listener<Q> {
        private final ServerCall<Q, R> call;
        private final String method;
        private final Caller caller;
        private Q request;

        Answered(ServerCall<Q, R> call, String method, Caller caller) {
            this.call = call;
            this.method = method;
            this.caller = caller;
        }

        @Override
        public void onMessage(Q message) {
            request = message;
        }

        @Override
        public void onHalfClose() {
            if (request == null) {
                call.close(
                        Status.INVALID_ARGUMENT.withDescription(
                                "expected one request message, got none"),
                        new Metadata());
                return;
            }
            RoutedCall routed =
                    RoutedCall.of(
                            method,
                            caller,
                            bytes(call.getMethodDescriptor().getRequestMarshaller(), request));
            finish(
                    call,
                    replication
                            .answer(routed)
                            .orElse(
                                    RoutedResult.of(
                                            Status.UNIMPLEMENTED.withDescription(
                                                    "this replica does not answer " + method))));
        }
    }

    /** A read that runs once this replica may answer it, or is answered by the replication. */
    private final class BarrierRead<Q, R>
            extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
        private final ServerCall<Q, R> call;
        private final String method;
        private final boolean stale;
        private final Caller caller;
        private Q request;

        BarrierRead(
                ServerCall.Listener<Q> delegate,
                ServerCall<Q, R> call,
                String method,
                boolean stale) {
            super(delegate);
            this.call = call;
            this.method = method;
            this.stale = stale;
            this.caller = Caller.current();
        }

        @Override
        public void onMessage(Q message) {
            request = message;
            super.onMessage(message);
        }

        @Override
        public void onHalfClose() {
            try {
                replication.readable(stale).get(READ_WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                call.close(Status.CANCELLED.withDescription("interrupted"), new Metadata());
                return;
            } catch (TimeoutException e) {
                call.close(
                        Status.UNAVAILABLE.withDescription(
                                "this replica could not confirm it is up to date within "
                                        + READ_WAIT_SECONDS
                                        + " s (no leader reachable?); retry, or ask for a stale"
                                        + " read with header "
                                        + CONSISTENCY_HEADER
                                        + ": stale"),
                        new Metadata());
                return;
            } catch (ExecutionException e) {
                call.close(statusOf(e), new Metadata());
                return;
            }
            if (request != null) {
                RoutedCall routed =
                        RoutedCall.of(
                                method,
                                caller,
                                bytes(call.getMethodDescriptor().getRequestMarshaller(), request));
                Optional<RoutedResult> answer = replication.answer(routed);
                if (answer.isPresent()) {
                    if (method.equals(WATCH) && answer.get().ok()) {
                        watch(routed, answer.get());
                    } else {
                        finish(call, answer.get());
                    }
                    return;
                }
            }
            super.onHalfClose();
        }

        /** Sends the answered operation each time it changes, until it settles. */
        private void watch(RoutedCall routed, RoutedResult first) {
            RoutedResult r = first;
            byte[] last = null;
            try {
                call.sendHeaders(new Metadata());
                while (!call.isCancelled()) {
                    if (!r.ok()) {
                        call.close(r.status(), new Metadata());
                        return;
                    }
                    if (last == null || !Arrays.equals(last, r.response())) {
                        last = r.response();
                        call.sendMessage(
                                call.getMethodDescriptor()
                                        .parseResponse(new ByteArrayInputStream(last)));
                        if (Operation.parseFrom(last).getSettled()) {
                            call.close(Status.OK, new Metadata());
                            return;
                        }
                    }
                    Thread.sleep(WATCH_POLL_MILLIS);
                    r = replication.answer(routed).orElse(r);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                call.close(Status.CANCELLED.withDescription("interrupted"), new Metadata());
            } catch (InvalidProtocolBufferException e) {
                call.close(
                        Status.INTERNAL.withDescription("an operation did not parse"),
                        new Metadata());
            } catch (IllegalStateException e) {
                // the client went away
            }
        }
    }
}
