package dev.nepenthe.cluster.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.server.grpc.RoutedCall;
import dev.nepenthe.server.grpc.RoutedResult;
import dev.nepenthe.server.grpc.WriteApplier;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A replicated forget as a client sees it through the Forget service: this replica's own operation
 * (scope hash, timeline, surfaces) under the replicated id, with the group's state on top. It is
 * SEALED only when every member of the configuration at its index attested SEALED or was excused,
 * and its receipt is then the cluster receipt; until then the note names the members it waits for
 * and why (not yet holding the entry, or not yet attested).
 */
final class ForgetView {

    private static final String GET_OPERATION =
            ForgetGrpc.getGetOperationMethod().getFullMethodName();

    private final ClusterState state;
    private final Supplier<WriteApplier> applier;
    private final Supplier<Map<String, Long>> commitIndexes;

    ForgetView(
            ClusterState state,
            Supplier<WriteApplier> applier,
            Supplier<Map<String, Long>> commitIndexes) {
        this.state = state;
        this.applier = applier;
        this.commitIndexes = commitIndexes;
    }

    RoutedResult operation(String id, RoutedCall call) {
        Optional<ClusterForget> found = state.snapshot(id);
        boolean operator = "STORE_OPERATOR".equals(call.role());
        if (found.isEmpty() || (!operator && !found.get().tenant.equals(call.tenant()))) {
            return RoutedResult.of(
                    Status.NOT_FOUND.withDescription(
                            "expected the id of a forget operation of this caller, got '"
                                    + id
                                    + "', which names none"));
        }
        ClusterForget f = found.get();
        Operation.Builder b = local(id, call).toBuilder().setId(id);
        if (f.sealed()) {
            b.setState("SEALED")
                    .setSettled(true)
                    .setReceipt(f.receipt)
                    .setOutcome(ClusterReceipt.outcomeOf(f.receipt))
                    .setNote("sealed: every member of " + f.members + " accounted for");
        } else {
            String waiting = waitingFor(f);
            List<String> states = new ArrayList<>();
            boolean allIn = true;
            for (String m : f.members) {
                String s = f.excused.containsKey(m) ? "EXCUSED" : f.state(m);
                allIn &= s != null;
                states.add(s);
            }
            String cluster =
                    states.contains("NEEDS_REVIEW")
                            ? "NEEDS_REVIEW"
                            : states.contains("COMPLETED_WITH_EXCEPTION")
                                    ? "COMPLETED_WITH_EXCEPTION"
                                    : "SEALED".equals(b.getState()) ? "VERIFYING" : b.getState();
            b.setState(cluster).setSettled(allIn).setReceipt("").setOutcome("").setNote(waiting);
        }
        return new RoutedResult(0, "", b.build().toByteArray());
    }

    /** Which members the forget waits for, and for what. */
    String waitingFor(ClusterForget f) {
        Map<String, Long> commits = commitIndexes.get();
        List<String> parts = new ArrayList<>();
        for (String m : f.outstanding()) {
            Long c = commits.get(m);
            if (c == null || c < f.index) {
                parts.add(m + " has not received log index " + f.index + " (down or behind)");
            } else if (f.state(m) == null) {
                parts.add(m + " has not attested yet");
            } else {
                parts.add(m + " attested " + f.state(m));
            }
        }
        return parts.isEmpty() ? "" : "WAITING_FOR_REPLICAS: " + String.join("; ", parts);
    }

    /** This replica's own operation for the forget, as its Forget service shows it. */
    private Operation local(String id, RoutedCall call) {
        Optional<String> localId = state.localOperation(id);
        if (localId.isEmpty()) {
            return Operation.getDefaultInstance();
        }
        RoutedResult r =
                applier.get()
                        .apply(
                                new RoutedCall(
                                        GET_OPERATION,
                                        call.tenant(),
                                        call.role(),
                                        call.tokenId(),
                                        GetOperationRequest.newBuilder()
                                                .setId(localId.get())
                                                .build()
                                                .toByteArray()));
        try {
            return r.ok() ? Operation.parseFrom(r.response()) : Operation.getDefaultInstance();
        } catch (InvalidProtocolBufferException e) {
            return Operation.getDefaultInstance();
        }
    }
}
