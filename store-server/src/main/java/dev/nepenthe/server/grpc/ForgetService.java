package dev.nepenthe.server.grpc;

import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.audit.LedgerAudit;
import dev.nepenthe.core.audit.LedgerVerification;
import dev.nepenthe.core.forget.ForgetOperation;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.LegalHold;
import dev.nepenthe.grpc.v1.ForgetGrpc;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.LiftHoldRequest;
import dev.nepenthe.grpc.v1.ListHoldsRequest;
import dev.nepenthe.grpc.v1.ListHoldsResponse;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.PlaceHoldRequest;
import dev.nepenthe.grpc.v1.PublicKey;
import dev.nepenthe.grpc.v1.PublicKeyRequest;
import dev.nepenthe.grpc.v1.Readmission;
import dev.nepenthe.grpc.v1.ReadmitRequest;
import dev.nepenthe.grpc.v1.ReceiptCheck;
import dev.nepenthe.grpc.v1.VerifyLedgerRequest;
import dev.nepenthe.grpc.v1.VerifyReceiptRequest;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * The forget protocol over gRPC, scoped to the caller's tenant: a forget, an operation, a hold of
 * another tenant is NOT_FOUND, exactly as one that does not exist. {@link #watch} streams the
 * operation each time it sees a new state, until a settled one; a phase shorter than its poll
 * interval may pass unseen, and every message's timeline lists every state entered so far. Ledger
 * verification is a store operator's call (the ledger counts every tenant's operations); a
 * receipt's check and the public key are anyone's.
 */
final class ForgetService extends ForgetGrpc.ForgetImplBase {

    /** How often a watch looks at its operation; a state lasts at least a few milliseconds. */
    private static final long WATCH_POLL_MILLIS = 10;

    private final Nepenthe store;
    private final StreamSlots slots;
    private final Limits limits;

    ForgetService(Nepenthe store, StreamSlots slots, Limits limits) {
        this.store = store;
        this.slots = slots;
        this.limits = limits;
    }

    /** A scope, its metadata filter held to the same bounds as a search's. */
    private dev.nepenthe.core.forget.ForgetScope scope(dev.nepenthe.grpc.v1.ForgetScope s) {
        if (s.hasMetadata()) {
            QueryChecks.filter(s.getMetadata(), limits.queries(), "scope.metadata");
        }
        return Protos.scope(s);
    }

    @Override
    public void forget(dev.nepenthe.grpc.v1.ForgetRequest request, StreamObserver<Operation> out) {
        Statuses.unary(
                out,
                () -> {
                    ForgetRequest r =
                            new ForgetRequest(
                                    Caller.current().tenant(),
                                    scope(request.getScope()),
                                    request.getIdempotencyKey(),
                                    request.getReasonCode(),
                                    request.hasProbeThreshold()
                                            ? request.getProbeThreshold()
                                            : null,
                                    Protos.level(request.getLevel()),
                                    request.getIdentifiersList(),
                                    request.getExactProbe());
                    return Protos.operation(store.forget(r));
                });
    }

    @Override
    public void getOperation(GetOperationRequest request, StreamObserver<Operation> out) {
        Statuses.unary(out, () -> Protos.operation(own(request.getId())));
    }

