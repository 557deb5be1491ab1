package dev.nepenthe.cluster.chaos;

import dev.nepenthe.cluster.chaos.History.Forget;
import dev.nepenthe.cluster.cli.LedgerKeys;
import dev.nepenthe.grpc.v1.ClusterStatus;
import dev.nepenthe.grpc.v1.ForgetRequest;
import dev.nepenthe.grpc.v1.ForgetScope;
import dev.nepenthe.grpc.v1.GetOperationRequest;
import dev.nepenthe.grpc.v1.Operation;
import dev.nepenthe.grpc.v1.ReplicaStatus;
import dev.nepenthe.grpc.v1.SurfaceOutcome;
import dev.nepenthe.grpc.v1.Suspect;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the round does after its workload, before any check: every replica running again, every
 * forget issued found (a forget whose every call went unanswered may not exist: a last call with
 * its key creates or finds it) and SEALED, every replica at the leader's commit index, and the
 * three ledgers the same file. Each step is bounded by the round's hard deadline; a step that does
 * not finish in time is a failure, named.
 */
final class Healing {

    private final ChaosNodes nodes;
    private final ChaosClients clients;
    private final History history;
    private final long deadline;
    private final List<String> failures;
    private int turn;

    /**
     * @param deadline System.nanoTime() by which healing must be done
     * @param failures where a step that did not finish is named
     */
    Healing(
            ChaosNodes nodes,
            ChaosClients clients,
            History history,
            long deadline,
            List<String> failures) {
        this.nodes = nodes;
        this.clients = clients;
        this.history = history;
        this.deadline = deadline;
        this.failures = failures;
    }

