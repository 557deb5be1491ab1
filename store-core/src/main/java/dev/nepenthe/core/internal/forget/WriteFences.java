package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgottenScopeException;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * The write fence every collection checks each batch against, under its writer mutex: a record
 * in the scope of a live forget (tested on its plaintext scope, in memory), with the id of a
 * record a forget removed, or deriving from one, is refused; so is one a sealed forget's keyed
 * hashes name (its subject, source or id), which is also how reconciliation finds records that
 * came back. The fences are rebuilt whole from the operations and published with one volatile
 * write, so the check takes no lock.
 */
final class WriteFences implements CollectionEngine.WriteFence {

    /** A live operation's scope (plaintext, memory only). */
    private record Active(String operation, String tenant, BiPredicate<String, VectorRecord> inScope,
            Set<String> forgottenIds) {}

    private record Fences(List<Active> active, Map<KeyedHash.Hash, String> hashed) {
        static final Fences NONE = new Fences(List.of(), Map.of());
    }

    private final ScopeHashes hashes;
    private volatile Fences fences = Fences.NONE;

    WriteFences(ScopeHashes hashes) {
        this.hashes = hashes;
    }

    @Override
    public void check(String collection, List<VectorRecord> batch) {
        Fences f = fences;
        if (f.active().isEmpty() && f.hashed().isEmpty()) {
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            VectorRecord r = batch.get(i);
            for (Active a : f.active()) {
                if (!a.tenant().equals(r.tenant())) {
                    continue;
                }
                if (a.inScope().test(collection, r)) {
                    throw new ForgottenScopeException(a.operation(), i, "it falls in the scope of a forget");
                }
                if (a.forgottenIds().contains(collection + '\0' + r.id())) {
                    throw new ForgottenScopeException(a.operation(), i, "its id is that of a forgotten record");
                }
                for (String d : r.derivedFrom()) {
                    if (a.forgottenIds().contains(collection + '\0' + d)) {
                        throw new ForgottenScopeException(a.operation(), i, "its derivedFrom names a forgotten record");
                    }
                }
            }
            if (!f.hashed().isEmpty()) {
                String op = fencedBy(f.hashed(), collection, r);
                if (op != null) {
                    throw new ForgottenScopeException(op, i, "it, or a record it derives from, was forgotten");
                }
            }
        }
    }

    /** The sealed operations' fences: keyed hash to operation id (an immutable map). */
    Map<KeyedHash.Hash, String> sealed() {
        return fences.hashed();
    }

    /** The sealed operation whose keyed-hash fences name this record (or what it derives from), or null. */
    String fencedBy(Map<KeyedHash.Hash, String> hashed, String collection, VectorRecord r) {
        if (r.subject() != null) {
            String op = hashed.get(hashes.fenceSubject(r.tenant(), r.subject()));
            if (op != null) {
                return op;
            }
        }
        if (r.source() != null) {
            String op = hashed.get(hashes.fenceSource(r.tenant(), r.source().kind(), r.source().id(), null));
            if (op == null) {
                op = hashed.get(hashes.fenceSource(r.tenant(), r.source().kind(), r.source().id(), r.source().version()));
            }
            if (op != null) {
                return op;
            }
        }
        List<String> ids = new ArrayList<>(r.derivedFrom());
        ids.add(r.id());
        for (String id : ids) {
            String op = hashed.get(hashes.fenceRecord("*", r.tenant(), id));
            if (op == null) {
                op = hashed.get(hashes.fenceRecord(collection, r.tenant(), id));
            }
            if (op != null) {
                return op;
            }
        }
        return null;
    }

    /** Rebuilds the fences from every operation and publishes them; under the protocol's monitor. */
    void refresh(Collection<LiveOperation> operations) {
        List<Active> active = new ArrayList<>();
        Map<KeyedHash.Hash, String> hashed = new HashMap<>();
        for (LiveOperation op : operations) {
            if (op.pub.state == OperationState.SEALED) {
                op.pub.fences.forEach(h -> hashed.put(h, op.pub.id));
                continue;
            }
            Set<String> forgottenIds = new HashSet<>();
            for (OperationSecret.Forgotten f : op.secret.removed) {
                forgottenIds.add(f.collection() + '\0' + f.removed().record().id());
            }
            // Capture what the predicate reads: sealing replaces the operation's secret while a
            // writer may still hold these fences.
            OperationSecret secret = op.secret;
            Filter filter = op.filter;
            BiPredicate<String, VectorRecord> inScope = (coll, r) -> LiveOperation.scopeTest(secret, coll).test(r)
                    || (filter != null && filter.test(r.metadata()));
            active.add(new Active(op.pub.id, op.pub.tenant, inScope, forgottenIds));
        }
        fences = new Fences(List.copyOf(active), Map.copyOf(hashed));
    }
}
