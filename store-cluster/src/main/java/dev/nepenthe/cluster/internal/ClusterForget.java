package dev.nepenthe.cluster.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A replicated forget as the group's state holds it: where in the log it is, whose tenant, which
 * replicas must attest it (the configuration at its index), what each attested, which an operator
 * excused and why, and, once every one of them is accounted for by a SEALED attestation or an
 * excuse, the receipt. Held the same on every replica: only {@code localOperation} is this
 * replica's own (its store's operation id), kept apart in {@link ClusterState}.
 */
final class ClusterForget {
    final String id;
    final long index;
    final String tenant;
    final List<String> members;
    final Map<String, Attestation> attestations = new ConcurrentSkipListMap<>();
    final Map<String, String> excused = new ConcurrentSkipListMap<>();
    // Written under the state's lock, read by the attestor and the view without it.
    volatile String receipt;

    ClusterForget(String id, long index, String tenant, List<String> members) {
        this.id = id;
        this.index = index;
        this.tenant = tenant;
        this.members = List.copyOf(members);
    }

    /** A copy (the caller holds the state's lock). */
    ClusterForget copy() {
        ClusterForget c = new ClusterForget(id, index, tenant, members);
        c.attestations.putAll(attestations);
        c.excused.putAll(excused);
        c.receipt = receipt;
        return c;
    }

    /** The members neither attested SEALED nor excused. */
    List<String> outstanding() {
        return members.stream()
                .filter(m -> !excused.containsKey(m))
                .filter(m -> !"SEALED".equals(state(m)))
                .toList();
    }

    String state(String member) {
        Attestation a = attestations.get(member);
        return a == null ? null : a.state();
    }

    boolean sealed() {
        return receipt != null;
    }
}