    @Override
    public void watch(GetOperationRequest request, StreamObserver<Operation> out) {
        ServerCallStreamObserver<Operation> call = (ServerCallStreamObserver<Operation>) out;
        StreamSlots.Slot slot;
        ForgetOperation op;
        try {
            slot = slots.acquire(Caller.current());
        } catch (RuntimeException e) {
            out.onError(Statuses.of(e));
            return;
        }
        try {
            op = own(request.getId());
            String last = null;
            while (true) {
                if (call.isCancelled() || Context.current().isCancelled()) {
                    // The client went away or its deadline passed: gRPC has ended the call.
                    return;
                }
                String state = op.state().name();
                if (!state.equals(last)) {
                    out.onNext(Protos.operation(op));
                    last = state;
                }
                if (op.state().isSettled()) {
                    out.onCompleted();
                    return;
                }
                Thread.sleep(WATCH_POLL_MILLIS);
                op = own(request.getId());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            out.onError(
                    Status.CANCELLED
                            .withDescription("the server is shutting down")
                            .asRuntimeException());
        } catch (Throwable t) {
            out.onError(Statuses.of(t));
        } finally {
            slot.release();
        }
    }

    @Override
    public void placeHold(
            PlaceHoldRequest request, StreamObserver<dev.nepenthe.grpc.v1.LegalHold> out) {
        Statuses.unary(
                out,
                () ->
                        Protos.hold(
                                store.placeHold(
                                        Caller.current().tenant(),
                                        scope(request.getScope()),
                                        request.getReasonCode())));
    }

    @Override
    public void liftHold(
            LiftHoldRequest request, StreamObserver<dev.nepenthe.grpc.v1.LegalHold> out) {
        Statuses.unary(
                out,
                () -> {
                    ownHold(request.getId());
                    store.liftHold(request.getId());
                    return Protos.hold(ownHold(request.getId()));
                });
    }

    @Override
    public void listHolds(ListHoldsRequest request, StreamObserver<ListHoldsResponse> out) {
        Statuses.unary(
                out,
                () -> {
                    String tenant = Caller.current().tenant();
                    ListHoldsResponse.Builder b = ListHoldsResponse.newBuilder();
                    store.holds().stream()
                            .filter(h -> h.tenant().equals(tenant))
                            .forEach(h -> b.addHolds(Protos.hold(h)));
                    return b.build();
                });
    }

    @Override
    public void readmit(ReadmitRequest request, StreamObserver<Readmission> out) {
        // In the caller's tenant only: another tenant's forgets fence nothing here, so a scope
        // only they forgot is "not fenced", exactly as one nobody forgot.
        Statuses.unary(
                out,
                () ->
                        Protos.readmission(
                                store.readmit(
                                        Caller.current().tenant(),
                                        scope(request.getScope()),
                                        request.getReasonCode())));
    }

    @Override
    public void verifyLedger(
            VerifyLedgerRequest request,
            StreamObserver<dev.nepenthe.grpc.v1.LedgerVerification> out) {
        Statuses.unary(
                out,
                () -> {
                    Role.require(
                            Role.STORE_OPERATOR,
                            "verify the evidence ledger (every tenant's operations)");
                    LedgerVerification v = store.verifyLedger();
                    return dev.nepenthe.grpc.v1.LedgerVerification.newBuilder()
                            .setOk(v.ok())
                            .setEntries(v.entries())
                            .setFirstBadEntry(v.firstBadEntry())
                            .setProblem(v.problem() == null ? "" : v.problem())
                            .setHeadHash(v.headHash() == null ? "" : v.headHash())
                            .build();
                });
    }

    @Override
    public void verifyReceipt(VerifyReceiptRequest request, StreamObserver<ReceiptCheck> out) {
        Statuses.unary(
                out,
                () -> {
                    LedgerAudit.Check c = store.evidence().checkReceipt(request.getReceipt());
                    return ReceiptCheck.newBuilder()
                            .setOk(c.ok())
                            .setProblem(c.problem() == null ? "" : c.problem())
                            .build();
                });
    }

    @Override
    public void getPublicKey(PublicKeyRequest request, StreamObserver<PublicKey> out) {
        Statuses.unary(out, () -> PublicKey.newBuilder().setPem(store.publicKeyPem()).build());
    }

    /** The caller's own operation; another tenant's is reported exactly as a missing one. */
    private ForgetOperation own(String id) {
        return store.operation(id)
                .filter(op -> op.tenant().equals(Caller.current().tenant()))
                .orElseThrow(
                        () ->
                                Status.NOT_FOUND
                                        .withDescription(
                                                "no forget operation with id '"
                                                        + id
                                                        + "' for this caller")
                                        .asRuntimeException());
    }

    private LegalHold ownHold(String id) {
        String tenant = Caller.current().tenant();
        return store.holds().stream()
                .filter(h -> h.id().equals(id) && h.tenant().equals(tenant))
                .findFirst()
                .orElseThrow(
                        () ->
                                Status.NOT_FOUND
                                        .withDescription(
                                                "no legal hold with id '"
                                                        + id
                                                        + "' for this caller")
                                        .asRuntimeException());
    }
}