    private Duration left() {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    private boolean timeLeft() {
        return System.nanoTime() < deadline;
    }

    /** Returns the receipt of every forget that sealed, by subject. */
    Map<String, String> heal() throws IOException, InterruptedException {
        for (int i = 0; i < ChaosNodes.N; i++) {
            if (!nodes.alive(i)) {
                nodes.start(i);
            }
        }
        for (int i = 0; i < ChaosNodes.N; i++) {
            nodes.awaitServing(clients, i, left());
        }
        Map<String, String> receipts = new LinkedHashMap<>();
        for (Forget f : history.forgets()) {
            String op = f.operationId() != null ? f.operationId() : lastCall(f);
            if (op == null) {
                continue;
            }
            String receipt = awaitSealed(f, op);
            if (receipt != null) {
                receipts.put(f.subject(), receipt);
            }
        }
        awaitCaughtUp();
        awaitSameLedgers();
        return receipts;
    }

    private int nextReplica() {
        return turn++ % ChaosNodes.N;
    }

    /** The forget of a subject whose every call went unanswered, sent again with its key. */
    private String lastCall(Forget f) throws InterruptedException {
        ForgetRequest req =
                ForgetRequest.newBuilder()
                        .setScope(ForgetScope.newBuilder().setSubject(f.subject()))
                        .setIdempotencyKey(f.key())
                        .setReasonCode("chaos-test")
                        .build();
        String last = "no call made";
        while (timeLeft()) {
            int via = nextReplica();
            try {
                Operation op = clients.forget(via).forget(req);
                history.forgetCall(
                        f, op.getState() + " via " + nodes.id(via) + " (healing)", op.getId());
                return op.getId();
            } catch (StatusRuntimeException e) {
                last = e.getStatus().toString();
                history.forgetCall(
                        f, e.getStatus().getCode() + " via " + nodes.id(via) + " (healing)", null);
                if (ChaosClients.classify(e) == ChaosClients.Outcome.REFUSED
                        && e.getStatus().getCode() != io.grpc.Status.Code.UNAVAILABLE) {
                    break;
                }
            }
            Thread.sleep(300);
        }
        failures.add(
                "the forget of subject "
                        + f.subject()
                        + " (key "
                        + f.key()
                        + ") got no operation even after healing; calls "
                        + f.calls()
                        + ", last error "
                        + last);
        return null;
    }

    private String awaitSealed(Forget f, String op) throws InterruptedException {
        Operation seen = null;
        String error = null;
        // At least one look, so one forget that used up the time does not hide how the rest stand.
        for (boolean first = true; first || timeLeft(); first = false) {
            try {
                seen =
                        clients.forget(nextReplica())
                                .getOperation(GetOperationRequest.newBuilder().setId(op).build());
                if (seen.getSettled()) {
                    break;
                }
            } catch (StatusRuntimeException e) {
                error = e.getStatus().toString();
            }
            Thread.sleep(250);
        }
        if (seen != null && seen.getSettled() && seen.getState().equals("SEALED")) {
            return seen.getReceipt();
        }
        failures.add(
                "the forget of subject "
                        + f.subject()
                        + " ("
                        + op
                        + ", calls "
                        + f.calls()
                        + ") did not seal: "
                        + (seen == null
                                ? "no answer (" + error + ")"
                                : seen.getState()
                                        + (seen.getSettled() ? " (settled)" : "")
                                        + " note '"
                                        + seen.getNote()
                                        + "' suspects "
                                        + seen.getSuspectsCount()
                                        + "; as each replica sees it: "
                                        + perReplica(op)));
        return null;
    }

    /** Each replica's own view of an operation: its state and every surface that is not clean. */
    private String perReplica(String op) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < ChaosNodes.N; i++) {
            out.append(nodes.id(i)).append(": ");
            try {
                Operation o =
                        clients.forget(i)
                                .getOperation(GetOperationRequest.newBuilder().setId(op).build());
                out.append(o.getState()).append(" '").append(o.getNote()).append("'");
                for (SurfaceOutcome s : o.getSurfacesList()) {
                    if (!s.getClean()) {
                        out.append(" [surface ")
                                .append(s.getSurface())
                                .append(" not clean: problems ")
                                .append(s.getProblemsList())
                                .append(", residual '")
                                .append(s.getResidual())
                                .append("']");
                    }
                }
                for (Suspect x : o.getSuspectsList()) {
                    out.append(" [suspect ").append(x.toString().replace('\n', ' ')).append(']');
                }
            } catch (StatusRuntimeException e) {
                out.append(e.getStatus());
            }
            out.append("; ");
        }
        return out.toString();
    }

    /**
     * Until every replica sees a leader and every member at lag 0 with the same commit index, and
     * all three agree on it.
     */
    private void awaitCaughtUp() throws InterruptedException {
        String last = "";
        for (boolean first = true; first || timeLeft(); first = false) {
            StringBuilder seen = new StringBuilder();
            long commit = Long.MIN_VALUE;
            boolean even = true;
            for (int i = 0; i < ChaosNodes.N; i++) {
                try {
                    ClusterStatus s = clients.status(i);
                    seen.append(nodes.id(i)).append(" sees leader '").append(s.getLeader());
                    seen.append("':");
                    even &= !s.getLeader().isEmpty();
                    for (ReplicaStatus r : s.getReplicasList()) {
                        seen.append(' ').append(r.getId()).append('@').append(r.getCommitIndex());
                        seen.append("/lag ").append(r.getLag());
                        even &= r.getLag() == 0;
                        if (commit == Long.MIN_VALUE) {
                            commit = r.getCommitIndex();
                        }
                        even &= r.getCommitIndex() == commit;
                    }
                    seen.append("; ");
                } catch (StatusRuntimeException e) {
                    seen.append(nodes.id(i)).append(": ").append(e.getStatus()).append("; ");
                    even = false;
                }
            }
            last = seen.toString();
            if (even) {
                return;
            }
            Thread.sleep(250);
        }
        failures.add("the replicas did not reach lag 0 in time: " + last);
    }

    private void awaitSameLedgers() throws IOException, InterruptedException {
        byte[][] ledgers = new byte[ChaosNodes.N][];
        while (true) {
            for (int i = 0; i < ChaosNodes.N; i++) {
                Path p = LedgerKeys.ledgerOf(nodes.dataDir(i));
                ledgers[i] = Files.exists(p) ? Files.readAllBytes(p) : new byte[0];
            }
            if (Arrays.equals(ledgers[0], ledgers[1]) && Arrays.equals(ledgers[0], ledgers[2])) {
                return;
            }
            if (!timeLeft()) {
                break;
            }
            Thread.sleep(250);
        }
        StringBuilder sizes = new StringBuilder();
        for (int i = 0; i < ChaosNodes.N; i++) {
            sizes.append(nodes.id(i)).append(' ').append(ledgers[i].length).append(" bytes; ");
        }
        failures.add("the three ledgers are not the same file: " + sizes);
    }
}
