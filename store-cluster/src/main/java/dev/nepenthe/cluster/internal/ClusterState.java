package dev.nepenthe.cluster.internal;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the replicated log holds beyond the records: the configuration's members, the replicas'
 * keys, and the replicated forgets with their attestations. Changed only by applying log entries,
 * in order, so it is the same on every replica; the one exception is which local operation of this
 * replica's store each forget is, kept beside it. Open forgets and the members are in {@code
 * state.json} (rewritten whole, durably, on each change); keys and sealed forgets are in the {@link
 * ClusterLedger}, read back on open.
 */
final class ClusterState {

    private static final Gson GSON = new Gson();

    private final Path file;
    private final ClusterLedger ledger;
    private final String group;
    private List<String> members;
    private final Map<String, ClusterForget> forgets = new LinkedHashMap<>();
    private final Map<String, String> clusterByLocal = new TreeMap<>();
    private final Map<String, String> localByCluster = new TreeMap<>();
    private final Map<String, PublicKey> nodeKeys = new TreeMap<>();
    private final Map<String, String> storeKeys = new TreeMap<>();
    private final Set<String> removed = new TreeSet<>();

    private ClusterState(Path file, ClusterLedger ledger, String group, List<String> members) {
        this.file = file;
        this.ledger = ledger;
        this.group = group;
        this.members = List.copyOf(members);
    }

    /** The state in {@code dir}, or a new one whose members are the group's first configuration. */
    static ClusterState open(Path dir, String group, List<String> initialMembers)
            throws IOException {
        Files.createDirectories(dir);
        ClusterLedger ledger = ClusterLedger.open(dir.resolve("ledger.jsonl"));
        ClusterState s = new ClusterState(dir.resolve("state.json"), ledger, group, initialMembers);
        s.load();
        return s;
    }

    /**
     * Reads the state again from its files, which an installed copy replaced: the members too, as
     * they stood at the copy's index, until Ratis reports a later configuration.
     */
    synchronized void reload() throws IOException {
        ledger.reload();
        forgets.clear();
        clusterByLocal.clear();
        localByCluster.clear();
        nodeKeys.clear();
        storeKeys.clear();
        removed.clear();
        load();
    }

