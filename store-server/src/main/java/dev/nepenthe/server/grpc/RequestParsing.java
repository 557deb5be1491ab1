package dev.nepenthe.server.grpc;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A request body that does not parse as its message is the caller's mistake, so it should end
 * INVALID_ARGUMENT. grpc-java's protobuf marshaller throws an INTERNAL status there, and an
 * exception thrown while parsing a request escapes the call: the client sees UNKNOWN ("Application
 * error processing RPC"), the server logs a stack trace per request (found by HostileInputTest:
 * 3,000 of 10,000 random bodies), and now and then the stream is closed twice (INTERNAL). So the
 * request marshallers are rebound to catch the failure and hand the call the empty message with a
 * note on this thread, and {@link #REFUSE_UNPARSED}, the innermost interceptor, closes such a call
 * INVALID_ARGUMENT before any service code sees it. grpc parses a request and delivers it to the
 * listener on one thread, one message after the other, so the note is read by the delivery of the
 * very message that failed; every parse clears it first. Responses and the schema that reflection
 * serves stay the service's own.
 */
final class RequestParsing {

    /** Why the last request parsed on this thread did not parse, or null. */
    private static final ThreadLocal<String> FAILED = new ThreadLocal<>();

    private RequestParsing() {}

    /** Closes a call whose request did not parse, INVALID_ARGUMENT, saying what was expected. */
    static final ServerInterceptor REFUSE_UNPARSED =
            new ServerInterceptor() {
                @Override
                public <Q, R> ServerCall.Listener<Q> interceptCall(
                        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
                    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(
                            next.startCall(call, headers)) {
                        private boolean refused;

                        @Override
                        public void onMessage(Q message) {
                            String failure = FAILED.get();
                            if (failure != null) {
                                FAILED.remove();
                                refused = true;
                                call.close(
                                        Status.INVALID_ARGUMENT.withDescription(failure),
                                        new Metadata());
                                return;
                            }
                            if (!refused) {
                                super.onMessage(message);
                            }
                        }

                        @Override
                        public void onHalfClose() {
                            if (!refused) {
                                super.onHalfClose();
                            }
                        }

                        @Override
                        public void onReady() {
                            if (!refused) {
                                super.onReady();
                            }
                        }
                    };
                }
            };

    static ServerServiceDefinition withClearParseErrors(ServerServiceDefinition def) {
        ServiceDescriptor old = def.getServiceDescriptor();
        ServiceDescriptor.Builder sd =
                ServiceDescriptor.newBuilder(old.getName())
                        .setSchemaDescriptor(old.getSchemaDescriptor());
        List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
        for (ServerMethodDefinition<?, ?> m : def.getMethods()) {
            ServerMethodDefinition<?, ?> rebound = rebind(m);
            sd.addMethod(rebound.getMethodDescriptor());
            methods.add(rebound);
        }
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(sd.build());
        methods.forEach(b::addMethod);
        return b.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> rebind(ServerMethodDefinition<Q, R> m) {
        MethodDescriptor<Q, R> md = m.getMethodDescriptor();
        MethodDescriptor<Q, R> clear =
                md.toBuilder(
                                wrap(md.getRequestMarshaller(), md.getFullMethodName()),
                                md.getResponseMarshaller())
                        .build();
        return ServerMethodDefinition.create(clear, m.getServerCallHandler());
    }

    private static <T> MethodDescriptor.Marshaller<T> wrap(
            MethodDescriptor.Marshaller<T> inner, String method) {
        if (inner instanceof MethodDescriptor.PrototypeMarshaller<T> p) {
            return new MethodDescriptor.PrototypeMarshaller<>() {
                @Override
                public T getMessagePrototype() {
                    return p.getMessagePrototype();
                }

                @Override
                public Class<T> getMessageClass() {
                    return p.getMessageClass();
                }

                @Override
                public InputStream stream(T value) {
                    return p.stream(value);
                }

                @Override
                public T parse(InputStream stream) {
                    FAILED.remove();
                    try {
                        return p.parse(stream);
                    } catch (StatusRuntimeException e) {
                        if (e.getStatus().getCode() != Status.Code.INTERNAL) {
                            throw e;
                        }
                        FAILED.set(
                                method
                                        + ": expected a "
                                        + p.getMessageClass().getSimpleName()
                                        + " in protobuf encoding as the request body, got bytes"
                                        + " that do not parse as one");
                        return p.getMessagePrototype();
                    }
                }
            };
        }
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(T value) {
                return inner.stream(value);
            }

            @Override
            public T parse(InputStream stream) {
                return inner.parse(stream);
            }
        };
    }
}
