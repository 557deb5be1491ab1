package dev.nepenthe.server.cli;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import java.util.concurrent.Executor;

/**
 * "authorization: Bearer TOKEN" on every call of the stub it is attached to; the token is never
 * printed. Shared by every client command that talks to a server or a replica.
 */
public final class BearerToken extends CallCredentials {

    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final String token;

    /**
     * Credentials for one token.
     *
     * @param token the bearer token, as its token file holds it
     */
    public BearerToken(String token) {
        this.token = token;
    }

    @Override
    public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
        Metadata m = new Metadata();
        m.put(AUTHORIZATION, "Bearer " + token);
        applier.apply(m);
    }

    @Override
    public String toString() {
        return "BearerToken(not shown)";
    }
}
