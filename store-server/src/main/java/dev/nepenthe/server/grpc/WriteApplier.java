package dev.nepenthe.server.grpc;

import io.grpc.Attributes;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs a {@link RoutedCall} on this replica's store through the very service code a client's call
 * runs through (its checks, its conversions, its query-cache invalidation), on the calling thread,
 * as the caller the call names. No network, token check or call limit is involved: those ran on the
 * node the client called, once. Never throws for what the call does: a service's refusal is a
 * result like any other, so every replica of a log reaches the same results.
 */
public final class WriteApplier {

    private final Map<String, ServerMethodDefinition<?, ?>> methods = new HashMap<>();

    WriteApplier(List<ServerServiceDefinition> services) {
        for (ServerServiceDefinition s : services) {
            for (ServerMethodDefinition<?, ?> m : s.getMethods()) {
                methods.put(m.getMethodDescriptor().getFullMethodName(), m);
            }
        }
    }

    /**
     * Runs one unary call.
     *
     * @param call the call, its caller and its request
     * @return the response's bytes, or the status the service ended the call with
     */
    public RoutedResult apply(RoutedCall call) {
        ServerMethodDefinition<?, ?> m = methods.get(call.method());
        if (m == null || m.getMethodDescriptor().getType() != MethodDescriptor.MethodType.UNARY) {
            return RoutedResult.of(
                    Status.UNIMPLEMENTED.withDescription(
                            "expected a unary method of this server, got '" + call.method() + "'"));
        }
        Caller caller;
        try {
            caller = call.caller();
        } catch (IllegalArgumentException e) {
            return RoutedResult.of(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
        }
        return run(m, caller, call.request());
    }

    private static <Q, R> RoutedResult run(
            ServerMethodDefinition<Q, R> m, Caller caller, byte[] request) {
        MethodDescriptor<Q, R> method = m.getMethodDescriptor();
        Q parsed;
        try {
            parsed = method.parseRequest(new ByteArrayInputStream(request));
        } catch (RuntimeException e) {
            return RoutedResult.of(
                    Status.INVALID_ARGUMENT.withDescription(
                            "expected a "
                                    + method.getFullMethodName()
                                    + " request, got bytes that"
                                    + " do not parse"));
        }
        Capture<Q, R> call = new Capture<>(method);
        Context context = Context.current().withValue(Caller.KEY, caller);
        try {
            ServerCall.Listener<Q> listener =
                    Contexts.interceptCall(context, call, new Metadata(), m.getServerCallHandler());
            listener.onReady();
            listener.onMessage(parsed);
            listener.onHalfClose();
            listener.onComplete();
        } catch (RuntimeException e) {
            // What Statuses.unary did not map: the service's own code failed.
            return RoutedResult.of(
                    Status.INTERNAL.withDescription(
                            "the server failed ("
                                    + e.getClass().getSimpleName()
                                    + ") applying "
                                    + method.getFullMethodName()));
        }
        return call.result();
    }

    /** A server call that keeps what the service sends. */
    private static final class Capture<Q, R> extends ServerCall<Q, R> {
        private final MethodDescriptor<Q, R> method;
        private R response;
        private Status status;

        Capture(MethodDescriptor<Q, R> method) {
            this.method = method;
        }

        RoutedResult result() {
            if (status == null) {
                return RoutedResult.of(
                        Status.INTERNAL.withDescription(
                                method.getFullMethodName() + " ended without a status"));
            }
            if (!status.isOk()) {
                return RoutedResult.of(status);
            }
            if (response == null) {
                return RoutedResult.of(
                        Status.INTERNAL.withDescription(
                                method.getFullMethodName() + " ended OK without a response"));
            }
            try (InputStream in = method.streamResponse(response)) {
                return new RoutedResult(0, "", in.readAllBytes());
            } catch (IOException e) {
                return RoutedResult.of(
                        Status.INTERNAL.withDescription("a response did not serialise"));
            }
        }

        @Override
        public void request(int numMessages) {}

        @Override
        public void sendHeaders(Metadata headers) {}

        @Override
        public void sendMessage(R message) {
            response = message;
        }

        @Override
        public void close(Status s, Metadata trailers) {
            if (status == null) {
                status = s;
            }
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public Attributes getAttributes() {
            return Attributes.EMPTY;
        }

        @Override
        public MethodDescriptor<Q, R> getMethodDescriptor() {
            return method;
        }
    }
}
