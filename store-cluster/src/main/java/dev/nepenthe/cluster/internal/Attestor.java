package dev.nepenthe.cluster.internal;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import dev.nepenthe.core.Nepenthe;
import dev.nepenthe.core.forget.ForgetOperation;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * This replica's voice in the group: it records its keys in the ledger (a JOIN entry, until the
 * ledger holds them), and for each replicated forget whose local operation here has settled, it
 * signs an attestation with the node key and puts it in the log. An attestation that changed (a
 * NEEDS_REVIEW operation sealed after a review) is sent again. Runs on its own daemon thread,
 * looking every {@value #PERIOD_MILLIS} ms; sending goes through the leader like any write, so a
 * forget in flight completes across a failover.
 */
final class Attestor implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Attestor.class.getName());
    private static final long PERIOD_MILLIS = 200;
    private static final long RESEND_MILLIS = 3_000;
    private static final Gson GSON = new Gson();

    private final String node;
    private final NodeKey key;
    private final ClusterState state;
    private final Nepenthe store;
    private final ClusterReplication replication;
    private final BooleanSupplier mayJoin;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final Thread thread;
    private volatile boolean closed;
    private long lastJoin;

    Attestor(
            String node,
            NodeKey key,
            ClusterState state,
            Nepenthe store,
            ClusterReplication replication,
            BooleanSupplier mayJoin) {
        this.node = node;
        this.key = key;
        this.state = state;
        this.store = store;
        this.replication = replication;
        this.mayJoin = mayJoin;
        this.thread =
                Thread.ofPlatform().daemon().name("nepenthe-attestor-" + node).unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    private void run() {
        while (!closed) {
            try {
                round();
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // A round that failed (the store closing, no leader) is tried again next period.
            }
        }
    }

    private void round() {
        if (state.nodeKey(node).isEmpty()
                && mayJoin.getAsBoolean()
                && System.currentTimeMillis() - lastJoin > RESEND_MILLIS) {
            lastJoin = System.currentTimeMillis();
            JsonObject o = new JsonObject();
            o.addProperty("node", node);
            o.addProperty("nodeKey", key.publicBase64());
            o.addProperty("storeKey", store.publicKeyPem());
            send(
                    "join",
                    new Command(Command.Kind.JOIN, o.toString().getBytes(StandardCharsets.UTF_8)));
        }
        if (state.nodeKey(node).isEmpty()) {
            return; // an attestation would not verify before the key is recorded
        }
        for (ClusterForget f : state.open()) {
            if (!f.members.contains(node) || f.excused.containsKey(node)) {
                continue;
            }
            Optional<String> localId = state.localOperation(f.id);
            if (localId.isEmpty()) {
                continue;
            }
            Optional<ForgetOperation> op = store.operation(localId.get());
            if (op.isEmpty() || !op.get().state().isSettled()) {
                continue;
            }
            String localState = op.get().state().name();
            if (localState.equals(f.state(node))) {
                continue;
            }
            String receipt = op.get().receipt() == null ? "" : op.get().receipt();
            Attestation a =
                    Attestation.signed(
                            key, state.group(), f.id, f.index, node, localState, receipt);
            send(
                    f.id + "/" + localState,
                    new Command(
                            Command.Kind.ATTEST, GSON.toJson(a).getBytes(StandardCharsets.UTF_8)));
        }
    }

    private void send(String what, Command c) {
        if (!inFlight.add(what)) {
            return;
        }
        CompletableFuture<?> _ =
                replication
                        .send(c)
                        .whenComplete(
                                (r, t) -> {
                                    inFlight.remove(what);
                                    // A replica still catching up attests a forget the
                                    // group sealed meanwhile: nothing to say about that.
                                    boolean late =
                                            t == null && r.description().endsWith("sealed already");
                                    if ((t != null || !r.ok()) && !late) {
                                        LOG.log(
                                                System.Logger.Level.WARNING,
                                                "{0}: a {1} entry was not taken ({2}); it is sent"
                                                        + " again",
                                                node,
                                                c.kind(),
                                                t != null
                                                        ? t.getClass().getSimpleName()
                                                        : r.description());
                                    }
                                });
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
