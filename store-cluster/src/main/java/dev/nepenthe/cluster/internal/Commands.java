package dev.nepenthe.cluster.internal;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.server.grpc.RoutedCall;
import dev.nepenthe.server.grpc.RoutedResult;
import dev.nepenthe.server.grpc.WriteApplier;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What each kind of log entry does on a replica: a client's write runs through the service code a
 * single server runs (a forget's answer then names the replicated forget), and the group's own
 * entries (attestations, keys, excuses, a member leaving) change the {@link ClusterState}. Every
 * replica applies the same entries in the same order, so each decides alike.
 */
final class Commands {

    private static final String FORGET = ForgetGrpc.getForgetMethod().getFullMethodName();

    private final String self;
    private final Path excusedMarker;
    private final ClusterState state;
    private final AppliedIndex applied;
    private final Supplier<WriteApplier> applier;

    Commands(
            String self,
            Path excusedMarker,
            ClusterState state,
            AppliedIndex applied,
            Supplier<WriteApplier> applier) {
        this.self = self;
        this.excusedMarker = excusedMarker;
        this.state = state;
        this.applied = applied;
        this.applier = applier;
    }

    /**
     * Applies the command of log entry (term, index); the result a caller gets, encoded.
     *
     * @throws IllegalArgumentException or JsonParseException if the body does not parse
     * @throws IOException if the store or the cluster state fails on storage
     */
    byte[] apply(Command.Kind kind, byte[] body, long term, long index) throws IOException {
        return switch (kind) {
            case WRITE -> applyWrite(RoutedCall.decode(body), index).encode();
            case ATTEST -> {
                JsonObject o = object(body);
                Attestation a =
                        new Attestation(
                                field(o, "group"),
                                field(o, "operation"),
                                Long.parseLong(field(o, "index")),
                                field(o, "node"),
                                field(o, "state"),
                                field(o, "localReceipt"),
                                field(o, "signature"));
                yield done(state.attest(a, index));
            }
            case JOIN -> {
                JsonObject o = object(body);
                state.join(field(o, "node"), field(o, "nodeKey"), field(o, "storeKey"), index);
                yield done(Optional.empty());
            }
            case EXCUSE -> {
                JsonObject o = object(body);
                String node = field(o, "node");
                Optional<String> refused =
                        state.excuse(field(o, "operation"), node, field(o, "reason"), index);
                if (refused.isEmpty() && node.equals(self)) {
                    // This replica was excused: its files may hold what the group forgot without
                    // it. It stops here and refuses to start until its folder is wiped.
                    Durable.write(excusedMarker, o.toString());
                    applied.set(term, index);
                    throw new IllegalStateException(
                            "this replica was excused from forget "
                                    + field(o, "operation")
                                    + "; it stops, and starts again only from a wiped folder");
                }
                yield done(refused);
            }
            case LEAVE -> {
                JsonObject o = object(body);
                state.leave(field(o, "node"), field(o, "reason"), index);
                yield done(Optional.empty());
            }
        };
    }

    private RoutedResult applyWrite(RoutedCall call, long index) throws IOException {
        RoutedResult r = applier.get().apply(call);
        if (!call.method().equals(FORGET) || !r.ok()) {
            return r;
        }
        Operation local;
        try {
            local = Operation.parseFrom(r.response());
        } catch (InvalidProtocolBufferException e) {
            return RoutedResult.of(
                    Status.INTERNAL.withDescription("a forget's answer did not parse"));
        }
        ClusterForget f = state.forgetApplied(index, call.tenant(), local.getId());
        return new RoutedResult(0, "", local.toBuilder().setId(f.id).build().toByteArray());
    }

    private static JsonObject object(byte[] body) {
        JsonElement e = JsonParser.parseString(utf8(body));
        if (!e.isJsonObject()) {
            throw new IllegalArgumentException("expected a JSON object");
        }
        return e.getAsJsonObject();
    }

    private static String field(JsonObject o, String name) {
        JsonElement e = o.get(name);
        if (e == null || !e.isJsonPrimitive()) {
            throw new IllegalArgumentException("expected a field '" + name + "'");
        }
        return e.getAsString();
    }

    private static byte[] done(Optional<String> refusal) {
        return refusal.map(why -> RoutedResult.of(Status.FAILED_PRECONDITION.withDescription(why)))
                .orElseGet(() -> new RoutedResult(0, "", new byte[0]))
                .encode();
    }

    private static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
