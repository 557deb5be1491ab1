package dev.nepenthe.server.grpc;

import io.grpc.Context;

/**
 * Who is calling, as the bearer token says: the tenant every call of theirs is scoped to, their
 * {@link Role}, and a short id of the token (a prefix of its hash, never the token) for per-caller
 * limits.
 */
record Caller(String tenant, Role role, String tokenId) {

    static final Context.Key<Caller> KEY = Context.key("nepenthe-caller");

    /** Whether this caller may act on the whole store, past its own tenant. */
    boolean storeOperator() {
        return role == Role.STORE_OPERATOR;
    }

    /** The caller of the current call; the interceptor always sets one before a service runs. */
    static Caller current() {
        Caller c = KEY.get();
        if (c == null) {
            throw new IllegalStateException(
                    "no caller in the gRPC context: the auth interceptor did not run");
        }
        return c;
    }
}
