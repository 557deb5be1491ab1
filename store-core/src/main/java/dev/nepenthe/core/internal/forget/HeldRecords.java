package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.HeldRecordsException;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The guard every plain delete passes: a legal hold keeps its records against a delete, a subject
 * delete or a collection drop exactly as it keeps them against a forget (which it stops in
 * COMPLETED_WITH_EXCEPTION, through the same lookups here). The active holds are published with one
 * volatile write whenever one is placed or lifted, so the check takes no lock, and costs nothing
 * while no hold of the tenant is active.
 */
final class HeldRecords implements CollectionEngine.DeleteGuard {

    private final ScopeHashes hashes;

    /** Active holds' keyed hashes, by tenant, each to its hold id. */
    private volatile Map<String, Map<KeyedHash.Hash, String>> active = Map.of();

    HeldRecords(ScopeHashes hashes) {
        this.hashes = hashes;
    }

    /** Publishes the holds still active among {@code holds} (the caller holds the monitor). */
    void refresh(Collection<OperationLog.StoredHold> holds) {
        Map<String, Map<KeyedHash.Hash, String>> next = new HashMap<>();
        for (OperationLog.StoredHold h : holds) {
            if (h.liftedAt() == 0) {
                next.computeIfAbsent(h.tenant(), t -> new HashMap<>()).put(h.hash(), h.id());
            }
        }
        active = next;
    }

    @Override
    public void check(String what, String tenant, String subject, List<VectorRecord> doomed) {
        if (!anyActive(tenant)) {
            return;
        }
        Set<String> holds = new TreeSet<>();
        if (subject != null) {
            addHoldsOnSubject(tenant, subject, holds);
        }
        int held = 0;
        for (VectorRecord r : doomed) {
            if (addHoldsOn(tenant, r, holds)) {
                held++;
            }
        }
        if (!holds.isEmpty()) {
            throw new HeldRecordsException(what, held, List.copyOf(holds));
        }
    }

    /** Whether any hold of the tenant is active. */
    boolean anyActive(String tenant) {
        return active.containsKey(tenant);
    }

    /** Adds to {@code out} the active hold on the tenant's subject, if any. */
    void addHoldsOnSubject(String tenant, String subject, Set<String> out) {
        addIfHeld(tenant, hashes.holdSubject(tenant, subject), out);
    }

    /** Adds to {@code out} the active hold on the tenant's source, if any. */
    void addHoldsOnSource(String tenant, String kind, String id, Set<String> out) {
        addIfHeld(tenant, hashes.holdSource(tenant, kind, id), out);
    }

    /**
     * Adds to {@code out} the active holds on the record's subject and source; returns whether any
     * holds it.
     */
    boolean addHoldsOn(String tenant, VectorRecord r, Set<String> out) {
        boolean hit = false;
        if (r.subject() != null) {
            hit |= addIfHeld(tenant, hashes.holdSubject(tenant, r.subject()), out);
        }
        if (r.source() != null) {
            hit |=
                    addIfHeld(
                            tenant,
                            hashes.holdSource(tenant, r.source().kind(), r.source().id()),
                            out);
        }
        return hit;
    }

    private boolean addIfHeld(String tenant, KeyedHash.Hash h, Set<String> out) {
        Map<KeyedHash.Hash, String> byHash = active.get(tenant);
        String id = byHash == null ? null : byHash.get(h);
        if (id != null) {
            out.add(id);
            return true;
        }
        return false;
    }
}
