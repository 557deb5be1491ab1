package dev.nepenthe.cluster.chaos;

import dev.nepenthe.cluster.chaos.ChaosClients.Outcome;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every operation the workload issued in a round, with how it ended, and the model the checks after
 * healing compare the replicas with. Writes to one record id come from one worker thread, one after
 * another, and a worker never writes an id again once a write to it ended UNKNOWN (such a write may
 * still be applied much later: a replica's Raft client retries it for a long time), so for every id
 * there is at most one UNKNOWN write and it is the last one issued.
 */
final class History {

    /**
     * One write to one record.
     *
     * @param id the record's id
     * @param subject its subject
     * @param vector the upserted vector (unique to this write: it is the payload the checks
     *     compare), or null for a delete
     * @param outcome how the call ended
     * @param via the replica it went through
     */
    record Write(String id, String subject, float[] vector, Outcome outcome, String via) {
        boolean isDelete() {
            return vector == null;
        }

        @Override
        public String toString() {
            return (isDelete() ? "delete " : "upsert " + Arrays.toString(vector) + " ")
                    + outcome
                    + " via "
                    + via;
        }
    }

    /**
     * A forget of a whole subject and every call made for it (all with one idempotency key).
     *
     * @param subject the subject
     * @param key the idempotency key
     * @param calls how each call ended, in order
     * @param operation the operation's id once a call answered, else null
     */
    record Forget(String subject, String key, List<String> calls, String[] operation) {
        String operationId() {
            return operation[0];
        }
    }

    private final Map<String, List<Write>> byId = new LinkedHashMap<>();
    private final Map<String, Forget> forgets = new LinkedHashMap<>();

    synchronized void write(Write w) {
        byId.computeIfAbsent(w.id(), k -> new ArrayList<>()).add(w);
    }

    synchronized Forget forgetIssued(String subject, String key) {
        Forget f = new Forget(subject, key, new ArrayList<>(), new String[1]);
        forgets.put(subject, f);
        return f;
    }

    synchronized void forgetCall(Forget f, String outcome, String operation) {
        f.calls().add(outcome);
        if (operation != null) {
            f.operation()[0] = operation;
        }
    }

    synchronized List<Forget> forgets() {
        return List.copyOf(forgets.values());
    }

    synchronized boolean forgotten(String subject) {
        return forgets.containsKey(subject);
    }

    synchronized List<Write> writes(String id) {
        return List.copyOf(byId.getOrDefault(id, List.of()));
    }

    /** Every id written (whatever the outcome) of a subject that was never forgotten. */
    synchronized Set<String> liveIds() {
        Set<String> out = new TreeSet<>();
        byId.forEach(
                (id, ws) -> {
                    if (!forgets.containsKey(ws.getFirst().subject())) {
                        out.add(id);
                    }
                });
        return out;
    }

    /** Every id written (whatever the outcome) of a forgotten subject. */
    synchronized Set<String> forgottenIds() {
        Set<String> out = new TreeSet<>();
        byId.forEach(
                (id, ws) -> {
                    if (forgets.containsKey(ws.getFirst().subject())) {
                        out.add(id);
                    }
                });
        return out;
    }

    /**
     * What a replica may hold for an id of a subject never forgotten, once healed: the effect of
     * the last ACKED write (a vector, or null for absent after a delete or when no write was
     * acknowledged), or the effect of an UNKNOWN write issued after it. REFUSED writes had no
     * effect. Writes to one id are sequential and an UNKNOWN one is the last (see the class
     * comment), so no write issued before the last acknowledged one can land after it, and the set
     * has at most two states.
     */
    synchronized List<float[]> allowed(String id) {
        List<Write> ws = byId.getOrDefault(id, List.of());
        int lastAcked = -1;
        for (int i = 0; i < ws.size(); i++) {
            if (ws.get(i).outcome() == Outcome.ACKED) {
                lastAcked = i;
            }
        }
        List<float[]> out = new ArrayList<>();
        out.add(lastAcked < 0 ? null : ws.get(lastAcked).vector());
        for (int i = lastAcked + 1; i < ws.size(); i++) {
            if (ws.get(i).outcome() == Outcome.UNKNOWN) {
                out.add(ws.get(i).vector());
            }
        }
        return out;
    }

    /**
     * The little-endian bytes of every vector ever sent for a forgotten subject, whatever the
     * outcome: none may be left in clear in any replica's files.
     */
    synchronized List<byte[]> forgottenNeedles() {
        List<byte[]> out = new ArrayList<>();
        for (String id : forgottenIds()) {
            for (Write w : byId.get(id)) {
                if (!w.isDelete()) {
                    out.add(littleEndian(w.vector()));
                }
            }
        }
        return out;
    }

    static byte[] littleEndian(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return b.array();
    }

    synchronized String counts() {
        int[] n = new int[Outcome.values().length];
        byId.values().forEach(ws -> ws.forEach(w -> n[w.outcome().ordinal()]++));
        long unanswered = forgets.values().stream().filter(f -> f.operationId() == null).count();
        return String.format(
                "%d ids, writes acked %d / refused %d / unknown %d; %d forgets (%d unanswered"
                        + " within the workload)",
                byId.size(),
                n[Outcome.ACKED.ordinal()],
                n[Outcome.REFUSED.ordinal()],
                n[Outcome.UNKNOWN.ordinal()],
                forgets.size(),
                unanswered);
    }
}