    private void load() throws IOException {
        for (JsonObject e : ledger.entries()) {
            switch (e.get("kind").getAsString()) {
                case "NODE_JOINED" -> {
                    String node = e.get("node").getAsString();
                    nodeKeys.put(node, NodeKey.publicKey(e.get("nodeKey").getAsString()));
                    storeKeys.put(node, e.get("storeKey").getAsString());
                }
                case "NODE_REMOVED" -> removed.add(e.get("node").getAsString());
                case "FORGET_SEALED" -> {
                    ClusterForget f = fromJson(e.getAsJsonObject("forget"));
                    f.receipt = e.get("receipt").getAsString();
                    forgets.put(f.id, f);
                }
                default -> {}
            }
        }
        if (Files.exists(file)) {
            JsonObject o;
            try {
                o =
                        JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8))
                                .getAsJsonObject();
            } catch (RuntimeException e) {
                throw new IOException(
                        file
                                + ": expected the cluster state as JSON, got bytes that do not"
                                + " parse");
            }
            members = strings(o.getAsJsonArray("members"));
            for (var f : o.getAsJsonArray("open")) {
                ClusterForget cf = fromJson(f.getAsJsonObject());
                forgets.putIfAbsent(cf.id, cf);
            }
            for (var e : o.getAsJsonObject("local").entrySet()) {
                map(e.getValue().getAsString(), e.getKey());
            }
        }
    }

    String group() {
        return group;
    }

    ClusterLedger ledger() {
        return ledger;
    }

    synchronized List<String> members() {
        return members;
    }

    synchronized void members(List<String> now) throws IOException {
        if (members.equals(now)) {
            return; // reported again (a restart, each install notice): no write for nothing
        }
        members = List.copyOf(now);
        save();
    }

    synchronized Optional<PublicKey> nodeKey(String node) {
        return Optional.ofNullable(nodeKeys.get(node));
    }

    synchronized Map<String, PublicKey> nodeKeys() {
        return Map.copyOf(nodeKeys);
    }

    /** Records a replica's keys (first time only: a node key once recorded is never replaced). */
    synchronized void join(String node, String nodeKey, String storeKey, long index)
            throws IOException {
        if (nodeKeys.containsKey(node)) {
            return;
        }
        PublicKey key = NodeKey.publicKey(nodeKey);
        JsonObject e = new JsonObject();
        e.addProperty("node", node);
        e.addProperty("nodeKey", nodeKey);
        e.addProperty("storeKey", storeKey);
        ledger.append("NODE_JOINED", index, e);
        nodeKeys.put(node, key);
        storeKeys.put(node, storeKey);
    }

    /**
     * The replicated forget whose local operation this replica's store returned for the forget
     * applied at {@code index}: a new one, or the one an earlier entry with the same idempotency
     * key made (the store returned the same local operation).
     */
    synchronized ClusterForget forgetApplied(long index, String tenant, String localOperation)
            throws IOException {
        String known = clusterByLocal.get(localOperation);
        if (known != null) {
            return forgets.get(known);
        }
        // A member that left (its LEAVE applied) is not waited for, though the configuration may
        // hold it a little longer while the change commits.
        List<String> attesting = members.stream().filter(m -> !removed.contains(m)).toList();
        ClusterForget f =
                new ClusterForget("cfop-" + group8() + "-" + index, index, tenant, attesting);
        forgets.put(f.id, f);
        map(f.id, localOperation);
        save();
        return f;
    }

    synchronized Optional<ClusterForget> forget(String id) {
        return Optional.ofNullable(forgets.get(id));
    }

    /** A copy of a forget as it stands, taken under the lock: its fields agree with each other. */
    synchronized Optional<ClusterForget> snapshot(String id) {
        return Optional.ofNullable(forgets.get(id)).map(ClusterForget::copy);
    }

    synchronized Optional<String> localOperation(String clusterId) {
        return Optional.ofNullable(localByCluster.get(clusterId));
    }

    synchronized Optional<ClusterForget> byLocal(String localOperation) {
        String id = clusterByLocal.get(localOperation);
        return id == null ? Optional.empty() : Optional.ofNullable(forgets.get(id));
    }

    synchronized boolean excused(String operation, String node) {
        ClusterForget f = forgets.get(operation);
        return f != null && f.excused.containsKey(node);
    }

    synchronized List<ClusterForget> open() {
        return forgets.values().stream().filter(f -> !f.sealed()).toList();
    }

    /**
     * Takes an attestation; seals the forget when it accounts for the last member.
     *
     * @return why it was refused, or empty when taken
     */
    synchronized Optional<String> attest(Attestation a, long index) throws IOException {
        ClusterForget f = forgets.get(a.operation());
        if (f == null) {
            return Optional.of("no replicated forget " + a.operation());
        }
        if (f.sealed()) {
            return Optional.of(a.operation() + " is sealed already");
        }
        if (!f.members.contains(a.node())) {
            return Optional.of(a.node() + " was not a member at index " + f.index);
        }
        PublicKey key = nodeKeys.get(a.node());
        if (key == null || !a.verifies(key) || a.index() != f.index || !a.group().equals(group)) {
            return Optional.of(
                    "the attestation of " + a.node() + " does not verify under its recorded key");
        }
        f.attestations.put(a.node(), a);
        sealIfDone(f, index);
        save();
        return Optional.empty();
    }

    /**
     * A member leaves the group: excused from every open forget it has not attested (which may seal
     * them), and recorded as removed. Its keys stay, so receipts it attested still verify offline;
     * an id once removed is never added again (a wiped replica rejoins under a new id, with new
     * keys).
     */
    synchronized void leave(String node, String reason, long index) throws IOException {
        for (ClusterForget f : forgets.values()) {
            if (!f.sealed()
                    && f.members.contains(node)
                    && !f.attestations.containsKey(node)
                    && !f.excused.containsKey(node)) {
                f.excused.put(node, reason);
                sealIfDone(f, index);
            }
        }
        if (removed.add(node)) {
            JsonObject e = new JsonObject();
            e.addProperty("node", node);
            e.addProperty("reason", reason);
            ledger.append("NODE_REMOVED", index, e);
        }
        save();
    }

    /** Whether {@code node} was removed from the group (it may not be added again). */
    synchronized boolean wasRemoved(String node) {
        return removed.contains(node);
    }

    /** An operator excuses a member from a forget (it is down for good); it may seal the forget. */
    synchronized Optional<String> excuse(String operation, String node, String reason, long index)
            throws IOException {
        ClusterForget f = forgets.get(operation);
        if (f == null || f.sealed() || !f.members.contains(node)) {
            return Optional.of(
                    "expected an open replicated forget with member "
                            + node
                            + ", got "
                            + (f == null
                                    ? "no forget " + operation
                                    : f.sealed() ? "a sealed one" : "one without that member"));
        }
        f.excused.put(node, reason);
        sealIfDone(f, index);
        save();
        return Optional.empty();
    }

    private void sealIfDone(ClusterForget f, long index) throws IOException {
        if (!f.outstanding().isEmpty()) {
            return;
        }
        String receipt = ClusterReceipt.of(group, f);
        JsonObject e = new JsonObject();
        e.addProperty("operation", f.id);
        e.add("forget", toJson(f));
        e.addProperty("receipt", receipt);
        ledger.append("FORGET_SEALED", index, e);
        f.receipt = receipt;
    }

    private void map(String clusterId, String local) {
        clusterByLocal.put(local, clusterId);
        localByCluster.put(clusterId, local);
    }

    private String group8() {
        return group.replace("-", "").substring(0, 8);
    }

    private synchronized void save() throws IOException {
        JsonObject o = new JsonObject();
        o.add("members", GSON.toJsonTree(members));
        JsonArray open = new JsonArray();
        for (ClusterForget f : forgets.values()) {
            if (!f.sealed()) {
                open.add(toJson(f));
            }
        }
        o.add("open", open);
        o.add("local", GSON.toJsonTree(clusterByLocal));
        Durable.write(file, o.toString());
    }

    private static JsonObject toJson(ClusterForget f) {
        JsonObject o = new JsonObject();
        o.addProperty("id", f.id);
        o.addProperty("index", f.index);
        o.addProperty("tenant", f.tenant);
        o.add("members", GSON.toJsonTree(f.members));
        o.add("attestations", GSON.toJsonTree(new ArrayList<>(f.attestations.values())));
        o.add("excused", GSON.toJsonTree(f.excused));
        return o;
    }

    private ClusterForget fromJson(JsonObject o) {
        ClusterForget f =
                new ClusterForget(
                        o.get("id").getAsString(),
                        o.get("index").getAsLong(),
                        o.get("tenant").getAsString(),
                        strings(o.getAsJsonArray("members")));
        for (var a : o.getAsJsonArray("attestations")) {
            Attestation at = GSON.fromJson(a, Attestation.class);
            f.attestations.put(at.node(), at);
        }
        for (var e : o.getAsJsonObject("excused").entrySet()) {
            f.excused.put(e.getKey(), e.getValue().getAsString());
        }
        return f;
    }

    private static List<String> strings(JsonArray a) {
        List<String> out = new ArrayList<>();
        a.forEach(e -> out.add(e.getAsString()));
        return List.copyOf(out);
    }
}
