package dev.nepenthe.cluster.internal;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.nepenthe.core.audit.Receipt;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The receipt of a replicated forget: which replicas had to answer for it (the configuration at its
 * log index), each one's attestation (its local receipt, signed by its store key, bound to the
 * operation by its node key), the ones an operator excused and why, and what was found. Built the
 * same, byte for byte, on every replica when the last member is accounted for; it verifies offline
 * against the node and store keys a cluster ledger recorded.
 */
public final class ClusterReceipt {

    private ClusterReceipt() {}

    static String of(String group, ClusterForget f) {
        JsonObject o = new JsonObject();
        o.addProperty("kind", "nepenthe-cluster-receipt");
        o.addProperty("version", 1);
        o.addProperty("group", group);
        o.addProperty("operation", f.id);
        o.addProperty("logIndex", f.index);
        o.addProperty("tenant", f.tenant);
        JsonArray members = new JsonArray();
        f.members.forEach(members::add);
        o.add("members", members);
        JsonArray attestations = new JsonArray();
        Set<String> outcomes = new TreeSet<>();
        for (Attestation a : f.attestations.values()) {
            if (f.excused.containsKey(a.node())) {
                continue;
            }
            JsonObject j = new JsonObject();
            j.addProperty("node", a.node());
            j.addProperty("state", a.state());
            String outcome = outcome(a.localReceipt());
            j.addProperty("outcome", outcome);
            outcomes.add(outcome);
            j.addProperty("localReceipt", a.localReceipt());
            j.addProperty("signature", a.signature());
            attestations.add(j);
        }
        o.add("attestations", attestations);
        JsonArray excused = new JsonArray();
        for (Map.Entry<String, String> e : f.excused.entrySet()) {
            JsonObject j = new JsonObject();
            j.addProperty("node", e.getKey());
            j.addProperty("reason", e.getValue());
            j.addProperty(
                    "meaning",
                    "removed by an operator instead of attesting; wiped before it rejoins");
            excused.add(j);
        }
        o.add("excused", excused);
        // Replicas that found different things are not averaged into one claim.
        o.addProperty(
                "outcome",
                outcomes.size() == 1
                        ? outcomes.iterator().next()
                        : outcomes.isEmpty() ? "NONE_ATTESTED" : "MIXED");
        return o.toString();
    }

    /** The outcome a cluster receipt states. */
    static String outcomeOf(String clusterReceipt) {
        return JsonParser.parseString(clusterReceipt)
                .getAsJsonObject()
                .get("outcome")
                .getAsString();
    }

    /** The outcome a local receipt states, or UNKNOWN. */
    static String outcome(String localReceipt) {
        int cut = localReceipt.indexOf(Receipt.SEPARATOR);
        try {
            JsonObject o =
                    JsonParser.parseString(cut < 0 ? localReceipt : localReceipt.substring(0, cut))
                            .getAsJsonObject();
            JsonElement e = o.get("outcome");
            return e == null || e.isJsonNull() ? "UNKNOWN" : e.getAsString();
        } catch (RuntimeException e) {
            return "UNKNOWN";
        }
    }

    /**
     * Checks a receipt offline against the keys a cluster ledger recorded: every member is
     * accounted for once (attested SEALED or excused), every attestation's node signature verifies
     * under that node's recorded node key and binds this operation and index, and every local
     * receipt's signature verifies under that node's recorded store key.
     *
     * @param receipt the receipt's JSON
     * @param nodeKeys node id to its node key (base64 X.509)
     * @param storeKeys node id to its store key (PEM)
     * @return the problems found; empty when the receipt holds
     */
    public static List<String> verify(
            String receipt, Map<String, String> nodeKeys, Map<String, String> storeKeys) {
        List<String> problems = new ArrayList<>();
        JsonObject o;
        try {
            o = JsonParser.parseString(receipt).getAsJsonObject();
        } catch (RuntimeException e) {
            return List.of("expected a cluster receipt as JSON, got text that does not parse");
        }
        String group = o.get("group").getAsString();
        String operation = o.get("operation").getAsString();
        long index = o.get("logIndex").getAsLong();
        Set<String> accounted = new TreeSet<>();
        Set<String> outcomes = new TreeSet<>();
        for (JsonElement e : o.getAsJsonArray("attestations")) {
            JsonObject a = e.getAsJsonObject();
            String node = a.get("node").getAsString();
            Attestation at =
                    new Attestation(
                            group,
                            operation,
                            index,
                            node,
                            a.get("state").getAsString(),
                            a.get("localReceipt").getAsString(),
                            a.get("signature").getAsString());
            String nodeKey = nodeKeys.get(node);
            if (nodeKey == null) {
                problems.add(node + ": no node key recorded for it");
            } else if (!at.verifies(NodeKey.publicKey(nodeKey))) {
                problems.add(node + ": its attestation does not verify under its node key");
            }
            if (!"SEALED".equals(at.state())) {
                problems.add(node + ": attested " + at.state() + ", not SEALED");
            }
            String storeKey = storeKeys.get(node);
            if (storeKey == null) {
                problems.add(node + ": no store key recorded for it");
            } else if (Receipt.verify(at.localReceipt(), pem(storeKey)) == null) {
                problems.add(node + ": its local receipt does not verify under its store key");
            }
            if (!accounted.add(node)) {
                problems.add(node + ": attested twice");
            }
            // The envelope is not signed: what it says of an attestation must be what the signed
            // local receipt says.
            String stated = a.has("outcome") ? a.get("outcome").getAsString() : "";
            String signed = outcome(at.localReceipt());
            outcomes.add(signed);
            if (!stated.equals(signed)) {
                problems.add(
                        node
                                + ": the receipt states outcome "
                                + stated
                                + ", its signed local"
                                + " receipt "
                                + signed);
            }
        }
        String overall =
                outcomes.size() == 1
                        ? outcomes.iterator().next()
                        : outcomes.isEmpty() ? "NONE_ATTESTED" : "MIXED";
        if (!overall.equals(o.get("outcome").getAsString())) {
            problems.add(
                    "the receipt states outcome "
                            + o.get("outcome").getAsString()
                            + ", its attestations "
                            + overall);
        }
        for (JsonElement e : o.getAsJsonArray("excused")) {
            String node = e.getAsJsonObject().get("node").getAsString();
            if (!accounted.add(node)) {
                problems.add(node + ": both attested and excused");
            }
        }
        Set<String> members = new TreeSet<>();
        o.getAsJsonArray("members").forEach(m -> members.add(m.getAsString()));
        if (!accounted.equals(members)) {
            problems.add("expected every member " + members + " accounted for, got " + accounted);
        }
        return problems;
    }

    private static PublicKey pem(String pem) {
        String body =
                pem.replace("-----BEGIN PUBLIC KEY-----", "")
                        .replace("-----END PUBLIC KEY-----", "")
                        .replaceAll("\\s", "");
        try {
            return KeyFactory.getInstance("Ed25519")
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(body)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "expected a PEM Ed25519 public key, got " + pem.length() + " characters", e);
        }
    }
}
