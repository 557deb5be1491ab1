package dev.nepenthe.server.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Authenticates every call by its bearer token and puts the {@link Caller} in the call's context; a
 * call without a token, or with one the server does not know, ends UNAUTHENTICATED before any
 * service code runs. So does a call with two {@code authorization} headers: which one counts would
 * be an accident of the code, and a proxy that adds its own must not make a caller's second one
 * count. The standard health and reflection services are open (a load balancer's health check
 * carries no token; reflection describes the API, never data).
 *
 * <p>The tokens are asked for on every call, so a tokens file that changed is read again before the
 * call is checked ({@link TokensFile}); when it does not read, every call is refused (UNAVAILABLE)
 * until it does.
 */
final class AuthInterceptor implements ServerInterceptor {

    static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private static final Set<String> OPEN_SERVICES =
            Set.of(
                    "grpc.health.v1.Health",
                    "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection");

    private final Supplier<Tokens> tokens;

    AuthInterceptor(Supplier<Tokens> tokens) {
        this.tokens = tokens;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (OPEN_SERVICES.contains(call.getMethodDescriptor().getServiceName())) {
            return next.startCall(call, headers);
        }
        Iterable<String> all = headers.getAll(AUTHORIZATION);
        int count = 0;
        for (String ignored : all == null ? List.<String>of() : all) {
            count++;
        }
        if (count > 1) {
            call.close(
                    Status.UNAUTHENTICATED.withDescription(
                            "expected one 'authorization' header, got " + count),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        String header = headers.get(AUTHORIZATION);
        if (header == null) {
            call.close(
                    Status.UNAUTHENTICATED.withDescription(
                            "expected an 'authorization: Bearer <token>' header, got none"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            call.close(
                    Status.UNAUTHENTICATED.withDescription(
                            "expected 'authorization: Bearer <token>', got another" + " scheme"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        Tokens now = tokens.get();
        if (now == null) {
            call.close(
                    Status.UNAVAILABLE.withDescription(
                            "the server cannot read its tokens file, so it accepts no call"
                                    + " until its operator fixes it (the server's log says why)"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        Optional<Caller> caller = now.authenticate(header.substring(7).strip());
        if (caller.isEmpty()) {
            // Never the token, not even part of it.
            call.close(
                    Status.UNAUTHENTICATED.withDescription(
                            "the bearer token is not one this server accepts"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        Context ctx = Context.current().withValue(Caller.KEY, caller.get());
        return Contexts.interceptCall(ctx, call, headers, next);
    }
}
